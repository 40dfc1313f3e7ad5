import { AppError } from '../errors.ts';
import { LIMITS } from '../limits/index.ts';
import type { SendRequest } from './schema.ts';

/** Reserved custom header names (contract, send rule 4); any `x-service-*` too. */
const RESERVED = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'reply-to',
  'subject',
  'message-id',
  'date',
  'dkim-signature',
  'received',
  'return-path',
]);
/** RFC 5322 field name: printable ASCII except colon. */
const FIELD_NAME = /^[\x21-\x39\x3b-\x7e]+$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export interface Attachment {
  filename: string;
  content_type: string;
  content: Buffer;
  /** The part's Content-ID, without brackets, for `cid:` links (SMTP relay only; NULL from the API). */
  content_id?: string | null;
}

/**
 * True for a header of the MIME structure, which svc writes from the bodies and attachments:
 * `MIME-Version` and every `Content-*` field (RFC 2045 names them all so; the SMTP relay drops
 * the same from a relayed message). A second `Content-Type` would break the message.
 */
export function isMimeStructureHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return lower === 'mime-version' || lower.startsWith('content-');
}

/**
 * True for a header name a client may not set: the contract's reserved names (send rule 4),
 * any `x-service-*`, and the MIME structure (decisions.md). The service writes these itself.
 */
export function isReservedHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return RESERVED.has(lower) || lower.startsWith('x-service-') || isMimeStructureHeader(lower);
}

/** Checks custom headers: reserved names 422, CR/LF in a value 400 (send rule 4). */
export function checkHeaders(headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) {
    if (isReservedHeader(name)) {
      const why = isMimeStructureHeader(name) ? ': svc writes the MIME structure from the bodies and attachments' : '';
      throw new AppError('reserved_email_header', `The header ${name} is reserved${why}`, {
        code: 'reserved_email_header',
        header: name,
      });
    }
    if (!FIELD_NAME.test(name)) {
      throw new AppError('request_validation_failed', 'The request failed validation', {
        fields: [{ field: `headers.${name}`, message: 'not a valid header name', code: 'invalid_format' }],
      });
    }
    if (/[\r\n]/.test(value)) {
      throw new AppError('invalid_header_value', `The value of header ${name} contains CR or LF`, { header: name });
    }
  }
}

/** Strips path parts a client may send ("C:\\x\\a.pdf", "../a.pdf") down to the file name. */
export function baseName(filename: string): string {
  const name = filename.split(/[\\/]/).pop() ?? '';
  return name === '' || name === '.' || name === '..' ? 'attachment' : name;
}

/** Decodes and checks attachments: bad base64 400, one over 10 MiB 422 (send rule 5). */
export function decodeAttachments(items: NonNullable<SendRequest['attachments']>): Attachment[] {
  return items.map((a, i) => {
    const b64 = a.content_base64.replace(/[\r\n]/g, '');
    if (b64.length % 4 !== 0 || !BASE64.test(b64)) {
      throw new AppError('invalid_attachment', `attachments.${i}.content_base64 is not valid base64`, {
        field: `attachments.${i}.content_base64`,
      });
    }
    const content = Buffer.from(b64, 'base64');
    if (content.length > LIMITS.attachmentBytes) {
      throw new AppError('attachment_too_large', `attachments.${i} is larger than 10 MiB per attachment`, {
        field: `attachments.${i}`,
        size: content.length,
        limit: LIMITS.attachmentBytes,
      });
    }
    return { filename: baseName(a.filename), content_type: a.content_type ?? 'application/octet-stream', content };
  });
}

/** The whole message (bodies and attachments) must stay within 25 MiB. */
export function checkMessageSize(
  parts: { subject: string; html: string | null; text: string | null },
  attachments: Attachment[],
): void {
  const size =
    Buffer.byteLength(parts.subject) +
    Buffer.byteLength(parts.html ?? '') +
    Buffer.byteLength(parts.text ?? '') +
    attachments.reduce((n, a) => n + a.content.length, 0);
  if (size > LIMITS.messageBytes) {
    throw new AppError('message_too_large', 'The message is larger than 25 MiB', { size, limit: LIMITS.messageBytes });
  }
}
