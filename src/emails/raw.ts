import libmime from 'libmime';
import { AppError } from '../errors.ts';
import { LIMITS } from '../limits/index.ts';
import { fieldOf, HeaderBlockError, readHeaderBlock as readBlock, type HeaderBlock } from '../lib/header-block.ts';

export { fieldOf, type HeaderBlock, type HeaderField } from '../lib/header-block.ts';

/**
 * A message as its client wrote it (issue 33): the SMTP relay and POST /v1/emails/raw store
 * these bytes and delivery sends them, adding only what svc must. What the send rules need is
 * read here without building the message's tree: the header block, field by field, and the
 * MIME structure as byte ranges (part sizes and the attachment count), bodies untouched.
 */

const CR = 0x0d;
const LF = 0x0a;
const SP = 0x20;
const HT = 0x09;

/**
 * The message with every line ending in CRLF: a bare LF or a bare CR in DATA ends a line, as
 * Postfix's smtpd reads it (docs/decisions.md, "SMTP relay: messages pass through"). The
 * stored and delivered message then has one meaning to every reader; without a bare line end
 * the bytes are returned as they are.
 */
export function normalizeLineEnds(raw: Buffer): Buffer {
  if (!hasBareLineEnd(raw)) return raw;
  const out = Buffer.allocUnsafe(raw.length * 2);
  let n = 0;
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i]!;
    if (b === CR) {
      out[n++] = CR;
      out[n++] = LF;
      if (raw[i + 1] === LF) i++;
    } else if (b === LF) {
      out[n++] = CR;
      out[n++] = LF;
    } else out[n++] = b;
  }
  return out.subarray(0, n);
}

function hasBareLineEnd(raw: Buffer): boolean {
  for (let i = raw.indexOf(LF); i !== -1; i = raw.indexOf(LF, i + 1)) if (raw[i - 1] !== CR) return true;
  for (let i = raw.indexOf(CR); i !== -1; i = raw.indexOf(CR, i + 1)) if (raw[i + 1] !== LF) return true;
  return false;
}

/**
 * Reads the header block that starts at `start` (CRLF line ends, normalizeLineEnds) for the send
 * rules: a line that is neither a field nor a continuation is refused with a reply that quotes
 * it, as is a block over LIMITS.rawHeaderBytes.
 */
export function readHeaderBlock(raw: Buffer, start = 0, limit = raw.length): HeaderBlock {
  try {
    return readBlock(raw, start, limit, LIMITS.rawHeaderBytes);
  } catch (e) {
    if (!(e instanceof HeaderBlockError)) throw e;
    if (e.kind === 'too_large') {
      throw new AppError('message_too_large', `The header block is larger than ${LIMITS.rawHeaderBytes / 1024} KiB`, {
        limit: LIMITS.rawHeaderBytes,
      });
    }
    const line = raw.toString('utf8', e.line, Math.min(raw.indexOf('\r\n', e.line) >>> 0, e.line + 60));
    throw new AppError('invalid_request', `The header block has a line that is not a header field: "${line}"`);
  }
}

/** Encoded words (RFC 2047) of a header value decoded: the Subject and the names of addresses. */
export function decodeWords(value: string): string {
  try {
    return libmime.decodeWords(value);
  } catch {
    return value;
  }
}

/** A Content-Type or Content-Disposition value: its token in lower case and its parameters (RFC 2231 joined). */
export function headerValue(value: string | undefined): { value: string; params: Record<string, string> } {
  if (!value) return { value: '', params: {} };
  const parsed = libmime.parseHeaderValue(value);
  return { value: parsed.value.toLowerCase(), params: parsed.params };
}

/** What the send rules read of a message's MIME structure. */
export interface Structure {
  /** Leaf parts that are attachments: a disposition of `attachment`, a file name, or a type that is not text. */
  attachments: number;
}

/** Nesting deeper than this is refused before anything else is read: no client nests mail so. */
const MAX_DEPTH = 20;
/** More parts than this in one message are refused (a MIME bomb). */
const MAX_PARTS = 500;

/** How many attachments a message may have, and how large each may be decoded. */
export interface StructureLimits {
  attachments: number;
  attachmentBytes: number;
}

/** A send's (contract rule 5). */
const SEND_LIMITS: StructureLimits = { attachments: LIMITS.attachments, attachmentBytes: LIMITS.attachmentBytes };

/**
 * Walks the MIME structure below a message's header block by boundaries, as byte ranges, and
 * applies the contract's limits (rule 5: at most LIMITS.attachments attachments, each at most
 * LIMITS.attachmentBytes decoded) and a ceiling on nesting and parts. Bodies are not decoded:
 * a base64 part's size is its characters × 3/4, any other part's its encoded size.
 */
