import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from './harness.ts';
import { addrs, email, rows, runCase, type Case } from './http-helpers.ts';

// POST /v1/emails: every EmailSendRequest rule and limit of the contract.
// A rejected request creates nothing; an accepted one exactly one email.

let env: TestEnv;
let key: string;

beforeAll(async () => {
  env = await createTestEnv();
  key = await env.key({ env: 'TEST' });
});
afterAll(() => env.close());

const x = (n: number, c = 'x') => c.repeat(n);
const invalid = (name: string, over: Record<string, unknown>, fields: string[]): Case => ({
  name,
  body: email(over),
  status: 422,
  code: 'request_validation_failed',
  fields,
});

describe('POST /v1/emails rejects a request that breaks a rule (422, nothing created)', () => {
  const cases: Case[] = [
    invalid('from missing', { from: undefined }, ['from']),
    invalid('from not an address', { from: 'not-an-email' }, ['from']),
    invalid('to missing', { to: undefined }, ['to']),
    invalid('to empty', { to: [] }, ['to']),
    invalid('to a string, not an array', { to: 'a@example.net' }, ['to']),
    invalid('to 51 addresses', { to: addrs(51) }, ['to']),
    invalid('to.0 not an address', { to: ['nope'] }, ['to.0']),
    invalid('to.1 not an address', { to: ['ok@example.net', 'nope'] }, ['to.1']),
    invalid('cc 51 addresses', { cc: addrs(51, 'c') }, ['cc']),
    invalid('bcc 51 addresses', { bcc: addrs(51, 'b') }, ['bcc']),
    invalid('cc.2 not an address', { cc: addrs(2, 'c').concat('bad@') }, ['cc.2']),
    invalid('to+cc+bcc = 51', { to: addrs(20), cc: addrs(20, 'c'), bcc: addrs(11, 'b') }, ['to']),
    invalid('to+cc = 51', { to: addrs(1), cc: addrs(50, 'c') }, ['to']),
    invalid('reply_to 11 addresses', { reply_to: addrs(11, 'rt') }, ['reply_to']),
    invalid('reply_to.0 not an address', { reply_to: ['x'] }, ['reply_to.0']),
    invalid('tags 11 items', { tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }, ['tags']),
    invalid('tag of 33 characters', { tags: ['ok', x(33)] }, ['tags.1']),
    invalid('subject of 999 characters', { subject: x(999) }, ['subject']),
    invalid('subject with LF', { subject: 'a\nBcc: victim@example.org' }, ['subject']),
    invalid('subject with CR', { subject: 'a\rb' }, ['subject']),
    invalid('subject with CRLF', { subject: 'a\r\nb' }, ['subject']),
    invalid('from_name of 201 characters', { from_name: x(201) }, ['from_name']),
    invalid('template slug of 101 characters', { template: x(101, 'a'), subject: undefined, text: undefined }, [
      'template',
    ]),
    invalid('template slug with capitals', { template: 'Welcome', subject: undefined, text: undefined }, ['template']),
    invalid(
      'attachments 11 items',
      { attachments: Array.from({ length: 11 }, () => ({ filename: 'a.txt', content_base64: 'QQ==' })) },
      ['attachments'],
    ),
    invalid('attachment without filename', { attachments: [{ content_base64: 'QQ==' }] }, ['attachments.0.filename']),
    invalid('attachment filename empty', { attachments: [{ filename: '', content_base64: 'QQ==' }] }, [
      'attachments.0.filename',
    ]),
    invalid('attachment filename of 256 characters', { attachments: [{ filename: x(256), content_base64: 'QQ==' }] }, [
      'attachments.0.filename',
    ]),
    invalid(
      'attachment content_type of 256 characters',
      {
        attachments: [{ filename: 'a', content_type: x(256), content_base64: 'QQ==' }],
      },
      ['attachments.0.content_type'],
    ),
    invalid('attachment without content_base64', { attachments: [{ filename: 'a.txt' }] }, [
      'attachments.0.content_base64',
    ]),
    invalid('no subject without template', { subject: undefined }, ['subject']),
    invalid('subject null without template', { subject: null }, ['subject']),
    invalid('neither html nor text without template', { text: undefined }, ['html']),
    invalid('html and text both null', { text: null, html: null }, ['html']),
    invalid(
      'html together with template',
      { template: 'welcome', html: '<p>x</p>', subject: undefined, text: undefined },
      ['html'],
    ),
    invalid('variables without template', { variables: { a: 1 } }, ['variables']),
    invalid('header value not a string', { headers: { 'X-Num': 5 } }, ['headers.X-Num']),
    invalid('header name with a colon', { headers: { 'X:Bad': 'v' } }, ['headers.X:Bad']),
    { name: 'body is an array', body: [email()], status: 422, code: 'request_validation_failed', fields: [''] },
  ];

  it.each(cases)('$name', async (c) => {
    await runCase(env, key, c);
  });

  it('lists every failing field at once, with field, message and code', async () => {
    const res = await runCase(env, key, {
      name: 'many',
      body: { from: 'x', to: ['y'], tags: [x(40)] },
      status: 422,
      code: 'request_validation_failed',
      fields: ['from', 'to.0', 'tags.0', 'subject', 'html'],
    });
    for (const f of res.json().error.details.fields)
      expect(Object.keys(f).sort()).toEqual(['code', 'field', 'message']);
  });
});

