import { parse } from 'csv-parse/sync';
import { afterEach, describe, expect, it } from 'vitest';
import { createDomainsEnv, publish, type DomainsEnv } from './domains-helpers.ts';
import { caller, codeOf, signInMembers } from './management-helpers.ts';

// Domains (add, verify, bind, delete), suppressions (add, delete, CSV import
// and export), the audit log as CSV and the DPA over the Management API,
// each write audited with the user and the client's address.

let denv: DomainsEnv;
afterEach(() => denv.close());
let tokens: Record<string, string> = {};

async function setup(plan: 'FREE' | 'PAID' = 'PAID'): Promise<void> {
  denv = await createDomainsEnv(plan);
  tokens = await signInMembers(denv.env);
}

const ORG = () => `/v1/organizations/${denv.env.init.organization_id}`;
const PROJECT = () => `${ORG()}/projects/${denv.env.init.project_id}`;
const call = (...args: Parameters<ReturnType<typeof caller>>) => caller(() => denv.env, tokens)(...args);
const audit = (type: string) =>
  denv.env.query<{ action: string; actor_type: string; actor_id: string; ip: string }>(
    `SELECT action, actor_type, actor_id, ip FROM audit_logs WHERE target_type = ? ORDER BY ${denv.env.auditOrder}`,
    type,
  );

