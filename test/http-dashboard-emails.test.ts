import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CSV_COLUMNS } from '../src/emails/index.ts';
import { createTestEnv, type TestEnv } from './harness.ts';
import { email, expectError, fieldsOf } from './http-helpers.ts';

// The dashboard's email view (decisions.md, "Management endpoints that the specification
// only names"): the Public API's list and detail under a project, with a CSV export.

let env: TestEnv;
const tokens: Record<string, string> = {};
let key = '';
let otherEmail = '';
let otherProject = '';
const TOTAL = 230; // more than two pages of LIMITS.listMax (100)

async function login(address: string, password: string): Promise<string> {
  const res = await env.server.inject({ method: 'POST', url: '/v1/auth/login', payload: { email: address, password } });
  return res.json<{ data: { access_token: string } }>().data.access_token;
}

async function batch(apiKey: string, emails: object[]): Promise<string[]> {
  const res = await env.server.inject({
    method: 'POST',
    url: '/v1/emails/batch',
    headers: { authorization: `Bearer ${apiKey}` },
    payload: { emails },
  });
  expect(res.statusCode, res.body).toBe(202);
  return (res.json().data.results as { id: string }[]).map((r) => r.id);
}

beforeAll(async () => {
  env = await createTestEnv();
  key = await env.key({ env: 'TEST' });
  // Every tenth email is tagged "invoice"; subjects that a CSV must quote.
  const all = Array.from({ length: TOTAL }, (_, i) =>
    email({
      to: [`r${i}@example.net`],
      subject: i === 0 ? 'Quotes "here", commas, and more' : i === 1 ? '=HYPERLINK("http://x.test")' : `Hello ${i}`,
      tags: i % 10 === 0 ? ['invoice'] : ['news'],
    }),
  );
  for (let i = 0; i < TOTAL; i += 100) await batch(key, all.slice(i, i + 100));
  // A line break cannot come in through the API's subject; it can through a stored row (SMTP, older data).
  await env.query("UPDATE emails SET subject = ? WHERE subject = 'Hello 2'", 'Two\nlines');

  await env.app.accounts.createUser({ email: 'viewer@example.com', password: 'member-password-1' });
  await env.app.accounts.addMember(env.init.organization_id, { email: 'viewer@example.com', role: 'VIEWER' });
  await env.app.accounts.createUser({ email: 'outsider@example.com', password: 'member-password-1' });
  const other = await env.app.accounts.createOrg({ name: 'Other', owner_email: 'outsider@example.com' });
  otherProject = (await env.app.accounts.createProject(other.id, { name: 'Theirs' })).id;
  const theirKey = (await env.app.keys.createKey(otherProject, { name: 'theirs', env: 'TEST' })).key!;
  otherEmail = (await batch(theirKey, [email()]))[0]!;
  tokens.OWNER = await login('owner@example.com', 'owner-password-1');
  tokens.VIEWER = await login('viewer@example.com', 'member-password-1');
  tokens.OUTSIDER = await login('outsider@example.com', 'member-password-1');
}, 60_000);
afterAll(() => env.close());

const E = () => `/v1/organizations/${env.init.organization_id}/projects/${env.init.project_id}/emails`;
const get = (url: string, who = 'VIEWER') =>
  env.server.inject({ method: 'GET', url, headers: { authorization: `Bearer ${tokens[who]}` } });
const publicGet = (url: string) =>
  env.server.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
const csvOf = (body: string) => parse<Record<string, string>>(body, { columns: true });

