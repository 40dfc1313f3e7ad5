import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from './harness.ts';
import { b64, email, rows, runCase, type Case } from './http-helpers.ts';

// Send rules 4 and 5: custom headers and attachments are checked before any
// email is created, for TEST keys too (Authentication 4: guards apply to TEST).

const MiB = 1024 * 1024;
let env: TestEnv;
let key: string;

beforeAll(async () => {
  env = await createTestEnv();
  key = await env.key({ env: 'TEST' });
});
afterAll(() => env.close());

const att = (content_base64: string, filename = 'a.bin') => ({ filename, content_base64 });

describe('custom headers', () => {
  const reserved = [
    'From',
    'to',
    'CC',
    'bcc',
    'Reply-To',
    'SUBJECT',
    'MESSAGE-ID',
    'Date',
    'DKIM-Signature',
    'received',
    'Return-Path',
    'X-Service-Foo',
    'x-service-',
    'X-SERVICE-EVENT-ID',
    // The MIME structure, which svc writes itself (issue 26, item 6; decisions.md).
    'Content-Type',
    'MIME-Version',
    'content-transfer-encoding',
    'Content-Disposition',
    'Content-ID',
  ];
  const cases: Case[] = reserved.map((header) => ({
    name: `reserved name ${header} → 422 reserved_email_header`,
    body: email({ headers: { 'X-Fine': 'ok', [header]: 'value' } }),
    status: 422,
    code: 'reserved_email_header',
    details: { code: 'reserved_email_header', header },
  }));
  cases.push(
    {
      name: 'LF in a value → 400 invalid_header_value',
      body: email({ headers: { 'X-A': 'one\nBcc: victim@example.org' } }),
      status: 400,
      code: 'invalid_header_value',
    },
    {
      name: 'CR in a value → 400',
      body: email({ headers: { 'X-A': 'one\rtwo' } }),
      status: 400,
      code: 'invalid_header_value',
    },
    {
      name: 'CRLF in a value → 400',
      body: email({ headers: { 'X-A': 'a\r\n b' } }),
      status: 400,
      code: 'invalid_header_value',
    },
    {
      name: 'a header value over 2000 characters → 422',
      body: email({ headers: { 'X-Long': 'v'.repeat(2001) } }),
      status: 422,
      code: 'request_validation_failed',
      fields: ['headers.X-Long'],
    },
    {
      name: 'a header name over 200 characters → 422',
      body: email({ headers: { ['X-' + 'n'.repeat(199)]: 'v' } }),
      status: 422,
      code: 'request_validation_failed',
    },
    {
      name: 'more than 50 custom headers → 422',
      body: email({ headers: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`X-H${i}`, 'v'])) }),
      status: 422,
      code: 'request_validation_failed',
      fields: ['headers'],
    },
    {
      name: 'names that only look reserved are allowed',
      body: email({ headers: { 'X-Service': 'a', 'X-Serviced-By': 'b', 'From-Address': 'c', 'X-To': 'd' } }),
      status: 202,
      rows: { emails: 1 },
      check: async (res) => {
        const got = await env.server.inject({
          url: `/v1/emails/${res.json().data.id}`,
          headers: { authorization: `Bearer ${key}` },
        });
        expect(got.json().data.headers).toEqual({
          'X-Service': 'a',
          'X-Serviced-By': 'b',
          'From-Address': 'c',
          'X-To': 'd',
        });
      },
    },
    {
      name: '50 custom headers are allowed',
      body: email({ headers: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`X-H${i}`, 'v'])) }),
      status: 202,
      rows: { emails: 1 },
    },
  );
  it.each(cases)('$name', async (c) => {
    await runCase(env, key, c);
  });

  it('a reserved name wins over a bad value elsewhere in the same request (whole request rejected)', async () => {
    await runCase(env, key, {
      name: 'reserved',
      body: email({ headers: { 'Message-Id': '<x@y>' }, attachments: [att('!!!')] }),
      status: 422,
      code: 'reserved_email_header',
      details: { header: 'Message-Id' },
    });
  });
});