describe('domains over the Management API', () => {
  it('an ADMIN adds, verifies, binds, unbinds and deletes a domain; each write is audited', async () => {
    await setup();
    expect((await call('POST', `${ORG()}/domains`, 'DEVELOPER', { name: 'mail.example.org' })).statusCode).toBe(403);
    const added = await call('POST', `${ORG()}/domains`, 'ADMIN', { name: 'Mail.Example.org' });
    expect(added.statusCode).toBe(201);
    const d = added.json().data;
    expect(d).toMatchObject({ name: 'mail.example.org', status: 'PENDING', project_ids: [] });
    expect(d.records.map((r: { purpose: string }) => r.purpose)).toEqual(['dkim', 'spf', 'return-path', 'dmarc']);
    expect(JSON.stringify(added.json())).not.toMatch(/PRIVATE KEY/);

    expect((await call('GET', `${ORG()}/domains/${d.id}`, 'VIEWER')).json().data.id).toBe(d.id);
    expect((await call('GET', `${ORG()}/domains`, 'VIEWER')).json().data).toHaveLength(1);

    // Nothing published yet: the check runs and says why.
    const failed = await call('POST', `${ORG()}/domains/${d.id}/verify`, 'ADMIN');
    expect(failed.statusCode).toBe(201);
    expect(failed.json().data.status).toBe('PENDING');
    expect(failed.json().data.checks.find((c: { purpose: string }) => c.purpose === 'dkim').ok).toBe(false);
    publish(denv.dns, d);
    const verified = await call('POST', `${ORG()}/domains/${d.id}/verify`, 'ADMIN');
    expect(verified.json().data.status).toBe('VERIFIED');

    expect((await call('POST', `${PROJECT()}/domains/${d.id}`, 'DEVELOPER')).statusCode).toBe(403);
    const bound = await call('POST', `${PROJECT()}/domains/${d.id}`, 'ADMIN');
    expect(bound.json().data.project_ids).toEqual([denv.env.init.project_id]);
    expect((await call('DELETE', `${PROJECT()}/domains/${d.id}`, 'ADMIN')).statusCode).toBe(204);
    expect(codeOf(await call('DELETE', `${PROJECT()}/domains/${d.id}`, 'ADMIN'))).toBe('not_found');

    expect((await call('DELETE', `${ORG()}/domains/${d.id}`, 'VIEWER')).statusCode).toBe(403);
    expect((await call('DELETE', `${ORG()}/domains/${d.id}`, 'ADMIN')).statusCode).toBe(204);
    expect((await call('GET', `${ORG()}/domains/${d.id}`, 'ADMIN')).statusCode).toBe(404);

    const rows = await audit('domain');
    expect(rows.map((r) => r.action)).toEqual([
      'domain.create',
      'domain.verify',
      'domain.verify',
      'domain.bind',
      'domain.unbind',
      'domain.delete',
    ]);
    expect(new Set(rows.map((r) => r.actor_type))).toEqual(new Set(['user']));
    expect(rows.every((r) => r.ip === '127.0.0.1')).toBe(true);
    const before = await denv.env.query("SELECT before, after FROM audit_logs WHERE action = 'domain.verify'");
    expect(JSON.stringify(before)).not.toMatch(/PRIVATE KEY/);
  });

  it('says over the API what DNS already holds: the merged SPF to publish, the DMARC kept, a CNAME loop', async () => {
    await setup();
    const d = (await call('POST', `${ORG()}/domains`, 'ADMIN', { name: 'example.org' })).json().data;
    publish(denv.dns, d);
    denv.dns.set('bounces.example.org', { TXT: ['v=spf1 include:_spf.example.net -all'] });
    denv.dns.set('_dmarc.example.org', { TXT: ['v=DMARC1; p=reject'] });
    const dkim = d.records[0].name;
    denv.dns.set(dkim, { CNAME: 'dkim.example.net' });
    denv.dns.set('dkim.example.net', { CNAME: dkim });
    const r = await call('POST', `${ORG()}/domains/${d.id}/verify`, 'ADMIN');
    expect(r.statusCode).toBe(201);
    const checks = Object.fromEntries(
      r.json().data.checks.map((c: { purpose: string; ok: boolean; reason: string }) => [c.purpose, [c.ok, c.reason]]),
    );
    expect(checks.spf).toEqual([false, expect.stringContaining('v=spf1 include:_spf.example.net a:mx.svc.test -all')]);
    expect(checks.dmarc).toEqual([
      true,
      expect.stringMatching(/^a DMARC record is already published \(policy p=reject\)/),
    ]);
    expect(checks.dkim).toEqual([
      false,
      `a CNAME loop: ${dkim} → dkim.example.net → ${dkim}; receivers can read no record at ${dkim}: remove or correct one of these CNAMEs`,
    ]);
    expect(r.json().data.status).toBe('PENDING');
  });

  it('refuses a duplicate (409), a bad name (422), the plan ceiling (422), ids of nothing or of elsewhere (404)', async () => {
    await setup('FREE');
    expect((await call('POST', `${ORG()}/domains`, 'ADMIN', { name: 'a.example.org' })).statusCode).toBe(201);
    expect(codeOf(await call('POST', `${ORG()}/domains`, 'ADMIN', { name: 'a.example.org' }))).toBe('conflict');
    const ceiling = await call('POST', `${ORG()}/domains`, 'ADMIN', { name: 'b.example.org' });
    expect([ceiling.statusCode, codeOf(ceiling)]).toEqual([422, 'plan_limit_exceeded']);
    for (const body of [{ name: 'not a domain' }, {}, { name: 'c.example.org', extra: 1 }]) {
      const r = await call('POST', `${ORG()}/domains`, 'ADMIN', body);
      expect([r.statusCode, codeOf(r)]).toEqual([422, 'request_validation_failed']);
    }
    // A name is not an id over HTTP; an unknown uuid is 404.
    expect((await call('GET', `${ORG()}/domains/a.example.org`, 'ADMIN')).statusCode).toBe(404);
    expect((await call('GET', `${ORG()}/domains/01900000-0000-7000-8000-000000000000`, 'ADMIN')).statusCode).toBe(404);

    // A domain of another organization is not found, whatever the path says.
    const app = denv.env.app;
    await app.accounts.createOrg({ name: 'Other', owner_email: 'owner@example.com', plan: 'PAID' });
    const other = await app.domains.addDomain({ name: 'other.example.net', organization: 'Other' });
    for (const [m, url] of [
      ['GET', `${ORG()}/domains/${other.id}`],
      ['POST', `${ORG()}/domains/${other.id}/verify`],
      ['DELETE', `${ORG()}/domains/${other.id}`],
      ['POST', `${PROJECT()}/domains/${other.id}`],
    ] as const) {
      expect([url, (await call(m, url, 'OWNER')).statusCode]).toEqual([url, 404]);
    }
    // The CLI's writes are audited too, with the operator as the actor.
    expect((await audit('domain')).map((r) => [r.action, r.actor_type])).toEqual([
      ['domain.create', 'user'],
      ['domain.create', 'cli'],
    ]);
  });
});

