import type { AddressObject, EmailAddress, ParsedMail } from 'mailparser';
import { AppError } from '../errors.ts';
import { AS_WRITTEN, isMimeType, listedHeaders, messageIdOf, type Envelope } from '../emails/index.ts';

export type { Envelope };

/** A relayed message as the send use case takes it: the API's request body, the client's Message-ID and Content-IDs. */
export interface RelayedMessage {
  request: Record<string, unknown>;
  messageId: string | null;
  /** Per attachment of `request`, in order: its Content-ID without brackets, or null. */
  contentIds: (string | null)[];
}

/**
 * Parses a message as received (mailparser) and maps it with its envelope (toSendRequest).
 * Runs on the main thread: in worker threads it cost twice the CPU (docs/performance.md).
 */
export async function parseMessage(raw: Buffer, envelope: Envelope): Promise<RelayedMessage> {
  // Loaded with the first message, not at start: mailparser compiles its link finder on import.
  const { simpleParser } = await import('mailparser');
  let mail: ParsedMail;
  try {
    mail = await simpleParser(raw, AS_WRITTEN);
  } catch {
    throw new AppError('invalid_request', 'The message could not be parsed as MIME');
  }
  return toSendRequest(mail, envelope);
}

/**
 * Maps a parsed message and its envelope into the request `POST /v1/emails` takes
 * (design/style.md: the relay "maps the parsed message into the same request").
 *
 * The envelope decides who receives, as in any MTA: To and Cc keep the header
 * addresses that are also envelope recipients, every other envelope recipient
 * becomes a bcc (never shown in a header), and a header address that is not in
 * the envelope is not sent to (docs/decisions.md, "SMTP relay").
 */
export function toSendRequest(mail: ParsedMail, envelope: Envelope): RelayedMessage {
  const inEnvelope = new Map(envelope.rcptTo.map((a) => [a.toLowerCase(), a]));
  const taken = new Set<string>();
  const pick = (list: string[]) =>
    list.filter((a) => {
      const k = a.toLowerCase();
      if (!inEnvelope.has(k) || taken.has(k)) return false;
      taken.add(k);
      return true;
    });
  const to = pick(addressesOf(mail.to));
  const cc = pick(addressesOf(mail.cc));
  const bcc = [...inEnvelope].filter(([k]) => !taken.has(k)).map(([, a]) => a);
  if (to.length === 0) {
    throw new AppError(
      'invalid_request',
      'The To header names none of the envelope recipients; svc needs at least one To recipient',
    );
  }
  const sender = mail.from?.value.find((v) => v.address);
  const from = sender?.address ?? envelope.mailFrom;
  if (!from) throw new AppError('invalid_request', 'The message has no From header and no envelope sender');
  const { headers, tags, unsubscribe, scheduledAt } = customHeaders(mail);
  const html = mail.html === false ? null : mail.html;
  // With skipHtmlToText, an HTML-only message has an empty text: it had no text part.
  const text = html !== null && !mail.text ? null : (mail.text ?? '');
  const request: Record<string, unknown> = {
    from,
    from_name: sender?.name ? sender.name : null,
    to,
    cc: cc.length ? cc : null,
    bcc: bcc.length ? bcc : null,
    reply_to: mail.replyTo ? addressesOf(mail.replyTo) : null,
    subject: mail.subject ?? '',
    html,
    text,
    headers,
    tags,
    ...(unsubscribe === undefined ? {} : { one_click_unsubscribe: unsubscribe }),
    ...(scheduledAt === undefined ? {} : { scheduled_at: scheduledAt }),
    attachments: mail.attachments.map((a, i) => ({
      filename: a.filename ?? `attachment-${i + 1}`,
      // An odd part type is the client's slip, not a reason to refuse its message: the part
      // goes as bytes, RFC 2045's default for a type svc cannot name (the API refuses it instead).
      content_type: isMimeType(a.contentType) ? a.contentType : 'application/octet-stream',
      content_base64: a.content.toString('base64'),
    })),
  };
  return {
    request,
    messageId: messageIdOf(mail.messageId),
    contentIds: mail.attachments.map((a) => contentIdOf(a.cid)),
  };
}

/** Every address of an address header, groups flattened. */
function addressesOf(field: AddressObject | AddressObject[] | undefined): string[] {
  const out: string[] = [];
  const walk = (list: EmailAddress[]) => {
    for (const v of list) {
      if (v.group) walk(v.group);
      else if (v.address) out.push(v.address);
    }
  };
  for (const o of Array.isArray(field) ? field : field ? [field] : []) walk(o.value);
  return out;
}

/** The message's own headers that svc carries over, in their written case, unfolded; the first of repeats. */
function customHeaders(mail: ParsedMail) {
  return listedHeaders(
    mail.headerLines.map(({ key, line }) => {
      const colon = line.indexOf(':');
      const value = line
        .slice(colon + 1)
        .replace(/\r?\n(?=[ \t])/g, '')
        .trim();
      return { name: line.slice(0, colon).trim(), key, value };
    }),
  );
}

/** A part's Content-ID as svc can write it back in a header: printable ASCII, no brackets, or null. */
function contentIdOf(cid: string | undefined): string | null {
  const id = cid?.trim().replace(/^<|>$/g, '');
  return id && id.length <= 255 && /^[\x21-\x3b\x3d\x3f-\x7e]+$/.test(id) ? id : null;
}