describe('attachments', () => {
  const cases: Case[] = [
    { name: 'not base64', body: email({ attachments: [att('not base64!')] }), status: 400, code: 'invalid_attachment' },
    { name: 'bad padding', body: email({ attachments: [att('QQ=')] }), status: 400, code: 'invalid_attachment' },
    {
      name: 'padding in the middle',
      body: email({ attachments: [att('QQ==QQ==')] }),
      status: 400,
      code: 'invalid_attachment',
    },
    {
      name: 'base64url alphabet',
      body: email({ attachments: [att('-_-_')] }),
      status: 400,
      code: 'invalid_attachment',
    },
    {
      name: 'a data: prefix',
      body: email({ attachments: [att('data:application/pdf;base64,QUJD')] }),
      status: 400,
      code: 'invalid_attachment',
    },
    {
      name: 'the second of two attachments invalid',
      body: email({ attachments: [att('QUJD'), att('%%%%')] }),
      status: 400,
      code: 'invalid_attachment',
    },
    {
      name: 'MIME line breaks (CRLF every 76) are allowed',
      body: email({ attachments: [att(b64(300).replace(/(.{76})/g, '$1\r\n'))] }),
      status: 202,
      rows: { emails: 1, attachments: 1 },
      check: async (res) => {
        const [a] = await rows<{ size: number; content: Buffer }>(
          env,
          'SELECT a.size, a.content FROM attachments a JOIN emails e ON e.seq = a.email_seq WHERE e.id = ?',
          res.json().data.id,
        );
        expect(a!.size).toBe(300);
        expect(a!.content.equals(Buffer.alloc(300, 'abc'))).toBe(true);
      },
    },
    {
      name: 'LF-only line breaks are allowed',
      body: email({ attachments: [att('QUJD\nREVG\n')] }),
      status: 202,
      rows: { emails: 1, attachments: 1 },
    },
    {
      name: 'an empty attachment is allowed',
      body: email({ attachments: [att('')] }),
      status: 202,
      rows: { emails: 1, attachments: 1 },
    },
  ];
  it.each(cases)('$name', async (c) => {
    await runCase(env, key, c);
  });

  it('strips path parts from filenames and defaults the content type', async () => {
    const res = await runCase(env, key, {
      name: 'names',
      body: email({
        attachments: [
          { filename: 'C:\\x\\a.pdf', content_base64: 'QUJD', content_type: 'application/pdf' },
          { filename: '../../etc/passwd', content_base64: 'QUJD' },
          { filename: '/abs/dir/report.csv', content_base64: 'QUJD' },
          { filename: 'plain.txt', content_base64: 'QUJD' },
        ],
      }),
      status: 202,
      rows: { emails: 1, attachments: 4 },
    });
    const stored = await rows<{ filename: string; content_type: string }>(
      env,
      `SELECT a.filename, a.content_type FROM attachments a JOIN emails e ON e.seq = a.email_seq
       WHERE e.id = ? ORDER BY a.position`,
      res.json().data.id,
    );
    expect(stored).toEqual([
      { filename: 'a.pdf', content_type: 'application/pdf' },
      { filename: 'passwd', content_type: 'application/octet-stream' },
      { filename: 'report.csv', content_type: 'application/octet-stream' },
      { filename: 'plain.txt', content_type: 'application/octet-stream' },
    ]);
  });

  it('refuses content_base64 over 14348938 characters with 422 request_validation_failed', async () => {
    const res = await runCase(env, key, {
      name: 'too long',
      body: email({ attachments: [att('A'.repeat(14_348_940))] }),
      status: 422,
      code: 'request_validation_failed',
      fields: ['attachments.0.content_base64'],
    });
    // The limit a client knows is the decoded size, not a count of base64 characters.
    expect(res.json().error.details.fields[0].message).toBe('is larger than 10 MiB per attachment');
  });

  const badTypes = [
    'text/html\r\nBcc: victim@example.org',
    'text/html\nX-A: b',
    'pdf',
    'text/',
    'a b/c',
    'text/csv; charset',
  ];
  it.each(badTypes)('refuses the content_type %j with 422 naming attachments.N.content_type', async (type) => {
    const res = await runCase(env, key, {
      name: 'bad type',
      body: email({ attachments: [att('QUJD'), { ...att('QUJD'), content_type: type }] }),
      status: 422,
      code: 'request_validation_failed',
      fields: ['attachments.1.content_type'],
    });
    expect(res.json().error.details.fields[0].message).toMatch(/MIME type/);
  });

  it('accepts a content_type with parameters, bare or quoted', async () => {
    await runCase(env, key, {
      name: 'params',
      body: email({
        attachments: [
          { ...att('QUJD'), content_type: 'text/csv; charset=utf-8' },
          { ...att('QUJD'), content_type: 'application/vnd.ms-excel;name="q 1.xls"' },
        ],
      }),
      status: 202,
      rows: { emails: 1, attachments: 2 },
    });
  });

  it('accepts one attachment of exactly 10 MiB decoded', async () => {
    await runCase(env, key, {
      name: '10 MiB',
      body: email({ attachments: [att(b64(10 * MiB))] }),
      status: 202,
      rows: { emails: 1, attachments: 1 },
    });
  });

  it('refuses one attachment of 10 MiB + 1 byte decoded with 422 attachment_too_large', async () => {
    const res = await runCase(env, key, {
      name: 'too large',
      body: email({ attachments: [att('QUJD'), att(b64(10 * MiB + 1))] }),
      status: 422,
      code: 'attachment_too_large',
    });
    expect(res.json().error.message).toBe('attachments.1 is larger than 10 MiB per attachment');
  });

  it('refuses a message over 25 MiB in total with 422 message_too_large', async () => {
    const nine = b64(9 * MiB);
    await runCase(env, key, {
      name: 'message too large',
      body: email({ attachments: [att(nine), att(nine), att(nine)] }),
      status: 422,
      code: 'message_too_large',
    });
  });

  it('counts the bodies toward the 25 MiB message size', async () => {
    const ten = b64(10 * MiB);
    await runCase(env, key, {
      name: 'bodies count',
      body: email({ text: 'x'.repeat(5 * MiB + 1), attachments: [att(ten), att(ten)] }),
      status: 422,
      code: 'message_too_large',
    });
  });
});