describe('GET .../projects/{id}/emails', () => {
  it('answers what GET /v1/emails answers, filters and cursors included', async () => {
    for (const q of ['', '?limit=5', '?tag=invoice&limit=3', '?status=SIMULATED&to_email=r7@example.net']) {
      const dash = await get(`${E()}${q}`);
      expect(dash.statusCode, dash.body).toBe(200);
      expect(dash.json()).toEqual((await publicGet(`/v1/emails${q}`)).json());
    }
    const first = (await get(`${E()}?limit=2`)).json().data as { id: string }[];
    const next = (await get(`${E()}?limit=2&before=${first[1]!.id}`)).json().data as { id: string }[];
    expect(next).toEqual((await publicGet(`/v1/emails?limit=2&before=${first[1]!.id}`)).json().data);
    expectError(await get(`${E()}?status=LOST`), 422, 'request_validation_failed');
  });

  it('exports every matching email as CSV: a header row, one row per email, quoted where needed', async () => {
    const res = await get(`${E()}?format=csv`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="emails-${env.init.project_id}.csv"`);
    expect(res.body.split('\n', 1)[0]).toBe(CSV_COLUMNS.join(','));
    const rows = csvOf(res.body);
    expect(rows).toHaveLength(TOTAL);
    const ids = (
      await env.query<{ id: string }>(
        'SELECT id FROM emails WHERE project_id = ? ORDER BY seq DESC',
        env.init.project_id,
      )
    ).map((r) => r.id);
    expect(rows.map((r) => r.id)).toEqual(ids);
    const bySubject = (s: string) => rows.find((r) => r.subject === s);
    expect(bySubject('Quotes "here", commas, and more')).toMatchObject({
      to_emails: 'r0@example.net',
      tags: 'invoice',
    });
    expect(res.body).toContain('"Quotes ""here"", commas, and more"');
    expect(bySubject('Two\nlines')).toMatchObject({ to_emails: 'r2@example.net', status: 'SIMULATED' });
    // A spreadsheet would run a cell that starts with "="; the export defuses it.
    expect(bySubject(`'=HYPERLINK("http://x.test")`)).toBeDefined();
    expect(rows[0]).toMatchObject({ from_email: 'sender@example.com', sent_at: '', source: 'API' });
  });

  it('applies the filters to the export, and has only the header when nothing matches', async () => {
    const invoices = csvOf((await get(`${E()}?format=csv&tag=invoice`)).body);
    expect(invoices).toHaveLength(TOTAL / 10);
    expect(invoices.every((r) => r.tags === 'invoice')).toBe(true);
    const one = csvOf((await get(`${E()}?format=csv&to_email=R17@example.net`)).body);
    expect(one.map((r) => r.subject)).toEqual(['Hello 17']);
    const none = await get(`${E()}?format=csv&status=DELIVERED`);
    expect([none.statusCode, none.body]).toEqual([200, `${CSV_COLUMNS.join(',')}\n`]);
  });

  it('refuses paging parameters and bad filters in an export with 422, before any CSV', async () => {
    const paged = await get(`${E()}?format=csv&limit=10`);
    expectError(paged, 422, 'request_validation_failed');
    expect(fieldsOf(paged)).toEqual(['limit']);
    expectError(await get(`${E()}?format=csv&status=LOST`), 422, 'request_validation_failed');
    expectError(await get(`${E()}?format=xml`), 422, 'request_validation_failed');
  });

  it('searches by subject, source and API key, in the list and its export; GET /v1/emails keeps the contract', async () => {
    const keys = await env.query<{ api_key_id: string }>(
      'SELECT DISTINCT api_key_id FROM emails WHERE project_id = ?',
      env.init.project_id,
    );
    expect(keys).toHaveLength(1);
    const keyId = keys[0]!.api_key_id;
    const subjects = async (q: string) =>
      ((await get(`${E()}?limit=100&${q}`)).json().data as { subject: string }[]).map((e) => e.subject);
    expect(await subjects('subject=HELLO%2022')).toEqual([
      'Hello 229',
      'Hello 228',
      'Hello 227',
      'Hello 226',
      'Hello 225',
      'Hello 224',
      'Hello 223',
      'Hello 222',
      'Hello 221',
      'Hello 220',
      'Hello 22',
    ]);
    expect(await subjects('subject=quotes%20%22HERE&source=API')).toEqual(['Quotes "here", commas, and more']);
    expect(await subjects('subject=Hello&source=SMTP')).toEqual([]);
    expect(await subjects(`api_key_id=${keyId}&subject=hello%2019`)).toHaveLength(11);
    expect(await subjects(`api_key_id=00000000-0000-7000-8000-000000000000`)).toEqual([]);
    const csv = csvOf((await get(`${E()}?format=csv&subject=hello%201&api_key_id=${keyId}`)).body);
    expect(csv.map((r) => r.subject).sort()).toEqual(
      [
        ...Array.from({ length: 10 }, (_, i) => `Hello 1${i}`),
        ...Array.from({ length: 100 }, (_, i) => `Hello 1${String(i).padStart(2, '0')}`),
      ].sort(),
    );
    for (const bad of ['source=LOST', 'api_key_id=not-a-key', 'subject=']) {
      const res = await get(`${E()}?${bad}`);
      expectError(res, 422, 'request_validation_failed');
      expect(fieldsOf(res)).toEqual([bad.split('=')[0]]);
    }
    expectError(await publicGet('/v1/emails?subject=hello'), 422, 'request_validation_failed');
  });

  it('is read by a VIEWER; 404 for a non-member and for a project of another organization', async () => {
    expect((await get(E(), 'VIEWER')).statusCode).toBe(200);
    expectError(await get(E(), 'OUTSIDER'), 404, 'not_found');
    expectError(await get(`${E()}?format=csv`, 'OUTSIDER'), 404, 'not_found');
    const theirs = `/v1/organizations/${env.init.organization_id}/projects/${otherProject}/emails`;
    expectError(await get(theirs, 'OWNER'), 404, 'not_found');
  });
});

describe('GET .../projects/{id}/emails/{email_id}', () => {
  it('is the Public API detail with the email events, its recipients and its attachments', async () => {
    const [id] = (await get(`${E()}?limit=1`)).json().data.map((e: { id: string }) => e.id) as string[];
    const res = await get(`${E()}/${id}`);
    expect(res.statusCode).toBe(200);
    const { events, recipients, attachments, ...detail } = res.json().data as {
      events: { type: string }[];
      recipients: unknown[];
      attachments: unknown[];
    };
    const publicDetail = (await publicGet(`/v1/emails/${id}`)).json().data as { to_emails: string[] };
    expect(detail).toEqual(publicDetail);
    expect(events).toEqual((await publicGet(`/v1/emails/${id}/events`)).json().data);
    expect(events.map((e) => e.type)).toEqual(['simulated']);
    // A TEST email is simulated: its recipients were never tried and wait for nothing.
    expect(recipients).toEqual(
      publicDetail.to_emails.map((address) =>
        expect.objectContaining({ address, kind: 'to', attempts: [], waiting: [], next_attempt_at: null }),
      ),
    );
    expect(attachments).toEqual([]);
  });

  it('gives an attachment as a file to save, never to show: octet-stream, nosniff, sandboxed, its name kept', async () => {
    const pdf = Buffer.from([0x25, 0x50, 0x44, 0x46, 0x00, 0xff, 0x10, 0x80]);
    const html = '<script>parent.alert(document.cookie)</script>';
    const [id] = await batch(key, [
      email({
        attachments: [
          { filename: 'résumé "final".pdf', content_type: 'application/pdf', content_base64: pdf.toString('base64') },
          { filename: 'page.html', content_type: 'text/html', content_base64: Buffer.from(html).toString('base64') },
        ],
      }),
    ]);
    const one = await get(`${E()}/${id!}/attachments/0`);
    expect(one.statusCode).toBe(200);
    expect(one.rawPayload.equals(pdf)).toBe(true);
    expect(one.headers['content-type']).toBe('application/octet-stream');
    expect(one.headers['content-disposition']).toBe(
      `attachment; filename="r?sum? \\"final\\".pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22.pdf`,
    );
    const page = await get(`${E()}/${id!}/attachments/1`);
    expect(page.body).toBe(html);
    // Declared text/html, it still goes out as bytes to save, in a sandbox with nothing allowed.
    expect(page.headers).toMatchObject({
      'content-type': 'application/octet-stream',
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; sandbox",
    });
    expectError(await get(`${E()}/${id!}/attachments/2`), 404, 'not_found');
    expectError(await get(`${E()}/${id!}/attachments/-1`), 404, 'not_found');
    expectError(await get(`${E()}/${id!}/attachments/x`), 404, 'not_found');
    expectError(await get(`${E()}/${id!}/attachments/0`, 'OUTSIDER'), 404, 'not_found');
    expectError(await get(`${E()}/${otherEmail}/attachments/0`), 404, 'not_found');
  });

  it('is a 404 for an email of another project, an unknown id and a non-member', async () => {
    expectError(await get(`${E()}/${otherEmail}`), 404, 'not_found');
    expectError(await get(`${E()}/00000000-0000-7000-8000-000000000000`), 404, 'not_found');
    expectError(await get(`${E()}/not-an-id`), 404, 'not_found');
    const [id] = (await get(`${E()}?limit=1`)).json().data.map((e: { id: string }) => e.id) as string[];
    expectError(await get(`${E()}/${id}`, 'OUTSIDER'), 404, 'not_found');
  });
});
