import { readHeaderBlock } from '../lib/header-block.ts';
import type { DeliveryJob } from './job.ts';

/**
 * Fields svc takes out of a message passed through (issue 33): Bcc and Resent-Bcc, which name the hidden
 * recipients to everyone (RFC 5322 section 3.6.3 leaves its removal to the sender's system, and
 * svc's recipients are in the envelope), Return-Path, which the receiving server writes (RFC 5321
 * section 4.4), and svc's own X-Service-* instructions, which were for svc.
 */
const dropped = (key: string) =>
  key === 'bcc' || key === 'resent-bcc' || key === 'return-path' || key.startsWith('x-service-');

/** RFC 5322 date-time, as nodemailer writes it for a composed message. */
const rfc5322Date = (iso: string) => new Date(iso).toUTCString().replace(/GMT$/, '+0000');

/**
 * The message a client wrote, as it goes out (before the DKIM signature): every field and
 * every byte of the body as written, but for the fields taken out (`dropped`); after the
 * client's fields, those svc must add: From (from the envelope sender, when the message had
 * none), Message-ID and Date when missing, and svc's own headers of this copy (one-click
 * unsubscribe's, unless the client wrote List-Unsubscribe: build-job.ts).
 */
export function prepareRaw(job: DeliveryJob & { raw: Uint8Array }): Buffer {
  const raw = Buffer.from(job.raw.buffer, job.raw.byteOffset, job.raw.byteLength);
  const block = readHeaderBlock(raw);
  const pieces: Buffer[] = [];
  let pos = 0;
  const has = new Set<string>();
  for (const f of block.fields) {
    has.add(f.key);
    if (!dropped(f.key)) continue;
    pieces.push(raw.subarray(pos, f.start));
    pos = f.end;
  }
  pieces.push(raw.subarray(pos, block.end));
  const added: string[] = [];
  if (!has.has('from')) added.push(`From: ${job.from_email}`);
  if (!has.has('message-id')) added.push(`Message-ID: <${job.message_id}>`);
  if (!has.has('date')) added.push(`Date: ${rfc5322Date(job.date)}`);
  for (const [name, value] of Object.entries(job.headers)) added.push(`${name}: ${value}`);
  if (added.length) {
    // A message that is all header block, without a final line break, gets one before the new fields.
    const kept = pieces.findLast((p) => p.length > 0);
    if (block.end === raw.length && kept && kept[kept.length - 1] !== 0x0a) pieces.push(Buffer.from('\r\n'));
    pieces.push(Buffer.from(added.map((line) => `${line}\r\n`).join('')));
  }
  pieces.push(raw.subarray(block.end));
  return Buffer.concat(pieces);
}

/** What a message passed through asks of the MAIL FROM command. */
export interface MailParams {
  /** A byte outside 7-bit ASCII anywhere: BODY=8BITMIME (RFC 6152). */
  eightBit: boolean;
  /** One in the header block (UTF-8 fields, RFC 6532): SMTPUTF8 too (RFC 6531 section 3.4). */
  utf8: boolean;
}

/** The MAIL FROM parameters `message` needs (a DKIM-Signature first, then the client's header block). */
export function mailParamsOf(message: Buffer): MailParams {
  const first = firstHighByte(message);
  if (first === -1) return { eightBit: false, utf8: false };
  const blockEnd = message.indexOf('\r\n\r\n');
  return { eightBit: true, utf8: blockEnd === -1 || first < blockEnd };
}

function firstHighByte(message: Buffer): number {
  for (let i = 0; i < message.length; i++) if (message[i]! > 0x7f) return i;
  return -1;
}
