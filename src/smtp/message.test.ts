import { describe, expect, it } from 'vitest';
import { sendRequestSchema } from '../emails/index.ts';
import { parseMessage } from './message.ts';

/** A message with a text part and one attachment whose part header is `partType`. */
const withAttachment = (partType: string) =>
  Buffer.from(
    [
      'From: app@example.com',
      'To: ada@example.org',
      'Subject: Report',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain',
      '',
      'See attached.',
      '--b',
      `Content-Type: ${partType}`,
      'Content-Disposition: attachment; filename="report.pdf"',
      'Content-Transfer-Encoding: base64',
      '',
      'aGVsbG8=',
      '--b--',
      '',
    ].join('\r\n'),
  );
const envelope = { mailFrom: 'app@example.com', rcptTo: ['ada@example.org'] };

describe('a relayed attachment', () => {
  it('keeps a valid Content-Type', async () => {
    const { request } = await parseMessage(withAttachment('application/pdf; name="report.pdf"'), envelope);
    expect(request.attachments).toMatchObject([{ filename: 'report.pdf', content_type: 'application/pdf' }]);
    expect(sendRequestSchema.safeParse(request).success).toBe(true);
  });

  // Mail clients write odd part types; the message is still the client's to send, so svc
  // labels the part as bytes (RFC 2045 5.2's default for an unknown type) rather than refuse it.
  it.each(['pdf', 'application/', 'text/html bcc'])(
    'is sent as application/octet-stream when its type is %s',
    async (type) => {
      const { request } = await parseMessage(withAttachment(type), envelope);
      expect(request.attachments).toMatchObject([{ filename: 'report.pdf', content_type: 'application/octet-stream' }]);
      expect(sendRequestSchema.safeParse(request).success).toBe(true);
    },
  );
});
