import { createHash, createPrivateKey, randomUUID, type KeyObject } from 'node:crypto';
import { Encoder as Base64Encoder } from 'nodemailer/lib/base64';
import MailComposer from 'nodemailer/lib/mail-composer';
import type MimeNode from 'nodemailer/lib/mime-node';
import { Encoder as QpEncoder } from 'nodemailer/lib/qp';
import MessageParser from 'nodemailer/lib/dkim/message-parser';
import RelaxedBody from 'nodemailer/lib/dkim/relaxed-body';
import dkimSign from 'nodemailer/lib/dkim/sign';
import { ed25519Field, signedFieldsOf } from './dkim-ed25519.ts';
import type { DeliveryJob, DkimKey } from './job.ts';
import { prepareRaw } from './raw-out.ts';

// Node re-parses a PEM on every signature; a parsed KeyObject doubles signing throughput (benchmarks.md).
const keys = new Map<string, KeyObject>();
function keyObject(pem: string): KeyObject {
  let k = keys.get(pem);
  if (!k) keys.set(pem, (k = createPrivateKey(pem)));
  return k;
}

function streamToBuffer(stream: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/**
 * Builds the RFC 5322 message with nodemailer's composer, or takes the client's as written
 * (raw-out.ts), and DKIM-signs it (d = the From domain); `warn` hears of a signature left out
 * (an Ed25519 key that cannot sign).
 */
export async function buildMessage(job: DeliveryJob, warn: (message: string) => void = () => {}): Promise<Buffer> {
  if (job.raw) {
    const raw = prepareRaw({ ...job, raw: job.raw });
    return job.dkim ? signDkim(raw, job.dkim, warn) : raw;
  }
  const mail = new MailComposer({
    from: job.from_name ? { name: job.from_name, address: job.from_email } : job.from_email,
    to: job.to,
    ...(job.cc?.length ? { cc: job.cc } : {}),
    ...(job.reply_to?.length ? { replyTo: job.reply_to } : {}),
    subject: job.subject,
    ...(job.html !== null ? { html: job.html } : {}),
    ...(job.text !== null ? { text: job.text } : {}),
    messageId: `<${job.message_id}>`,
    // Each part would otherwise draw its own 8 random bytes (a synchronous randomBytes call
    // per part, ~11 % of composing); randomUUID takes its bytes from a cached pool.
    baseBoundary: randomUUID().replaceAll('-', ''),
    date: new Date(job.date),
    headers: job.headers,
    attachments: job.attachments.map((a) => ({
      filename: a.filename,
      contentType: a.content_type,
      content: Buffer.from(a.content),
      ...(a.content_id ? { cid: a.content_id } : {}),
    })),
  });
  const root = mail.compile();
  const report = reportTypeOf(job);
  if (report) root.setHeader('Content-Type', `multipart/report; report-type="${report}"`);
  const raw = serialize(root) ?? (await streamToBuffer(root.createReadStream()));
  return job.dkim ? signDkim(raw, job.dkim, warn) : raw;
}

/**
 * A TLS report by mail (RFC 8460 section 5.3) must be `multipart/report; report-type="tlsrpt"`
 * (RFC 6522): a message that labels itself one (the TLS-Report-Domain header) and carries the
 * report (an `application/tlsrpt+…` attachment) gets that root type in place of multipart/mixed.
 */
function reportTypeOf(job: Pick<DeliveryJob, 'headers' | 'attachments'>): string | null {
  const labelled = Object.keys(job.headers).some((h) => h.toLowerCase() === 'tls-report-domain');
  return labelled && job.attachments.some((a) => /^application\/tlsrpt\+(gzip|json)$/i.test(a.content_type))
    ? 'tlsrpt'
    : null;
}

/** What `serialize` reads of a MimeNode beyond its typings (nodemailer/lib/mime-node). */
interface NodeInternals {
  _raw?: unknown;
  _transforms?: unknown[];
  _processFuncs?: unknown[];
}

const isInMemory = (c: unknown): c is string | Buffer => typeof c === 'string' || Buffer.isBuffer(c);

/** Whether `serialize` can write this tree: every content in memory, no raw parts, no stream transforms. */
function serializable(node: MimeNode): boolean {
  const n = node as unknown as NodeInternals;
  // Private fields of nodemailer's MimeNode: if a release renames them, the stream writes the message.
  if (n._raw || n._transforms?.length !== 0 || n._processFuncs?.length !== 0 || node.newline) return false;
  if (node.content && !isInMemory(node.content)) return false;
  return node.childNodes.every(serializable);
}

/** Runs one of nodemailer's encoder streams over a whole body in one synchronous pass. */
function encodeWhole(encoder: QpEncoder | Base64Encoder, body: Buffer, out: Buffer[]): void {
  encoder.push = (chunk: unknown, encoding?: BufferEncoding) => {
    out.push(typeof chunk === 'string' ? Buffer.from(chunk, encoding ?? 'latin1') : (chunk as Buffer));
    return true;
  };
  // The stream hands its Transform a Buffer chunk with the encoding 'buffer'.
  encoder._transform(body, 'buffer' as BufferEncoding, () => {});
  encoder._flush(() => {});
}

function writeNode(node: MimeNode, out: Buffer[]): void {
  // As nodemailer's MimeNode#stream: the header block (which sets `multipart`, the boundary
  // and the Content-Transfer-Encoding header), the encoded content, then each child. The
  // stream asks for the transfer encoding before the header block, which computes it again
  // (a scan of the whole text); asked after it, the answer is the header just set.
  out.push(Buffer.from(node.buildHeaders() + '\r\n\r\n'));
  const transferEncoding = node.getTransferEncoding();
  const content = node.content as string | Buffer | undefined;
  if (content) {
    const body = typeof content === 'string' ? Buffer.from(content) : content;
    if (transferEncoding === 'base64') encodeWhole(new Base64Encoder(), body, out);
    else if (transferEncoding === 'quoted-printable')
      // As in MimeNode#stream: outside of text a lone CR or LF is data, not a line break.
      encodeWhole(new QpEncoder({ binary: !/^text\//i.test(node.contentType ?? '') }), body, out);
    else out.push(body);
  }
  if (!node.multipart) return;
  node.childNodes.forEach((child, i) => {
    out.push(Buffer.from(`${i ? '\r\n' : ''}--${node.boundary as string}\r\n`));
    writeNode(child, out);
  });
  out.push(Buffer.from(`\r\n--${node.boundary as string}--\r\n`));
}

/**
 * The bytes of `root.createReadStream()`, written in one synchronous walk of the
 * composer's tree: the same header blocks (MimeNode#buildHeaders), the same
 * encoders (nodemailer's QP and base64 streams, fed each body as the one chunk
 * the stream feeds them), the same boundaries and final line break, without the
 * dozen streams, pipelines and event-loop turns per message that cost more
 * than the rest of composing. Null for a tree it does not cover (a raw part, a
 * body read from a stream, a file or a URL), which the stream then writes.
 */
export function serialize(root: MimeNode): Buffer | null {
  if (!serializable(root)) return null;
  const out: Buffer[] = [];
  writeNode(root, out);
  const last = out.findLast((b) => b.length > 0)!;
  const lastByte = last[last.length - 1];
  // nodemailer's LastNewline: the message ends with a line break.
  if (lastByte === 0x0d) out.push(Buffer.from('\n'));
  else if (lastByte !== 0x0a) out.push(Buffer.from('\r\n'));
  return Buffer.concat(out);
}

/** Index just past the empty line that ends the header block, found as nodemailer's MessageParser finds it. */
function headerEnd(raw: Buffer): number {
  for (let i = 1; i < raw.length; i++) {
    if (raw[i] === 0x0a && (raw[i - 1] === 0x0a || (i > 1 && raw[i - 1] === 0x0d && raw[i - 2] === 0x0a))) return i + 1;
  }
  return raw.length;
}

/**
 * DKIM-signs a composed message in one synchronous pass, with the pieces of
 * nodemailer's DKIM signer (its header parser and signature header) and the
 * body hash below: the same bytes as `new DKIM(...).sign(raw)`, without running the
 * whole message through three streams. An RSA key that cannot be read throws: the
 * message is not sent unsigned while its email says it was signed. With an Ed25519 key
 * too (RFC 8463), a second signature over the same header fields and the same body hash
 * goes below the RSA one: a verifier that reads only the topmost signature, or knows no
 * Ed25519, still finds RSA first. An Ed25519 key that cannot sign (a damaged row) leaves
 * that signature out, said through `warn`: RSA alone authenticates the message, as it
 * does for every receiver that knows no Ed25519.
 */
/**
 * nodemailer's signed fields (RFC 4871 5.5, its default) plus List-Unsubscribe-Post: RFC 8058
 * section 4 requires both List-Unsubscribe fields under the signature for one-click to count.
 */
const DKIM_FIELDS =
  'From:Sender:Reply-To:Subject:Date:Message-ID:To:Cc:MIME-Version:Content-Type:Content-Transfer-Encoding:' +
  'Content-ID:Content-Description:Resent-Date:Resent-From:Resent-Sender:Resent-To:Resent-Cc:Resent-Message-ID:' +
  'In-Reply-To:References:List-Id:List-Help:List-Unsubscribe:List-Unsubscribe-Post:List-Subscribe:List-Post:' +
  'List-Owner:List-Archive:OTP-Token';

function signDkim(raw: Buffer, key: DkimKey, warn: (message: string) => void): Buffer {
  const end = headerEnd(raw);
  const rawHeaders = raw.subarray(0, end);
  const headers = MessageParser.prototype.parseHeaders.call({ rawHeaders } as MessageParser);
  const bodyHash = relaxedBodyHash(raw.subarray(end));
  const field = dkimSign(headers, 'sha256', bodyHash, {
    domainName: key.domain,
    keySelector: key.selector,
    privateKey: keyObject(key.privateKeyPem),
    headerFieldNames: DKIM_FIELDS,
  });
  if (!field) return raw;
  let ed: string | undefined;
  if (key.ed25519) {
    try {
      ed = ed25519Field(headers, { ...key.ed25519, domain: key.domain, bodyHash, fieldNames: signedFieldsOf(field) });
    } catch (e) {
      const why = (e as Error).message;
      warn(`the Ed25519 DKIM key ${key.ed25519.selector} of ${key.domain} cannot sign (${why}): sent with RSA only`);
    }
  }
  return Buffer.concat([Buffer.from(field + '\r\n' + (ed ? ed + '\r\n' : '')), raw]);
}

/**
 * SHA-256 (base64) of a body in DKIM's relaxed canonicalization (RFC 6376, 3.4.4):
 * whitespace runs become one space, whitespace at a line's end goes, every line ends
 * in CRLF (a bare LF ends a line, a CR not before LF is content), empty lines at the
 * end go, and a non-empty body ends with CRLF. The same hash as nodemailer's
 * RelaxedBody stream (mime.test.ts checks them against each other on random bodies),
 * in a few passes of native regular expressions over the whole body instead of a
 * JavaScript loop per byte: 15 µs for the benchmark's 4 KB body instead of 24–27.
 * Those passes hold a few copies of the body as strings, so a body over
 * REGEX_HASH_MAX_BYTES (a large attachment) goes through nodemailer's stream, which
 * hashes in constant memory.
 */
export function relaxedBodyHash(body: Buffer): string {
  if (body.length > REGEX_HASH_MAX_BYTES) return streamedRelaxedHash(body);
  const canonical = body
    .toString('latin1')
    // Only what changes is matched: a single space between words, the common case, is not.
    .replace(/[ \t]{2,}|\t/g, ' ')
    .replace(/ \r?\n|(?<!\r)\n/g, '\r\n')
    .replace(/ $/, '')
    .replace(/(?:\r\n)+$/, '');
  return createHash('sha256')
    .update(canonical.length ? canonical + '\r\n' : '', 'latin1')
    .digest('base64');
}

/** Bodies up to this size are hashed with regular expressions (relaxedBodyHash). */
export const REGEX_HASH_MAX_BYTES = 1024 * 1024;

/** What nodemailer's stream canonicalizes at a time: its working buffer is twice this. */
const STREAM_PIECE_BYTES = 64 * 1024;

function streamedRelaxedHash(body: Buffer): string {
  const relaxed = new RelaxedBody({ hashAlgo: 'sha256' });
  let hash = '';
  relaxed.once('hash', (h: string) => (hash = h));
  for (let i = 0; i < body.length; i += STREAM_PIECE_BYTES) {
    relaxed.updateHash(body.subarray(i, i + STREAM_PIECE_BYTES));
  }
  relaxed._flush(() => {});
  return hash;
}
