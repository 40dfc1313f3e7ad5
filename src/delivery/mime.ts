import { createPrivateKey, type KeyObject } from 'node:crypto';
import MailComposer from 'nodemailer/lib/mail-composer';
import MessageParser from 'nodemailer/lib/dkim/message-parser';
import RelaxedBody from 'nodemailer/lib/dkim/relaxed-body';
import dkimSign from 'nodemailer/lib/dkim/sign';
import type { DeliveryJob, DkimKey } from './job.ts';

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

/** Builds the RFC 5322 message with nodemailer's composer and DKIM-signs it (d = the From domain). */
export async function buildMessage(job: DeliveryJob): Promise<Buffer> {
  const mail = new MailComposer({
    from: job.from_name ? { name: job.from_name, address: job.from_email } : job.from_email,
    to: job.to,
    ...(job.cc?.length ? { cc: job.cc } : {}),
    ...(job.reply_to?.length ? { replyTo: job.reply_to } : {}),
    subject: job.subject,
    ...(job.html !== null ? { html: job.html } : {}),
    ...(job.text !== null ? { text: job.text } : {}),
    messageId: `<${job.message_id}>`,
    date: new Date(job.date),
    headers: job.headers,
    attachments: job.attachments.map((a) => ({
      filename: a.filename,
      contentType: a.content_type,
      content: Buffer.from(a.content),
    })),
  });
  const raw = await streamToBuffer(mail.compile().createReadStream());
  return job.dkim ? signDkim(raw, job.dkim) : raw;
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
 * nodemailer's DKIM signer (its header parser, relaxed body hash and signature
 * header): the same bytes as `new DKIM(...).sign(raw)`, without running the
 * whole message through three streams. Like that signer, a key that cannot sign
 * leaves the message unsigned.
 */
function signDkim(raw: Buffer, key: DkimKey): Buffer {
  const end = headerEnd(raw);
  const rawHeaders = raw.subarray(0, end);
  const headers = MessageParser.prototype.parseHeaders.call({ rawHeaders } as MessageParser);
  const relaxed = new RelaxedBody({ hashAlgo: 'sha256' });
  let bodyHash = '';
  relaxed.once('hash', (h: string) => (bodyHash = h));
  relaxed.updateHash(raw.subarray(end));
  relaxed._flush(() => {});
  const field = dkimSign(headers, 'sha256', bodyHash, {
    domainName: key.domain,
    keySelector: key.selector,
    privateKey: keyObject(key.privateKeyPem),
  });
  return field ? Buffer.concat([Buffer.from(field + '\r\n'), raw]) : raw;
}
