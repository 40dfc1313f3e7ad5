import { createPrivateKey, type KeyObject } from 'node:crypto';
import MailComposer from 'nodemailer/lib/mail-composer';
import DKIM from 'nodemailer/lib/dkim';
import type { DeliveryJob } from './job.ts';

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
  if (!job.dkim) return raw;
  const signer = new DKIM({
    domainName: job.dkim.domain,
    keySelector: job.dkim.selector,
    privateKey: keyObject(job.dkim.privateKeyPem),
  });
  return streamToBuffer(signer.sign(raw));
}
