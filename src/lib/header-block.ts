/**
 * The header block of an RFC 5322 message or MIME part, read as byte ranges: what a message
 * passed through as written needs of it (src/emails/raw.ts reads it for the send rules,
 * src/delivery/raw-out.ts edits it on the way out) without parsing the message into objects.
 */

/** One field of a header block: its name as written, where its bytes are, and its value unfolded. */
export interface HeaderField {
  name: string;
  /** The name in lower case. */
  key: string;
  /** Byte offsets of the whole field in the message, its line breaks included. */
  start: number;
  end: number;
  /** The value unfolded (CRLF before white space removed), trimmed, read as UTF-8 (RFC 6532). */
  value: string;
}

export interface HeaderBlock {
  fields: HeaderField[];
  /** Where the empty line that ends the block starts (the end of the last field). */
  end: number;
  /** Where the body starts: after that empty line, or the message's end when it has none. */
  bodyStart: number;
}

/** Why a header block could not be read: `line` is where the offending line starts. */
export class HeaderBlockError extends Error {
  readonly kind: 'too_large' | 'not_a_field';
  readonly line: number;
  constructor(kind: 'too_large' | 'not_a_field', line: number) {
    super(kind === 'too_large' ? 'the header block is too large' : 'a line of the header block is not a header field');
    this.kind = kind;
    this.line = line;
  }
}

const SP = 0x20;
const HT = 0x09;

/** RFC 5322 field name: printable ASCII except the colon. */
const FIELD_NAME = /^[\x21-\x39\x3b-\x7e]+$/;

/**
 * Reads the header block that starts at `start` (CRLF line ends): each field with its byte
 * range and unfolded value, up to the empty line or `limit`. A line that is neither a field
 * nor a continuation, or a block longer than `maxBytes`, throws HeaderBlockError.
 */
export function readHeaderBlock(raw: Buffer, start = 0, limit = raw.length, maxBytes = Infinity): HeaderBlock {
  const fields: HeaderField[] = [];
  let pos = start;
  let current: { start: number; nameEnd: number; name: string } | null = null;
  const close = (end: number) => {
    if (!current) return;
    const value = unfold(raw.toString('utf8', current.nameEnd + 1, end));
    fields.push({ name: current.name, key: current.name.toLowerCase(), start: current.start, end, value });
    current = null;
  };
  while (pos < limit) {
    const eol = raw.indexOf('\r\n', pos);
    const lineEnd = eol === -1 || eol >= limit ? limit : eol;
    const next = lineEnd === limit ? limit : lineEnd + 2;
    if (next - start > maxBytes) throw new HeaderBlockError('too_large', pos);
    if (lineEnd === pos) {
      close(pos);
      return { fields, end: pos, bodyStart: next };
    }
    const first = raw[pos];
    if (first === SP || first === HT) {
      if (!current) throw new HeaderBlockError('not_a_field', pos);
    } else {
      close(pos);
      const colon = raw.indexOf(0x3a, pos);
      const name = colon === -1 || colon > lineEnd ? '' : raw.toString('latin1', pos, colon).trimEnd();
      if (!FIELD_NAME.test(name)) throw new HeaderBlockError('not_a_field', pos);
      current = { start: pos, nameEnd: colon, name };
    }
    pos = next;
  }
  close(limit);
  return { fields, end: limit, bodyStart: limit };
}

const unfold = (v: string) => v.replace(/\r\n(?=[ \t])/g, '').trim();

/** The first field named `key` (lower case), or undefined. */
export const fieldOf = (block: HeaderBlock, key: string): HeaderField | undefined =>
  block.fields.find((f) => f.key === key);
