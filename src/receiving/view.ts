// A received message as an app wants it (issue 34, item 3): the addresses, the header fields,
// the text and HTML as written, the reply text, and the attachments (inline below a size,
// else by link). Parsed with mailparser when a webhook body or the API's view is built.
import type { AddressObject, ParsedMail } from 'mailparser';
import { AS_WRITTEN } from '../emails/index.ts';
import { replyTextOf } from './reply-text.ts';

export interface ReceivedAddress {
  address: string;
  /** '' when none. */
  name: string;
}

export interface ReceivedAttachment {
  /** Its place among the message's attachments, 0 first: the same for the same bytes (download links name it). */
  index: number;
  filename: string | null;
  content_type: string;
  /** Decoded bytes. */
  size: number;
  /** Without the angle brackets. */
  content_id: string | null;
  disposition: 'attachment' | 'inline';
  /** The bytes, when at most `inlineMaxBytes`. */
  content_base64?: string;
  /** Otherwise, where to download them. */
  url?: string;
}

export interface ReceivedView {
  from: ReceivedAddress | null;
  to: ReceivedAddress[];
  cc: ReceivedAddress[];
  reply_to: ReceivedAddress[];
  subject: string;
  message_id: string | null;
  in_reply_to: string | null;
  references: string[];
  date: string | null;
  /** Every header field in order: its name as written, its value unfolded and RFC 2047 decoded. */
  headers: { name: string; value: string }[];
  text: string | null;
  html: string | null;
  reply_text: string | null;
  attachments: ReceivedAttachment[];
}

const parse = async (raw: Buffer): Promise<ParsedMail> => {
  // Loaded with the first message, not at start (mailparser compiles its link finder on import).
  const { simpleParser } = await import('mailparser');
  return simpleParser(raw, AS_WRITTEN);
};

const addresses = (a: AddressObject | AddressObject[] | undefined): ReceivedAddress[] =>
  (Array.isArray(a) ? a : a ? [a] : [])
    .flatMap((o) => o.value)
    .flatMap((m) => (m.group ? m.group : [m]))
    .filter((m) => m.address)
    .map((m) => ({ address: m.address!, name: m.name ?? '' }));

const bare = (id: string | undefined) => (id ? id.trim().replace(/^<|>$/g, '') : null);

/** A text part with no file name and no disposition (a calendar alternative) is a body, as in raw-view.ts. */
const isAttachment = (a: ParsedMail['attachments'][number]) =>
  !/^text\//i.test(a.contentType) || Boolean(a.filename) || Boolean(a.contentDisposition);

/** The header fields as written, unfolded, encoded words decoded. */
function headerLines(mail: ParsedMail): { name: string; value: string }[] {
  return mail.headerLines.map((h) => {
    const colon = h.line.indexOf(':');
    const name = colon > 0 ? h.line.slice(0, colon) : h.key;
    const value = colon > 0 ? h.line.slice(colon + 1) : '';
    return { name, value: decode(value.replace(/\r?\n[ \t]/g, ' ').trim()) };
  });
}

let decodeWords: ((s: string) => string) | undefined;
function decode(s: string): string {
  if (!s.includes('=?') || !decodeWords) return s;
  try {
    return decodeWords(s);
  } catch {
    return s;
  }
}

/**
 * The date the Date field gives, ISO; null when it is missing or unreadable (mailparser puts the
 * time of parsing there instead, which an app would take for the sender's).
 */
function dateOf(headers: { name: string; value: string }[]): string | null {
  const field = headers.find((h) => h.name.toLowerCase() === 'date');
  const date = field ? new Date(field.value) : undefined;
  return date && !Number.isNaN(date.getTime()) ? date.toISOString() : null;
}

/**
 * What an app's webhook gets of a received message: its addresses, threading fields, header
 * fields, text, HTML, reply text and attachments (inline up to `inlineMaxBytes`, else a link).
 */
export async function readReceived(
  raw: Buffer,
  opts: { inlineMaxBytes: number; attachmentUrl: (index: number) => string },
): Promise<ReceivedView> {
  const libmime = (await import('libmime')).default;
  decodeWords ??= (s) => libmime.decodeWords(s);
  const mail = await parse(raw);
  const html = mail.html === false ? null : (mail.html ?? null);
  // With skipHtmlToText, an HTML-only message has an empty text: it had no text part.
  const text = html !== null && !mail.text ? null : (mail.text ?? null);
  const refs = mail.references;
  const headers = headerLines(mail);
  return {
    from: addresses(mail.from)[0] ?? null,
    to: addresses(mail.to),
    cc: addresses(mail.cc),
    reply_to: addresses(mail.replyTo),
    subject: mail.subject ?? '',
    message_id: bare(mail.messageId),
    in_reply_to: bare(mail.inReplyTo),
    references: (Array.isArray(refs) ? refs : refs ? [refs] : []).map((r) => bare(r)!).filter(Boolean),
    date: dateOf(headers),
    headers,
    text,
    html,
    reply_text: text === null ? null : replyTextOf(text),
    attachments: mail.attachments.filter(isAttachment).map((a, index) => {
      const small = a.content.length <= opts.inlineMaxBytes;
      return {
        index,
        filename: a.filename ?? null,
        content_type: a.contentType,
        size: a.content.length,
        content_id: bare(a.cid),
        disposition: a.contentDisposition === 'inline' ? 'inline' : a.cid && a.related ? 'inline' : 'attachment',
        ...(small ? { content_base64: a.content.toString('base64') } : { url: opts.attachmentUrl(index) }),
      };
    }),
  };
}

/** One attachment's bytes, by the index readReceived gives it; undefined when there is none there. */
export async function attachmentOf(
  raw: Buffer,
  index: number,
): Promise<{ filename: string | null; content_type: string; content: Buffer } | undefined> {
  const a = (await parse(raw)).attachments.filter(isAttachment)[index];
  return a && { filename: a.filename ?? null, content_type: a.contentType, content: a.content };
}
