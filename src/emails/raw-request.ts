import addressparser from 'nodemailer/lib/addressparser';
import { AppError } from '../errors.ts';
import { LIMITS } from '../limits/index.ts';
import { parseInput } from '../validation.ts';
import { decodeWords, fieldOf, normalizeLineEnds, readHeaderBlock, readStructure, type HeaderBlock } from './raw.ts';
import { rawFieldsSchema, type RawFields } from './schema.ts';
import { listedHeaders, messageIdOf, type Envelope } from './header-fields.ts';

/** A message read for the send rules: the fields they check, the client's Message-ID, its header block. */
export interface RawRequest {
  fields: RawFields;
  messageId: string | null;
  block: HeaderBlock;
}

/**
 * Reads what the send rules need of a message passed through as written (issue 33): its header
 * block and its MIME structure (raw.ts), never its bodies. The envelope decides who receives,
 * as in any MTA: To and Cc keep the header addresses that are also envelope recipients, every
 * other envelope recipient becomes a bcc, and a header address outside the envelope is not
 * sent to (docs/decisions.md, "SMTP relay").
 */
export function readRawRequest(raw: Buffer, envelope: Envelope): RawRequest {
  const block = readHeaderBlock(raw);
  readStructure(raw, block);
  const inEnvelope = new Map(envelope.rcptTo.map((a) => [a.toLowerCase(), a]));
  const taken = new Set<string>();
  const pick = (list: string[]) =>
    list.filter((a) => {
      const k = a.toLowerCase();
      if (!inEnvelope.has(k) || taken.has(k)) return false;
      taken.add(k);
      return true;
    });
  const to = pick(addressesIn(block, 'to'));
  const cc = pick(addressesIn(block, 'cc'));
  const bcc = [...inEnvelope].filter(([k]) => !taken.has(k)).map(([, a]) => a);
  if (to.length === 0) {
    throw new AppError(
      'invalid_request',
      'The To header names none of the envelope recipients; svc needs at least one To recipient',
    );
  }
  const sender = senderOf(block);
  const from = sender?.address || envelope.mailFrom;
  if (!from) throw new AppError('invalid_request', 'The message has no From header and no envelope sender');
  const { headers, tags, unsubscribe, scheduledAt } = listedHeaders(block.fields);
  const subject = fieldOf(block, 'subject');
  const replyTo = addressesIn(block, 'reply-to');
  const fields = parseInput(rawFieldsSchema, {
    from,
    from_name: sender?.name ? decodeWords(sender.name) : null,
    to,
    cc: cc.length ? cc : null,
    bcc: bcc.length ? bcc : null,
    reply_to: replyTo.length ? replyTo : null,
    subject: subject ? decodeWords(subject.value) : '',
    headers,
    tags,
    ...(unsubscribe === undefined ? {} : { one_click_unsubscribe: unsubscribe }),
    ...(scheduledAt === undefined ? {} : { scheduled_at: scheduledAt }),
  });
  return { fields, messageId: messageIdOf(fieldOf(block, 'message-id')?.value), block };
}

/** What the receiving checks read of a message as written (receiving/guard.ts). */
export { decodeWords, normalizeLineEnds, readHeaderBlock, readStructure, type HeaderBlock } from './raw.ts';

/**
 * A received message a route forwards (issue 34): sent as written to `to` from `forwarder`, the
 * route's address, whose domain signs. Unlike a relayed message, its header fields are not
 * the send's: the To is the original's (the targets are the envelope), its From a stranger's,
 * and its own fields stay in its bytes. Its structure was checked at receipt (receiving/guard.ts).
 */
export function readForwardRequest(raw: Buffer, forwarder: string, to: string[]): RawRequest {
  const block = readHeaderBlock(raw);
  const subject = fieldOf(block, 'subject');
  const fields = parseInput(rawFieldsSchema, {
    from: forwarder,
    from_name: null,
    to,
    subject: subject ? decodeWords(subject.value) : '',
    headers: {},
    tags: ['forwarded'],
  });
  return { fields, messageId: messageIdOf(fieldOf(block, 'message-id')?.value), block };
}

/**
 * The one mailbox of the message's From, or undefined when it has no From field (delivery then
 * writes one from the envelope sender). RFC 5322 allows one From field; a second one, a second
 * mailbox or a From with no address is refused: svc checks and signs for one domain, and a
 * reader that shows another From would show an address no one verified.
 */
function senderOf(block: HeaderBlock): { name: string; address: string } | undefined {
  const fields = block.fields.filter((f) => f.key === 'from');
  if (fields.length === 0) return undefined;
  if (fields.length > 1) throw new AppError('invalid_request', 'The message has more than one From field');
  const mailboxes = mailboxesIn(block, 'from');
  if (mailboxes.length !== 1 || !mailboxes[0]!.address) {
    throw new AppError('invalid_request', 'The From field must name exactly one address');
  }
  return mailboxes[0];
}

/** Every address of the message's fields named `key` (all of them: a message may repeat To), groups flattened. */
export function addressesIn(block: HeaderBlock, key: string): string[] {
  return mailboxesIn(block, key)
    .map((m) => m.address)
    .filter(Boolean);
}

function mailboxesIn(block: HeaderBlock, key: string): { name: string; address: string }[] {
  return block.fields
    .filter((f) => f.key === key)
    .flatMap((f) => addressparser(f.value, { flatten: true }) as { name: string; address: string }[]);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** POST /v1/emails/raw's `raw`: base64 (line breaks allowed) of at most 25 MiB. */
export function decodeRaw(b64: string): Buffer {
  const clean = b64.replace(/[\r\n]/g, '');
  if (clean.length % 4 !== 0 || !BASE64.test(clean)) {
    throw new AppError('request_validation_failed', 'The request failed validation', {
      fields: [{ field: 'raw', message: 'must be the message as base64', code: 'invalid_format' }],
    });
  }
  const raw = Buffer.from(clean, 'base64');
  if (raw.length > LIMITS.messageBytes) {
    throw new AppError('message_too_large', 'The message is larger than 25 MiB', {
      size: raw.length,
      limit: LIMITS.messageBytes,
    });
  }
  return raw;
}

/** Without an envelope, a message goes to every address of its To, Cc and Bcc fields (as `sendmail -t`). */
export function headerRecipientsOf(raw: Buffer): string[] {
  const block = readHeaderBlock(raw);
  return ['to', 'cc', 'bcc'].flatMap((k) => addressesIn(block, k));
}

/**
 * The message as svc stores it: every line ending in CRLF (normalizeLineEnds), still within the
 * 25 MiB a message may have once its bare line ends are made CRLF.
 */
export function asStored(raw: Buffer): Buffer {
  const stored = normalizeLineEnds(raw);
  if (stored.length > LIMITS.messageBytes) {
    throw new AppError('message_too_large', 'The message is larger than 25 MiB once its line ends are CRLF', {
      size: stored.length,
      limit: LIMITS.messageBytes,
    });
  }
  return stored;
}
