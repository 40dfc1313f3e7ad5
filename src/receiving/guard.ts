// The checks a received message passes before anything parses it (issue 34, item 5): its size,
// its header block, its MIME structure by byte ranges (a MIME bomb of parts or nesting is
// refused here, unread), and the trace of a forwarding loop.
import { AppError } from '../errors.ts';
import { loadRawReader, messageIdOf } from '../emails/index.ts';
import { RECEIVING_LIMITS } from './limits.ts';

type HeaderBlock = ReturnType<Awaited<ReturnType<typeof loadRawReader>>['readHeaderBlock']>;

/** What a received message's row keeps of its header block. */
export interface GuardedHeader {
  block: HeaderBlock;
  from: string | null;
  to: string[];
  subject: string;
  messageId: string | null;
}

/**
 * Checks `raw` (as received, CRLF) against the receiving limits and reads its header block:
 * message_too_large (552 5.3.4) past 25 MiB or a 100 KiB header block; invalid_request
 * (554 5.6.0) for a header line that is not a field, nesting past 20 or more than 500 parts;
 * request_validation_failed past 100 attachments.
 */
export async function guardMessage(received: Buffer): Promise<GuardedHeader & { raw: Buffer }> {
  const { addressesIn, decodeWords, normalizeLineEnds, readHeaderBlock, readStructure } = await loadRawReader();
  // Stored with every line ending in CRLF, as the relay stores mail (decisions.md, issue 33).
  const raw = normalizeLineEnds(received);
  if (raw.length > RECEIVING_LIMITS.messageBytes) {
    throw new AppError('message_too_large', 'The message is larger than 25 MiB', {
      size: raw.length,
      limit: RECEIVING_LIMITS.messageBytes,
    });
  }
  const block = readHeaderBlock(raw);
  readStructure(raw, block, {
    attachments: RECEIVING_LIMITS.attachments,
    attachmentBytes: RECEIVING_LIMITS.messageBytes,
  });
  const subject = block.fields.find((f) => f.key === 'subject')?.value.replace(/\r\n(?=[ \t])/g, '');
  return {
    raw,
    block,
    from: addressesIn(block, 'from')[0] ?? null,
    to: addressesIn(block, 'to'),
    subject: subject === undefined ? '' : decodeWords(subject.trim()),
    messageId: messageIdOf(block.fields.find((f) => f.key === 'message-id')?.value) ?? null,
  };
}

/**
 * Why the message has been round a loop, or null: more Received fields than a route of mail
 * takes (RFC 5321 section 6.3), or a Delivered-To naming one of `rcptTo` (a forward of svc's,
 * or any MTA that writes it, Postfix among them, took it to that address before).
 */
export function loopOf(h: GuardedHeader, rcptTo: string[]): string | null {
  const hops = h.block.fields.filter((f) => f.key === 'received').length;
  if (hops > RECEIVING_LIMITS.maxHops)
    return `the message has passed ${hops} hops (more than ${RECEIVING_LIMITS.maxHops})`;
  const delivered = new Set(
    h.block.fields
      .filter((f) => f.key === 'delivered-to')
      .map((f) => f.value.trim().replace(/^<|>$/g, '').toLowerCase()),
  );
  const again = rcptTo.find((r) => delivered.has(r.toLowerCase()));
  return again ? `the message was already delivered to ${again} (Delivered-To): a forwarding loop` : null;
}