export function readStructure(raw: Buffer, block: HeaderBlock, limits: StructureLimits = SEND_LIMITS): Structure {
  const state = { attachments: 0, parts: 0, limits };
  walk(raw, block, raw.length, 0, state);
  if (state.attachments > limits.attachments) {
    throw new AppError('request_validation_failed', 'The request failed validation', {
      fields: [
        {
          field: 'attachments',
          message: `at most ${limits.attachments} attachments; the message has ${state.attachments}`,
          code: 'too_big',
        },
      ],
    });
  }
  return { attachments: state.attachments };
}

function walk(
  raw: Buffer,
  block: HeaderBlock,
  end: number,
  depth: number,
  state: { attachments: number; parts: number; limits: StructureLimits },
) {
  if (++state.parts > MAX_PARTS) {
    throw new AppError('invalid_request', `The message has more than ${MAX_PARTS} MIME parts`);
  }
  if (depth > MAX_DEPTH)
    throw new AppError('invalid_request', `The message nests MIME parts more than ${MAX_DEPTH} deep`);
  const type = headerValue(fieldOf(block, 'content-type')?.value);
  const boundary = type.value.startsWith('multipart/') ? type.params.boundary : undefined;
  if (boundary) {
    for (const [from, to] of partsOf(raw, block.bodyStart, end, boundary)) {
      walk(raw, readHeaderBlock(raw, from, to), to, depth + 1, state);
    }
    return;
  }
  const disposition = headerValue(fieldOf(block, 'content-disposition')?.value);
  const named = disposition.params.filename ?? type.params.name;
  const textual = type.value === '' || type.value.startsWith('text/');
  if (!(disposition.value === 'attachment' || named || !textual)) return;
  state.attachments++;
  const encoding = fieldOf(block, 'content-transfer-encoding')?.value.toLowerCase();
  const limit = state.limits.attachmentBytes;
  const size = decodedSize(raw, block.bodyStart, end, encoding === 'base64', limit);
  if (size > limit) {
    const mib = Math.round((limit / 1024 / 1024) * 10) / 10;
    throw new AppError('attachment_too_large', `The attachment ${named ?? type.value} is larger than ${mib} MiB`, {
      field: 'attachments',
      size,
      limit,
    });
  }
}

/** The decoded size of a part's body; for base64, its characters other than white space × 3/4, less its padding. */
function decodedSize(raw: Buffer, from: number, to: number, base64: boolean, limit: number): number {
  const encoded = to - from;
  if (!base64) return encoded;
  if ((encoded * 3) / 4 <= limit) return Math.floor((encoded * 3) / 4);
  let chars = 0;
  let padding = 0;
  for (let i = from; i < to; i++) {
    const b = raw[i];
    if (b === CR || b === LF || b === 0x20 || b === 0x09) continue;
    chars++;
    padding = b === 0x3d ? padding + 1 : 0;
  }
  return Math.floor((chars * 3) / 4) - padding;
}

/**
 * The byte ranges of a multipart body's parts (RFC 2046 section 5.1.1): between delimiter lines
 * `--boundary` (with optional white space after it), up to the close delimiter `--boundary--`;
 * the CRLF before a delimiter belongs to it. Without a close delimiter the last part runs to
 * the end, as readers take it.
 */
function partsOf(raw: Buffer, from: number, to: number, boundary: string): [number, number][] {
  const dash = Buffer.from(`--${boundary}`);
  const within = raw.subarray(0, to);
  const parts: [number, number][] = [];
  let partStart = -1;
  let at = raw.subarray(from, from + dash.length).equals(dash) ? from : -1;
  let search = from;
  for (;;) {
    if (at === -1) {
      // Searched within this part only: a boundary that never comes must not scan the rest of the message.
      const found = within.indexOf(`\r\n--${boundary}`, search);
      if (found === -1) break;
      at = found + 2;
    }
    const after = at + dash.length;
    const closing = raw[after] === 0x2d && raw[after + 1] === 0x2d;
    let eol = closing ? after + 2 : after;
    while (raw[eol] === SP || raw[eol] === HT) eol++;
    const lineOk = closing || (raw[eol] === CR && raw[eol + 1] === LF) || eol >= to;
    if (lineOk) {
      if (partStart !== -1) parts.push([partStart, at === from ? at : at - 2]);
      if (closing) return parts;
      partStart = Math.min(eol + 2, to);
    }
    search = after;
    at = -1;
  }
  if (partStart !== -1 && partStart < to) parts.push([partStart, to]);
  return parts;
}