describe('suppressions over the Management API', () => {
  const S = () => `${PROJECT()}/suppressions`;

  it('a DEVELOPER adds and removes; a VIEWER reads; bad input gets the envelope', async () => {
    await setup();
    expect((await call('POST', S(), 'VIEWER', { email: 'a@example.net' })).statusCode).toBe(403);
    const added = await call('POST', S(), 'DEVELOPER', { email: 'A@Example.net', reason: 'UNSUBSCRIBE' });
    expect(added.statusCode).toBe(201);
    expect(added.json().data).toMatchObject({ email: 'a@example.net', reason: 'UNSUBSCRIBE' });
    expect((await call('GET', S(), 'VIEWER')).json().data.map((s: { email: string }) => s.email)).toEqual([
      'a@example.net',
    ]);
    for (const body of [{ email: 'nope' }, { email: 'b@example.net', reason: 'BORED' }, {}]) {
      const r = await call('POST', S(), 'DEVELOPER', body);
      expect([r.statusCode, codeOf(r)]).toEqual([422, 'request_validation_failed']);
    }
    expect((await call('DELETE', `${S()}/a@example.net`, 'VIEWER')).statusCode).toBe(403);
    expect((await call('DELETE', `${S()}/A@example.net`, 'DEVELOPER')).statusCode).toBe(204);
    expect(codeOf(await call('DELETE', `${S()}/a@example.net`, 'DEVELOPER'))).toBe('not_found');
    expect((await audit('suppression')).map((r) => r.action)).toEqual(['suppression.add', 'suppression.remove']);
  });

  it('imports a CSV streamed as text/csv: broken rows are reported with their line, the rest imported', async () => {
    await setup();
    const csv = [
      'email,reason',
      'one@example.net,HARD_BOUNCE',
      'not-an-address,MANUAL',
      'two@example.net,',
      'three@example.net,SLEEPY',
      'four@example.net,MANUAL,extra',
      '"five@example.net",COMPLAINT',
      '=cmd@example.net,MANUAL',
      '',
    ].join('\n');
    const r = await call('POST', `${S()}/import`, 'DEVELOPER', csv, 'text/csv');
    expect(r.statusCode).toBe(201);
    const result = r.json().data;
    expect(result.imported).toBe(3);
    expect(result.invalid.map((i: { line: number }) => i.line)).toEqual([3, 5, 6, 8]);
    expect(result.invalid[0].message).toMatch(/email/);
    expect(result.invalid[1].message).toMatch(/reason/);

    const exported = await call('GET', `${S()}?format=csv`, 'VIEWER');
    expect(exported.statusCode).toBe(200);
    expect(exported.headers['content-type']).toMatch(/^text\/csv/);
    expect(exported.headers['content-disposition']).toMatch(/attachment; filename="suppressions.csv"/);
    const rows = parse<Record<string, string>>(exported.body, { columns: true });
    expect(rows.map((x) => [x.email, x.reason])).toEqual([
      ['five@example.net', 'COMPLAINT'],
      ['one@example.net', 'HARD_BOUNCE'],
      ['two@example.net', 'MANUAL'],
    ]);

    // A search narrows the list and its export alike; a reason not in the contract's list is refused.
    const found = await call('GET', `${S()}?q=E%40EXAMPLE&reason=COMPLAINT`, 'VIEWER');
    expect((JSON.parse(found.body) as { data: { email: string }[] }).data.map((x) => x.email)).toEqual([
      'five@example.net',
    ]);
    const some = await call('GET', `${S()}?format=csv&q=o`, 'VIEWER');
    expect(parse<Record<string, string>>(some.body, { columns: true }).map((x) => x.email)).toEqual([
      'one@example.net',
      'two@example.net',
    ]);
    const badReason = await call('GET', `${S()}?reason=BOUNCED`, 'VIEWER');
    expect([badReason.statusCode, codeOf(badReason)]).toEqual([422, 'request_validation_failed']);

    // What was exported imports again to the same list (a round trip).
    const again = await call('POST', `${S()}/import`, 'DEVELOPER', exported.body, 'text/csv');
    expect(again.json().data).toEqual({ imported: 3, invalid: [] });
  });

  it('imports thousands of rows in audited chunks, and refuses a file without an email column or a JSON body', async () => {
    await setup();
    const lines = ['email'];
    for (let i = 0; i < 2500; i++) lines.push(`user${i}@example.net`);
    const r = await call('POST', `${S()}/import`, 'DEVELOPER', lines.join('\r\n'), 'text/csv');
    expect(r.json().data).toMatchObject({ imported: 2500, invalid: [] });
    expect((await audit('suppression')).map((x) => x.action)).toEqual(Array(3).fill('suppression.import'));

    const noEmail = await call('POST', `${S()}/import`, 'DEVELOPER', 'address\nx@example.net\n', 'text/csv');
    expect([noEmail.statusCode, codeOf(noEmail)]).toEqual([422, 'request_validation_failed']);
    const json = await call('POST', `${S()}/import`, 'DEVELOPER', { email: 'x@example.net' });
    expect([json.statusCode, codeOf(json)]).toEqual([422, 'request_validation_failed']);
    expect((await call('POST', `${S()}/import`, 'VIEWER', 'email\nx@example.net\n', 'text/csv')).statusCode).toBe(403);
    const unclosed = await call('POST', `${S()}/import`, 'DEVELOPER', 'email\nok@example.net\n"broken\n', 'text/csv');
    expect(unclosed.json().data.imported).toBe(1);
    expect(unclosed.json().data.invalid).toHaveLength(1);
  });
});

