import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from './harness.ts';
import { call, rows, runCase, type Case } from './http-helpers.ts';

// POST /v1/emails/raw (issue 33): a message its client built, sent as written, with the rules,
// limits and idempotency of POST /v1/emails. A rejected request creates nothing.

let env: TestEnv;
let key: string;

beforeAll(async () => {
  env = await createTestEnv();
  key = await env.key({ env: 'TEST' });
});
afterAll(() => env.close());

const MESSAGE = [
  'From: "Shop" <shop@example.com>',
  'To: a@example.net, "B" <b@example.net>',
  'Cc: c@example.net',
  'Bcc: hidden@example.net',
  'Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?=',
  'X-Service-Tags: orders',
  'MIME-Version: 1.0',
  'Content-Type: text/plain; charset=utf-8',
  'Content-Transfer-Encoding: 8bit',
  '',
  'Hällo  there,  two spaces stay. ',
  '',
].join('\r\n');
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const raw = (message: string | Buffer = MESSAGE, over: Record<string, unknown> = {}) => ({
  url: '/v1/emails/raw',
  body: { raw: b64(message), ...over },
});

describe('POST /v1/emails/raw', () => {
  it('accepts a message as written: recipients from To, Cc and Bcc, its fields in the API view, its bytes stored', async () => {
    const res = await runCase(env, key, { name: 'raw', ...raw(), status: 202, rows: { emails: 1, recipients: 4 } });
    const id = res.json().data.id as string;
    expect(res.json().data).toMatchObject({ status: 'SIMULATED', skipped_recipients: [] });
    const got = await env.app.emails.get(env.init.project_id, id);
    expect(got).toMatchObject({
      from_email: 'shop@example.com',
      from_name: 'Shop',
      to_emails: ['a@example.net', 'b@example.net'],
      cc_emails: ['c@example.net'],
      bcc_emails: ['hidden@example.net'],
      subject: 'Grüße',
      text_body: 'Hällo  there,  two spaces stay. \n',
      html_body: null,
      tags: ['orders'],
      source: 'API',
    });
    const [stored] = await rows<{ raw_message: Buffer }>(
      env,
      'SELECT b.raw_message FROM email_bodies b JOIN emails e ON e.seq = b.email_seq WHERE e.id = ?',
      id,
    );
    expect(stored!.raw_message.equals(Buffer.from(MESSAGE))).toBe(true);
  });

  it('sends to the given recipients only, and the body overrides the message’s tags', async () => {
    const res = await call(env, key, raw(MESSAGE, { recipients: ['b@example.net', 'extra@example.org'], tags: ['x'] }));
    expect(res.statusCode, res.body).toBe(202);
    const got = await env.app.emails.get(env.init.project_id, res.json().data.id);
    expect(got).toMatchObject({ to_emails: ['b@example.net'], cc_emails: null, bcc_emails: ['extra@example.org'] });
    expect(got.tags).toEqual(['x']);
  });

  it('makes bare LF line ends CRLF', async () => {
    const res = await call(env, key, raw('From: shop@example.com\nTo: a@example.net\nSubject: lf\n\nline 1\nline 2\n'));
    expect(res.statusCode, res.body).toBe(202);
    const [stored] = await rows<{ raw_message: Buffer }>(
      env,
      'SELECT b.raw_message FROM email_bodies b JOIN emails e ON e.seq = b.email_seq WHERE e.id = ?',
      res.json().data.id,
    );
    expect(stored!.raw_message.toString()).toBe(
      'From: shop@example.com\r\nTo: a@example.net\r\nSubject: lf\r\n\r\nline 1\r\nline 2\r\n',
    );
  });

  it('replays a repeat with the same Idempotency-Key, and refuses another body under it', async () => {
    const headers = { 'idempotency-key': 'raw-1' };
    const first = await call(env, key, { ...raw(), headers });
    expect(first.statusCode).toBe(202);
    const again = await call(env, key, { ...raw(), headers });
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().data.id).toBe(first.json().data.id);
    const other = await call(env, key, { ...raw(MESSAGE.replace('orders', 'other')), headers });
    expect([other.statusCode, other.json().error.code]).toEqual([422, 'idempotency_key_reused']);
  });

  const attachment = (i: number, bytes = 10) =>
    [
      '--b1',
      `Content-Type: application/octet-stream; name="f${i}.bin"`,
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.alloc(bytes, i).toString('base64'),
    ].join('\r\n');
  const mixed = (parts: string[]) =>
    [
      'From: shop@example.com',
      'To: a@example.net',
      'Subject: files',
      'Content-Type: multipart/mixed; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/plain',
      '',
      'see attached',
      ...parts,
      '--b1--',
      '',
    ].join('\r\n');

  const refused: Case[] = [
    {
      name: 'raw missing',
      url: '/v1/emails/raw',
      body: {},
      status: 422,
      code: 'request_validation_failed',
      fields: ['raw'],
    },
    {
      name: 'raw not base64',
      url: '/v1/emails/raw',
      body: { raw: 'not base64!' },
      status: 422,
      code: 'request_validation_failed',
      fields: ['raw'],
    },
    {
      name: 'an unknown field',
      ...raw(MESSAGE, { from: 'x@example.com' }),
      status: 422,
      code: 'request_validation_failed',
      fields: ['from'],
    },
    {
      name: 'no From and no envelope sender',
      ...raw('To: a@example.net\r\nSubject: x\r\n\r\nx\r\n'),
      status: 400,
      code: 'invalid_request',
    },
    {
      name: 'two From fields',
      ...raw('From: shop@example.com\r\nFrom: ceo@bank.example\r\nTo: a@example.net\r\n\r\nx\r\n'),
      status: 400,
      code: 'invalid_request',
    },
    {
      name: 'two mailboxes in From',
      ...raw('From: shop@example.com, ceo@bank.example\r\nTo: a@example.net\r\n\r\nx\r\n'),
      status: 400,
      code: 'invalid_request',
    },
    {
      name: 'a From with no address',
      ...raw('From: Bank Support\r\nTo: a@example.net\r\n\r\nx\r\n'),
      status: 400,
      code: 'invalid_request',
    },
    {
      name: 'a message over 25 MiB once its bare LF line ends are CRLF',
      ...raw(`From: shop@example.com\r\nTo: a@example.net\r\n\r\n${'x\n'.repeat(9 * 1024 * 1024)}`),
      status: 422,
      code: 'message_too_large',
    },
    {
      name: 'a header line that is not a field',
      ...raw('From: shop@example.com\r\nTo: a@example.net\r\nnot a field\r\n\r\nx\r\n'),
      status: 400,
      code: 'invalid_request',
    },
    {
      name: 'a header block over 100 KiB',
      ...raw(`From: shop@example.com\r\nTo: a@example.net\r\nX-Big: ${'x'.repeat(103_000)}\r\n\r\nx\r\n`),
      status: 422,
      code: 'message_too_large',
    },
    {
      name: 'a To of 51 addresses',
      ...raw(
        `From: shop@example.com\r\nTo: ${Array.from({ length: 51 }, (_, i) => `r${i}@example.net`).join(', ')}\r\n\r\nx\r\n`,
      ),
      status: 422,
      code: 'request_validation_failed',
      fields: ['to'],
    },
    {
      name: '11 attachments',
      ...raw(mixed(Array.from({ length: 11 }, (_, i) => attachment(i)))),
      status: 422,
      code: 'request_validation_failed',
      fields: ['attachments'],
    },
    {
      name: 'an attachment over 10 MiB',
      ...raw(mixed([attachment(1, 10 * 1024 * 1024 + 1)])),
      status: 422,
      code: 'attachment_too_large',
    },
    {
      name: 'parts nested 21 deep',
      ...raw(
        'From: shop@example.com\r\nTo: a@example.net\r\n' +
          Array.from(
            { length: 22 },
            (_, i) => `Content-Type: multipart/mixed; boundary="n${i}"\r\n\r\n--n${i}\r\n`,
          ).join('') +
          'Content-Type: text/plain\r\n\r\ndeep\r\n',
      ),
      status: 400,
      code: 'invalid_request',
    },
  ];
  it.each(refused)('refuses $name with a clear error, creating nothing', async (c) => {
    await runCase(env, key, c);
  });

  it('takes 10 attachments', async () => {
    const res = await call(env, key, raw(mixed(Array.from({ length: 10 }, (_, i) => attachment(i)))));
    expect(res.statusCode, res.body).toBe(202);
    const files = await env.app.emails.attachments(env.init.project_id, res.json().data.id);
    expect(files.map((f) => [f.filename, f.size])).toEqual(Array.from({ length: 10 }, (_, i) => [`f${i}.bin`, 10]));
  });

  it('is in the OpenAPI document', async () => {
    const doc = (await call(env, null, { url: '/v1/openapi.json' })).json();
    expect(doc.paths['/v1/emails/raw'].post.operationId).toBe('sendRawEmail');
  });
});
