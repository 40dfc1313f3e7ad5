import type { ParsedMail } from 'mailparser';

/** One recipient block of a delivery status notification (RFC 3464 §2.3). */
export interface DsnRecipient {
  /** Final-Recipient (else Original-Recipient), the address only. */
  address: string;
  /**
   * Original-Recipient, when the block has one: the ORCPT svc sent (RFC 3461), which a relay
   * passes on, so it still names svc's recipient when Final-Recipient is a forward's target.
   */
  original: string | null;
  /** failed, delayed, delivered, relayed or expanded. */
  action: string;
  /** The enhanced status code (Status), when valid. */
  status: string | null;
  /** Diagnostic-Code of type smtp: the remote server's reply. */
  diagnostic: { code: number | null; text: string } | null;
  remoteMta: string | null;
}

/** What an inbound message is, for the bounce processor. */
export type InboundReport =
  | { kind: 'dsn'; recipients: DsnRecipient[] }
  | {
      kind: 'arf';
      /** Feedback-Type (RFC 5965): abuse, fraud, virus, other, not-spam… */
      feedbackType: string;
      /** Original-Rcpt-To, when the reporter kept it. */
      originalRcptTo: string | null;
      /** The header section of the reported message (its To, Return-Path, Message-ID). */
      originalHeaders: string;
    }
  | { kind: 'auto-reply' }
  | { kind: 'other'; reason: string };

/** A report with more recipient blocks than this is not a bounce of ours (at most 50 recipients per email). */
const MAX_DSN_RECIPIENTS = 100;
const STATUS = /^[245]\.\d{1,3}\.\d{1,3}$/;
const DELIVERY_STATUS = new Set(['message/delivery-status', 'message/global-delivery-status']);

/**
 * Reads an inbound message as a DSN (multipart/report; report-type=delivery-status, or
 * the RFC 6533 global form), an auto-reply (RFC 3834 Auto-Submitted, the common
 * vacation headers), or something else. Never throws for a bad message: malformed MIME
 * is `other`.
 */
export async function readReport(raw: Buffer): Promise<InboundReport> {
  // A report bomb (thousands of MIME parts) is refused before the parser walks it.
  if (partsIn(raw) > MAX_PARTS) return { kind: 'other', reason: `more than ${MAX_PARTS} MIME parts` };
  let mail: ParsedMail;
  try {
    // mailparser (and its charset tables) loads with the first report, not with every command.
    const { simpleParser } = await import('mailparser');
    mail = await simpleParser(raw, { keepDeliveryStatus: true, skipHtmlToText: true, skipTextToHtml: true });
  } catch {
    return { kind: 'other', reason: 'not parseable as MIME' };
  }
  const feedback = mail.attachments.find((a) => a.contentType.toLowerCase() === 'message/feedback-report');
  if (feedback) return feedbackOf(feedback.content.toString('utf8'), mail);
  const status = mail.attachments.find((a) => DELIVERY_STATUS.has(a.contentType.toLowerCase()));
  if (status) {
    const recipients = parseDeliveryStatus(status.content.toString('utf8'));
    if (recipients.length === 0) return { kind: 'other', reason: 'a delivery-status part with no recipient' };
    if (recipients.length > MAX_DSN_RECIPIENTS) return { kind: 'other', reason: 'too many recipient blocks' };
    return { kind: 'dsn', recipients };
  }
  // Before the auto-reply test: MTAs mark their bounces "Auto-Submitted: auto-replied" too (Exim,
  // Postfix), and a text bounce must read as one from its sender or subject and its wording.
  const text = textBounce(mail);
  if (text.length > MAX_DSN_RECIPIENTS) return { kind: 'other', reason: 'too many recipients in a text bounce' };
  if (text.length) return { kind: 'dsn', recipients: text };
  if (isAutoReply(mail)) return { kind: 'auto-reply' };
  return { kind: 'other', reason: 'no delivery-status part' };
}

/** Bounces and reports have a handful of parts. */
const MAX_PARTS = 200;

/** Boundary lines ("--…" at a line start) in the raw message: an upper bound of its parts. */
function partsIn(raw: Buffer): number {
  let n = 0;
  for (let i = raw.indexOf('\n--'); i >= 0 && n <= MAX_PARTS; i = raw.indexOf('\n--', i + 3)) n++;
  return n;
}