describe('the audit log as CSV and the DPA', () => {
  it('streams every audit row as CSV to an ADMIN', async () => {
    await setup();
    for (let i = 0; i < 3; i++) await call('POST', `${PROJECT()}/suppressions`, 'DEVELOPER', { email: `s${i}@x.net` });
    expect((await call('GET', `${ORG()}/audit-logs?format=csv`, 'DEVELOPER')).statusCode).toBe(403);
    const r = await call('GET', `${ORG()}/audit-logs?format=csv`, 'ADMIN');
    expect(r.headers['content-type']).toMatch(/^text\/csv/);
    const rows = parse<Record<string, string>>(r.body, { columns: true });
    const [total] = (await denv.env.query('SELECT count(*) AS n FROM audit_logs')) as [{ n: number }];
    expect(rows).toHaveLength(total.n);
    expect(rows[0]).toMatchObject({ action: 'suppression.add', actor_type: 'user', ip: '127.0.0.1' });
    expect(JSON.parse(rows[0]!.after!)).toMatchObject({ email: 's2@x.net' });
    const bad = await call('GET', `${ORG()}/audit-logs?format=xml`, 'ADMIN');
    expect([bad.statusCode, codeOf(bad)]).toEqual([422, 'request_validation_failed']);
  });

  it('only an OWNER signs the DPA', async () => {
    await setup();
    expect((await call('POST', `${ORG()}/legal/dpa`, 'ADMIN')).statusCode).toBe(403);
    const r = await call('POST', `${ORG()}/legal/dpa`, 'OWNER');
    expect(r.statusCode).toBe(201);
    expect(r.json().data.dpa_accepted_at).toBe('2026-03-15T12:00:00.000Z');
    expect((await audit('organization')).at(-1)).toMatchObject({
      action: 'organization.accept_dpa',
      actor_type: 'user',
    });
  });
});