// Issue 35, item 5 (decisions.md, "Names where users type them"): the forms client libraries of
// other services take are refused with the exact fields to send instead, never guessed at.
describe('POST /v1/emails names what to send in place of "Name <address>" and a single recipient string', () => {
  const messageOf = async (over: Record<string, unknown>, field: string) => {
    const res = await runCase(env, key, invalid(field, over, [field]));
    const fields = res.json<{ error: { details: { fields: { field: string; message: string }[] } } }>().error.details
      .fields;
    return fields.find((f) => f.field === field)!.message;
  };

  it('from: "Ada Lovelace <ada@example.com>" → from and from_name', async () => {
    expect(await messageOf({ from: 'Ada Lovelace <ada@example.com>' }, 'from')).toBe(
      'must be the address alone: send "from": "ada@example.com", "from_name": "Ada Lovelace"',
    );
    expect(await messageOf({ from: '"Acme, Inc." <news@example.com>' }, 'from')).toBe(
      'must be the address alone: send "from": "news@example.com", "from_name": "Acme, Inc."',
    );
  });

  it('to: "b@example.net" → ["b@example.net"]; a name in a recipient → the address alone', async () => {
    expect(await messageOf({ to: 'b@example.net' }, 'to')).toBe(
      'must be an array of addresses: send ["b@example.net"]',
    );
    expect(await messageOf({ to: 'Bo <b@example.net>' }, 'to')).toBe(
      'must be an array of addresses: send ["b@example.net"]',
    );
    expect(await messageOf({ to: ['Bo <b@example.net>'] }, 'to.0')).toBe(
      'must be the address alone: send "b@example.net" (recipients have no display name here)',
    );
    expect(await messageOf({ cc: ['nope'] }, 'cc.0')).toBe('must be an email address');
  });
});

describe('POST /v1/emails refuses a field it does not know (422, never silently dropped)', () => {
  const unknown = (name: string, over: Record<string, unknown>, fields: Record<string, string>): Case => ({
    ...invalid(name, over, Object.keys(fields)),
    check: (res) => {
      const got = res.json().error.details.fields as { field: string; message: string; code: string }[];
      expect(got).toEqual(
        Object.entries(fields).map(([field, message]) => ({ field, message, code: 'unrecognized_keys' })),
      );
    },
  });
  const cases: Case[] = [
    unknown('tag for tags', { tag: ['x'] }, { tag: 'unknown field "tag"; did you mean "tags"?' }),
    unknown(
      'Subject in another case',
      { Subject: 'y' },
      { Subject: 'unknown field "Subject"; did you mean "subject"?' },
    ),
    unknown('a name near none', { priority: 'high' }, { priority: 'unknown field "priority"' }),
    unknown(
      'two at once, each named',
      { replyTo: ['a@example.net'], htm: '<p/>' },
      {
        replyTo: 'unknown field "replyTo"; did you mean "reply_to"?',
        htm: 'unknown field "htm"; did you mean "html"?',
      },
    ),
    unknown(
      'inside an attachment',
      { attachments: [{ filename: 'a.txt', content_base64: 'QUJD', contentType: 'text/plain' }] },
      { 'attachments.0.contentType': 'unknown field "contentType"; did you mean "content_type"?' },
    ),
  ];
  it.each(cases)('$name', async (c) => {
    await runCase(env, key, c);
  });
});