const BOUNCE_SUBJECT =
  /undeliver|undelivered|delivery (?:status notification|failure|has failed)|failure notice|mail delivery failed|returned mail|delivery problem/i;
const ENHANCED_IN_TEXT = /\b([245]\.\d{1,3}\.\d{1,3})\b/;

/**
 * The plain-text bounces of MTAs that send no delivery-status part: qmail's
 * ("<a@b>:" then the reason, "This is a permanent error"), Exim's (the failed
 * addresses indented under "The following address(es) failed:", the remote reply
 * below each), Exchange's ("Diagnostic information for administrators", "Remote
 * Server returned '…'") and Gmail's ("wasn't delivered to … The response was: …"). Only in a message that reads as a bounce (its subject or a
 * MAILER-DAEMON/postmaster sender), and only permanent failures: a delay warning is
 * not a bounce.
 */
function textBounce(mail: ParsedMail): DsnRecipient[] {
  const from = mail.from?.value[0]?.address?.toLowerCase() ?? '';
  if (!BOUNCE_SUBJECT.test(mail.subject ?? '') && !/^(?:mailer-daemon|postmaster)@/.test(from)) return [];
  const body = (mail.text ?? '').replace(/\r\n/g, '\n').split(/\n-{3,} ?(?:Below this line|This is a copy)/i)[0]!;
  if (
    !/permanent(?:ly)? (?:error|fatal|failure)|could(?:n't| not) be delivered|wasn't (?:able to deliver|delivered)|failed permanently|delivery has failed/i.test(
      body,
    )
  )
    return [];
  const out: DsnRecipient[] = [];
  const failed = (address: string, reason: string) => {
    const text = reason.replace(/\s+/g, ' ').trim();
    const code = /\b([45]\d\d)[ -]/.exec(text)?.[1];
    out.push({
      address,
      original: null,
      action: 'failed',
      status: ENHANCED_IN_TEXT.exec(text)?.[1] ?? null,
      diagnostic: { code: code ? Number(code) : null, text },
      remoteMta: null,
    });
  };
  // qmail: "<a@b>:" on its own line, the reason in the lines after it.
  for (const m of body.matchAll(/^<([^<>\s]+@[^<>\s]+)>:[ \t]*\n((?:.+\n?)+)/gm)) failed(m[1]!, m[2]!);
  if (out.length) return out;
  // Exim: addresses indented under "The following address(es) failed:", their details indented deeper.
  const list = /the following address(?:es|\(es\))? failed:[ \t]*\n([\s\S]*)/i.exec(body)?.[1] ?? '';
  for (const m of list.matchAll(/^ {1,3}<?([^<>\s]+@[^<>\s]+?)>?\n((?:(?: {4,}|\t).*\n?)*)/gm)) failed(m[1]!, m[2]!);
  if (out.length) return out;
  // Exchange: under "Diagnostic information for administrators", each address, then
  // "Remote Server returned '550 5.1.1 …'" (or the older "#550 5.1.1 … ##").
  const diagnostics = /diagnostic information for administrators:?([\s\S]*)/i.exec(body)?.[1] ?? '';
  for (const m of diagnostics.matchAll(
    /^[ \t]*<?([^<>\s'"]+@[^<>\s'"]+?)>?[ \t]*\n(?:[ \t]*\n)?[ \t]*(?:Remote Server returned '([^'\n]*)'|#(\d{3}[ -][^#\n]*)#*)/gim,
  ))
    failed(m[1]!, m[2] ?? m[3]!);
  if (out.length) return out;
  // Gmail: "wasn't delivered to a@b because …", then "The response (from the remote server) was:" and the reply.
  const gmail = /wasn't delivered to ([^\s<>]+@[^\s<>]+?) because([\s\S]*)/i.exec(body);
  if (gmail) {
    const response = /the response(?: from the remote server)? was:\s*\n+((?:.+\n?)+)/i.exec(gmail[2]!)?.[1];
    failed(gmail[1]!, response ?? gmail[2]!.split(/\n\s*\n/)[0]!);
  }
  return out;
}

/** The recipient blocks of a message/delivery-status body (the per-message block is skipped). */
export function parseDeliveryStatus(body: string): DsnRecipient[] {
  const blocks = body
    .replace(/\r\n/g, '\n')
    .split(/\n[ \t]*\n/)
    .map(fieldsOf)
    .filter((f) => f.size > 0);
  const out: DsnRecipient[] = [];
  for (const f of blocks) {
    const original = addressOf(f.get('original-recipient'));
    const address = addressOf(f.get('final-recipient')) ?? original;
    const action = f.get('action')?.toLowerCase();
    if (!address || !action) continue;
    const status = f.get('status')?.split(/\s/)[0] ?? null;
    out.push({
      address,
      original,
      action,
      status: status && STATUS.test(status) ? status : null,
      diagnostic: diagnosticOf(f.get('diagnostic-code')),
      remoteMta: typed(f.get('remote-mta'))?.value ?? null,
    });
  }
  return out;
}

/** An ARF report (RFC 5965): its feedback fields and the reported message's headers. */
function feedbackOf(body: string, mail: ParsedMail): InboundReport {
  const f = fieldsOf(body.replace(/\r\n/g, '\n'));
  const original = mail.attachments.find((a) =>
    ['message/rfc822', 'text/rfc822-headers', 'message/rfc822-headers'].includes(a.contentType.toLowerCase()),
  );
  const text = original?.content.toString('utf8') ?? '';
  const end = text.search(/\r?\n\r?\n/);
  return {
    kind: 'arf',
    feedbackType: (f.get('feedback-type') ?? 'abuse').toLowerCase(),
    originalRcptTo: addressOf(f.get('original-rcpt-to')),
    originalHeaders: end < 0 ? text : text.slice(0, end),
  };
}

/** "Name: value" fields of one block, names lower-cased, folded lines joined. */
function fieldsOf(block: string): Map<string, string> {
  const fields = new Map<string, string>();
  let last: string | undefined;
  for (const line of block.split('\n')) {
    if (/^[ \t]/.test(line) && last) {
      fields.set(last, `${fields.get(last)} ${line.trim()}`);
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    last = line.slice(0, colon).trim().toLowerCase();
    if (!fields.has(last)) fields.set(last, line.slice(colon + 1).trim());
  }
  return fields;
}

/** "rfc822; user@example.com" → its type and value. */
function typed(v: string | undefined): { type: string; value: string } | null {
  if (!v) return null;
  const semi = v.indexOf(';');
  return semi < 0
    ? { type: '', value: v.trim() }
    : { type: v.slice(0, semi).trim().toLowerCase(), value: v.slice(semi + 1).trim() };
}

/** An ORCPT as sent (xtext, RFC 3461 4): "+2B" for "+". A reporter may copy it undecoded into Original-Recipient. */
export const xtextDecoded = (a: string) =>
  a.replace(/\+([0-9a-f]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));

function addressOf(v: string | undefined): string | null {
  const t = typed(v);
  const a = t?.value.replace(/^<|>$/g, '').trim();
  return a && /^[^\s@]+@[^\s@]+$/.test(a) ? a : null;
}

/** "smtp; 550 5.1.1 <a@b>: User unknown" → the reply code and the text after the type. */
function diagnosticOf(v: string | undefined): DsnRecipient['diagnostic'] {
  const t = typed(v);
  if (!t || !t.value) return null;
  const code = /^([245]\d\d)[ -]/.exec(t.value)?.[1];
  return { code: code ? Number(code) : null, text: t.value };
}

/**
 * RFC 3834's Auto-Submitted (anything but "no"), and the headers vacation responders
 * send instead: X-Autoreply, X-Autorespond, Precedence auto_reply, Microsoft's
 * X-Auto-Response-Suppress with an "Automatic reply" subject.
 */
function isAutoReply(mail: ParsedMail): boolean {
  const h = (name: string) => {
    const v = mail.headers.get(name);
    return typeof v === 'string' ? v.toLowerCase() : v === undefined ? undefined : JSON.stringify(v).toLowerCase();
  };
  const submitted = h('auto-submitted');
  if (submitted && !submitted.startsWith('no')) return true;
  if (h('x-autoreply') !== undefined || h('x-autorespond') !== undefined) return true;
  if (h('precedence') === 'auto_reply') return true;
  return /^(?:auto(?:matic)?[ -]?reply|out of (?:the )?office|abwesend|r[ée]ponse automatique)\b/i.test(
    mail.subject ?? '',
  );
}