describe('POST /v1/emails accepts every limit at its boundary (202, one email)', () => {
  const ok = (name: string, over: Record<string, unknown>, recipients: number, attachments = 0): Case => ({
    name,
    body: email(over),
    status: 202,
    rows: { emails: 1, recipients, email_events: 1, attachments, usage_counters: 0, idempotency_keys: 0 },
  });
  const cases: Case[] = [
    ok('text only', {}, 1),
    ok('html only', { text: undefined, html: '<p>hi</p>' }, 1),
    ok('html and text', { html: '<p>hi</p>' }, 1),
    ok('to 50', { to: addrs(50) }, 50),
    ok('to 1 + cc 49', { cc: addrs(49, 'c') }, 50),
    ok('to 1 + bcc 49', { bcc: addrs(49, 'b') }, 50),
    ok('to 20 + cc 20 + bcc 10', { to: addrs(20), cc: addrs(20, 'c'), bcc: addrs(10, 'b') }, 50),
    ok('the same address in to and cc is one recipient', { to: ['a@example.net'], cc: ['A@Example.net'] }, 1),
    ok('reply_to 10', { reply_to: addrs(10, 'rt') }, 1),
    ok('tags 10 of 32 characters', { tags: Array.from({ length: 10 }, (_, i) => x(31) + String(i)) }, 1),
    ok('subject of 998 characters', { subject: x(998) }, 1),
    ok('from_name of 200 characters', { from_name: x(200) }, 1),
    ok(
      'from_name null, cc/bcc/reply_to/tags/headers null',
      { from_name: null, cc: null, bcc: null, reply_to: null, tags: null, headers: null },
      1,
    ),
    ok(
      'attachments 10',
      { attachments: Array.from({ length: 10 }, (_, i) => ({ filename: `f${i}.txt`, content_base64: 'QQ==' })) },
      1,
      10,
    ),
    ok('custom headers', { headers: { 'X-Custom': 'v', 'List-Unsubscribe': '<mailto:u@example.com>' } }, 1),
  ];
  it.each(cases)('$name', async (c) => {
    await runCase(env, key, c);
  });
});

describe('a TEST key', () => {
  it('stores the email as SIMULATED with a simulated event, without volume', async () => {
    const res = await runCase(env, key, {
      name: 'test',
      body: email({ to: ['a@example.net'], cc: ['b@example.net'], bcc: ['c@example.net'] }),
      status: 202,
      rows: { emails: 1, recipients: 3, email_events: 1, usage_counters: 0 },
    });
    const data = res.json().data;
    expect(data).toEqual({ id: expect.any(String), status: 'SIMULATED', skipped_recipients: [] });
    expect(data.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const events = await rows<{ type: string; data: string }>(
      env,
      'SELECT ev.type, ev.data FROM email_events ev JOIN emails e ON e.seq = ev.email_seq WHERE e.id = ?',
      data.id,
    );
    expect(events).toEqual([{ type: 'simulated', data: '{}' }]);
    expect(await rows(env, 'SELECT * FROM usage_counters')).toEqual([]);
  });

  it('does not apply the suppression list: the suppressed address is kept', async () => {
    await env.app.suppressions.add(env.init.project_id, { email: 'gone@example.net', reason: 'HARD_BOUNCE' });
    const res = await runCase(env, key, {
      name: 'suppressed',
      body: email({ to: ['gone@example.net', 'ok@example.net'] }),
      status: 202,
      rows: { emails: 1, recipients: 2, usage_counters: 0 },
    });
    expect(res.json().data.skipped_recipients).toEqual([]);
    const id = res.json().data.id as string;
    const stored = await rows<{ to_emails: string }>(env, 'SELECT to_emails FROM emails WHERE id = ?', id);
    expect(JSON.parse(stored[0]!.to_emails)).toEqual(['gone@example.net', 'ok@example.net']);
  });

  it('needs no verified domain and no signed DPA', async () => {
    const org = await env.app.accounts.createOrg({ name: 'NoDpaTest', owner_email: 'owner@example.com' });
    const project = await env.app.accounts.createProject(org.id, { name: 'P' });
    const k = await env.app.keys.createKey(project.id, { name: 't', env: 'TEST' });
    await runCase(env, k.key!, {
      name: 'no dpa',
      body: email({ from: 'x@unverified.example' }),
      status: 202,
      rows: { emails: 1, usage_counters: 0 },
    });
  });
});
