import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { checkOf, createDomainsEnv, HOST, HOST_IPV4, publish, type DomainsEnv } from './domains-helpers.ts';

// Adding domains, their records and DKIM key, the plan ceiling, and verification
// against a real DNS server on loopback (issue 3; decisions.md "Domains").

let t: DomainsEnv;
afterEach(() => t.close());

const ORG = 'Acme';
const add = (name: string, project?: string) =>
  t.env.app.domains.addDomain({ name, organization: ORG, ...(project ? { project } : {}) });
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: { code: string; status: number; details: unknown }) => ({ code: e.code, status: e.status, details: e.details }),
  );

describe('svc domains add', () => {
  it('returns a PENDING domain with the DKIM, SPF, return-path and DMARC records to publish', async () => {
    t = await createDomainsEnv();
    const d = await add('Example.com');
    expect(d).toMatchObject({ name: 'example.com', status: 'PENDING', dkim_selector: 'svc202603', checks: [] });
    expect(d.records.map(({ type, name, purpose }) => [type, name, purpose])).toEqual([
      ['TXT', 'svc202603._domainkey.example.com', 'dkim'],
      ['TXT', 'bounces.example.com', 'spf'],
      ['MX', 'bounces.example.com', 'return-path'],
      ['TXT', '_dmarc.example.com', 'dmarc'],
    ]);
    expect(d.records[0]!.value).toMatch(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/]+=*$/);
    expect(d.records.slice(1).map((r) => r.value)).toEqual([
      `v=spf1 a:${HOST} ~all`,
      `10 ${HOST}`,
      // Aggregate reports go to svc's inbound MX, on the return-path name (same organizational domain).
      'v=DMARC1; p=none; rua=mailto:dmarc@bounces.example.com',
    ]);
  });

  it('publishes the public half of the stored RSA-2048 private key (PKCS#8 PEM)', async () => {
    t = await createDomainsEnv();
    const d = await add('example.com');
    const [{ dkim_private_key: pem }] = (await t.env.query<{ dkim_private_key: string }>(
      'SELECT dkim_private_key FROM domains WHERE id = ?',
      d.id,
    )) as [{ dkim_private_key: string }];
    expect(pem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    const key = createPrivateKey(pem);
    expect(key.asymmetricKeyDetails?.modulusLength).toBe(2048);
    const published = d.records[0]!.value.split('p=')[1]!;
    const der = createPublicKey(key).export({ type: 'spki', format: 'der' });
    expect(der.toString('base64')).toBe(published);
    const spki = createPublicKey({ key: Buffer.from(published, 'base64'), format: 'der', type: 'spki' });
    expect(verify('sha256', Buffer.from('m'), spki, sign('sha256', Buffer.from('m'), key))).toBe(true);
  });

  it('holds the plan ceiling: FREE 1 domain, PAID 5 (422 plan_limit_exceeded)', async () => {
    t = await createDomainsEnv('FREE');
    await add('one.example');
    expect(await refusal(add('two.example'))).toEqual({
      code: 'plan_limit_exceeded',
      status: 422,
      details: { code: 'plan_limit_exceeded', resource: 'domains', plan: 'FREE', limit: 1 },
    });
    await t.env.app.accounts.setPlan(ORG, 'PAID');
    await Promise.all(['two', 'three', 'four', 'five'].map((n) => add(`${n}.example`)));
    expect(await refusal(add('six.example'))).toMatchObject({ code: 'plan_limit_exceeded', status: 422 });
    expect((await t.env.app.domains.listDomains(ORG)).map((d) => d.name)).toHaveLength(5);
  });

  it('refuses a domain that exists (in any case) with 409 conflict', async () => {
    t = await createDomainsEnv('UNLIMITED');
    await add('example.com');
    expect(await refusal(add('EXAMPLE.com'))).toMatchObject({ code: 'conflict', status: 409 });
  });

  it.each(['localhost', 'exa_mple.com', '-x.example', 'a..example', '10.0.0.1', 'example.com.', ''])(
    'refuses the name %j with 422 request_validation_failed',
    async (name) => {
      t = await createDomainsEnv();
      expect(await refusal(add(name))).toMatchObject({ code: 'request_validation_failed', status: 422 });
    },
  );

  it('refuses a misspelt field by name (the CLI and every door), adding nothing', async () => {
    t = await createDomainsEnv('UNLIMITED');
    const misspelt = t.env.app.domains.addDomain({ name: 'example.com', organization: ORG, projet: 'x' } as never);
    expect(await refusal(misspelt)).toMatchObject({
      code: 'request_validation_failed',
      status: 422,
      details: {
        fields: [expect.objectContaining({ field: 'projet', message: expect.stringContaining('"project"') })],
      },
    });
    expect(await t.env.app.domains.listDomains(ORG)).toEqual([]);
  });

  it('binds right away with a project, and refuses a project of another organization with 404', async () => {
    t = await createDomainsEnv('UNLIMITED');
    expect((await add('example.com', 'Web')).project_ids).toEqual([t.env.init.project_id]);
    const other = await t.env.app.accounts.createOrg({ name: 'Other', owner_email: 'owner@example.com' });
    const foreign = await t.env.app.accounts.createProject(other.id, { name: 'Foreign' });
    expect(await refusal(add('b.example', foreign.id))).toMatchObject({ code: 'not_found', status: 404 });
    expect(await refusal(t.env.app.domains.getDomain('b.example'))).toMatchObject({ code: 'not_found' });
  });
});

describe('svc domains verify', () => {
  it('verifies a domain whose DKIM and SPF records are published, every check passing', async () => {
    t = await createDomainsEnv();
    const d = await add('example.com');
    publish(t.dns, d);
    const v = await t.env.app.domains.verifyDomain('example.com');
    expect(v).toMatchObject({ status: 'VERIFIED', verified_at: '2026-03-15T12:00:00.000Z', warning: null });
    expect(v.last_checked_at).toBe('2026-03-15T12:00:00.000Z');
    expect(v.checks.map((c) => [c.purpose, c.ok, c.reason])).toEqual([
      ['dkim', true, null],
      ['spf', true, null],
      ['return-path', true, null],
      ['dmarc', true, null],
    ]);
    expect(checkOf(v, 'dkim').found).toEqual([d.records[0]!.value]);
    expect(await t.env.app.domains.getSigningKey('EXAMPLE.com')).toMatchObject({
      domain: 'example.com',
      selector: 'svc202603',
      privateKeyPem: expect.stringMatching(/^-----BEGIN PRIVATE KEY-----/),
    });
  });

  it('verifies with DKIM and SPF only: return-path and DMARC are recommendations', async () => {
    t = await createDomainsEnv();
    const d = await add('example.com');
    t.dns.set('bounces.example.com', { TXT: ['google-site-verification=x', `v=spf1 ip4:${HOST_IPV4} -all`] });
    t.dns.set(d.records[0]!.name, { TXT: [d.records[0]!.value.replace(/; /g, ';')] });
    const v = await t.env.app.domains.verifyDomain(d.id);
    expect(v.status).toBe('VERIFIED');
    expect(checkOf(v, 'return-path')).toMatchObject({
      ok: false,
      reason: 'no MX record at bounces.example.com (recommended, not required)',
    });
    expect(checkOf(v, 'dmarc').reason).toContain('recommended, not required');
  });

  it('fails with a reason per record when nothing is published (NXDOMAIN)', async () => {
    t = await createDomainsEnv();
    const d = await add('example.com');
    const v = await t.env.app.domains.verifyDomain('example.com');
    expect(v).toMatchObject({ status: 'PENDING', warning: null });
    expect(v.checks.map((c) => [c.ok, c.reason, c.found])).toEqual([
      [false, `TXT ${d.records[0]!.name} does not exist (NXDOMAIN)`, []],
      [false, 'TXT bounces.example.com does not exist (NXDOMAIN)', []],
      [false, 'MX bounces.example.com does not exist (NXDOMAIN) (recommended, not required)', []],
      [false, 'TXT _dmarc.example.com does not exist (NXDOMAIN) (recommended, not required)', []],
    ]);
    expect(await t.env.app.domains.getSigningKey('example.com')).toBeUndefined();
  });

  it.each([
    ['another DKIM key', { dkim: 'v=DKIM1; k=rsa; p=MIIBIjANBgkq' }, 'dkim', 'differs from this domain'],
    ['a revoked DKIM key', { dkim: 'v=DKIM1; p=' }, 'dkim', 'is empty (revoked)'],
    ['a TXT that is not DKIM', { dkim: 'hello' }, 'dkim', 'no DKIM key record'],
    ['SPF without our host', { spf: ['v=spf1 include:_spf.google.com ~all'] }, 'spf', `does not authorise ${HOST}`],
    ['no SPF record', { spf: ['some-verification=1'] }, 'spf', 'no SPF record (v=spf1) at bounces.example.com'],
    ['two SPF records', { spf: [`v=spf1 a:${HOST} -all`, 'v=spf1 -all'] }, 'spf', '2 SPF records'],
  ])('fails on %s with the reason', async (_name, over, purpose, reason) => {
    t = await createDomainsEnv();
    const d = await add('example.com');
    publish(t.dns, d);
    if ('dkim' in over) t.dns.set(d.records[0]!.name, { TXT: [over.dkim] });
    if ('spf' in over) t.dns.merge('bounces.example.com', { TXT: over.spf });
    const v = await t.env.app.domains.verifyDomain('example.com');
    expect(v.status).toBe('PENDING');
    expect(checkOf(v, purpose)).toMatchObject({ ok: false, reason: expect.stringContaining(reason) });
    expect(checkOf(v, purpose).found.length).toBeGreaterThan(0);
  });

  it('reports NODATA as a missing record and SERVFAIL as a temporary failure', async () => {
    t = await createDomainsEnv();
    const d = await add('example.com');
    publish(t.dns, d);
    t.dns.set('bounces.example.com', { A: ['192.0.2.1'] });
    t.dns.set(d.records[0]!.name, { rcode: 'SERVFAIL' });
    const v = await t.env.app.domains.verifyDomain('example.com');
    expect(checkOf(v, 'spf').reason).toBe('no SPF record (v=spf1) at bounces.example.com');
    expect(checkOf(v, 'dkim').reason).toBe(`the DNS server failed (SERVFAIL) looking up TXT ${d.records[0]!.name}`);
  });
});

describe('a domain that already has records (issue 28 item 2)', () => {
  it('leaves an SPF at the apex alone: svc asks for none there, and verifies beside it', async () => {
    t = await createDomainsEnv();
    const d = await add('example.com');
    t.dns.set('example.com', { TXT: ['v=spf1 include:_spf.google.com ~all'] });
    publish(t.dns, d);
    expect(d.records.filter((r) => r.name === 'example.com')).toEqual([]);
    const v = await t.env.app.domains.verifyDomain('example.com');
    expect(v.status).toBe('VERIFIED');
    expect(checkOf(v, 'spf')).toMatchObject({ name: 'bounces.example.com', ok: true, reason: null });
  });

  it.each([
    [
      'an SPF without our host',
      ['v=spf1 include:_spf.google.com ~all'],
      `publish this one record in its place: v=spf1 include:_spf.google.com a:${HOST} ~all`,
    ],
    [
      'two SPF records',
      ['v=spf1 ip4:198.51.100.1 -all', 'v=spf1 include:_spf.example.net ~all'],
      `publish this one record in their place: v=spf1 ip4:198.51.100.1 include:_spf.example.net a:${HOST} -all`,
    ],
  ])('gives the exact merged SPF to publish at the return path for %s', async (_name, existing, merged) => {
    t = await createDomainsEnv();
    const d = await add('example.com');
    publish(t.dns, d);
    t.dns.merge('bounces.example.com', { TXT: existing });
    const v = await t.env.app.domains.verifyDomain('example.com');
    expect(v.status).toBe('PENDING');
    expect(checkOf(v, 'spf')).toMatchObject({ ok: false, reason: expect.stringContaining(merged), found: existing });
  });

  it('reports an existing DMARC policy rather than proposing a second record, with svc added to its rua=', async () => {
    t = await createDomainsEnv();
    const d = await add('example.com');
    publish(t.dns, d);
    t.dns.set('_dmarc.example.com', { TXT: ['v=DMARC1; p=reject; rua=mailto:d@example.net'] });
    const v = await t.env.app.domains.verifyDomain('example.com');
    expect(v.status).toBe('VERIFIED');
    expect(checkOf(v, 'dmarc')).toMatchObject({
      ok: true,
      reason:
        'a DMARC record is already published (policy p=reject): keep it, publish no second one; to send its ' +
        'aggregate reports to svc too, publish in its place: ' +
        'v=DMARC1; p=reject; rua=mailto:d@example.net,mailto:dmarc@bounces.example.com',
      found: ['v=DMARC1; p=reject; rua=mailto:d@example.net'],
    });
    // One that already sends them to svc (here with a size limit) is only noted.
    const withSvc = 'v=DMARC1; p=quarantine; rua=mailto:dmarc@bounces.example.com!10m';
    t.dns.set('_dmarc.example.com', { TXT: [withSvc] });
    const again = await t.env.app.domains.verifyDomain('example.com');
    expect(checkOf(again, 'dmarc')).toMatchObject({
      ok: true,
      reason: 'a DMARC record is already published (policy p=quarantine): keep it, publish no second one',
      found: [withSvc],
    });
  });

  it('says where an MX on the return-path name sends bounces, and what to publish instead', async () => {
    t = await createDomainsEnv();
    const d = await add('example.com');
    publish(t.dns, d);
    t.dns.merge('bounces.example.com', { MX: [{ priority: 5, exchange: 'mx.other.example' }] });
    const v = await t.env.app.domains.verifyDomain('example.com');
    expect(checkOf(v, 'return-path').reason).toBe(
      `the MX of bounces.example.com points to mx.other.example, not ${HOST}: bounces to svc's return path go there; replace it with MX 10 ${HOST} (recommended, not required)`,
    );
  });
});

describe('what DNS holds when a domain is added (issue 28 item 2)', () => {
  const addLookingUp = (name: string) =>
    t.env.app.domains.addDomain({ name, organization: ORG }, undefined, { lookUp: true });

  it('looks the records up at once: an existing DMARC policy and SPF show before anything is published', async () => {
    t = await createDomainsEnv();
    t.dns.set('example.com', { TXT: ['v=spf1 include:_spf.google.com ~all'] });
    t.dns.set('_dmarc.example.com', { TXT: ['v=DMARC1; p=quarantine'] });
    const d = await addLookingUp('example.com');
    expect(d.status).toBe('PENDING');
    expect(d.last_checked_at).not.toBeNull();
    expect(checkOf(d, 'dmarc')).toMatchObject({
      ok: true,
      reason: expect.stringContaining('a DMARC record is already published (policy p=quarantine)'),
    });
    // The apex SPF does not name this server: svc asks for its own record at the return path only.
    expect(checkOf(d, 'spf')).toMatchObject({ ok: false, reason: 'TXT bounces.example.com does not exist (NXDOMAIN)' });
    expect(checkOf(d, 'dkim').ok).toBe(false);
    // Not audited as a verification: it is part of adding.
    const actions = await t.env.query<{ action: string }>("SELECT action FROM audit_logs WHERE target_type = 'domain'");
    expect(actions.map((a) => a.action)).toEqual(['domain.create']);
  });

  it('audits the Ed25519 key that waits for its record, beside the domain', async () => {
    t = await createDomainsEnv();
    await t.env.app.domains.addDomain({ name: 'example.com', organization: ORG, ed25519: true });
    const rows = await t.env.query<{ action: string; after: string }>(
      `SELECT action, after FROM audit_logs WHERE target_type = 'domain' ORDER BY ${t.env.auditOrder}`,
    );
    expect(rows.map((r) => r.action)).toEqual(['domain.create', 'domain.dkim_rotation_started']);
    expect(JSON.parse(rows[1]!.after)).toMatchObject({ algorithm: 'ed25519', state: 'pending' });
  });
});

describe('a domain set up when svc asked for SPF at the apex (issue 28 item 2, upgrade)', () => {
  it('says the apex record never passes svc mail and what to publish at the return path', async () => {
    t = await createDomainsEnv();
    const d = await add('example.com');
    publish(t.dns, d);
    expect((await t.env.app.domains.verifyDomain('example.com')).status).toBe('VERIFIED');
    // What the records of before asked for: SPF at the apex, nothing at bounces.
    t.dns.remove('bounces.example.com');
    t.dns.set('example.com', { TXT: [`v=spf1 mx a:${HOST} ~all`] });
    const v = await t.env.app.domains.verifyDomain('example.com');
    const reason =
      `no SPF record (v=spf1) at bounces.example.com. The SPF record at example.com authorises ${HOST}, but ` +
      "receivers evaluate SPF for svc's envelope sender (bounces+…@bounces.example.com) at bounces.example.com, " +
      `so it never passes svc's mail: publish v=spf1 a:${HOST} ~all at bounces.example.com; the record at ` +
      'example.com stays as it is';
    expect(checkOf(v, 'spf')).toMatchObject({ ok: false, reason });
    expect(v.status).toBe('VERIFIED');
    expect(v.warning).toContain(`SPF: ${reason}`);
  });
});

describe('CNAMEs (issue 28, bad input)', () => {
  it('follows a CNAME to a DKIM key published elsewhere, and verifies', async () => {
    t = await createDomainsEnv();
    const d = await add('example.com');
    publish(t.dns, d);
    t.dns.set('keys.example.net', { TXT: [d.records[0]!.value] });
    t.dns.set(d.records[0]!.name, { CNAME: 'keys.example.net' });
    expect((await t.env.app.domains.verifyDomain('example.com')).status).toBe('VERIFIED');
  });

  it('names a CNAME loop, link by link, as a failure of the records, not of the resolver', async () => {
    t = await createDomainsEnv();
    const d = await add('example.com');
    publish(t.dns, d);
    t.dns.set(d.records[0]!.name, { CNAME: 'dkim.example.net' });
    t.dns.set('dkim.example.net', { CNAME: d.records[0]!.name });
    const v = await t.env.app.domains.verifyDomain('example.com');
    expect(v.status).toBe('PENDING');
    expect(checkOf(v, 'dkim')).toMatchObject({
      ok: false,
      reason:
        `a CNAME loop: ${d.records[0]!.name} → dkim.example.net → ${d.records[0]!.name}; receivers can read no ` +
        `record at ${d.records[0]!.name}: remove or correct one of these CNAMEs`,
    });
  });

  it('says which name an alias ends at when that name lacks the record', async () => {
    t = await createDomainsEnv();
    const d = await add('example.com');
    publish(t.dns, d);
    t.dns.set('_dmarc.example.com', { CNAME: 'a.example.net' });
    t.dns.set('a.example.net', { CNAME: 'b.example.net' });
    t.dns.set('b.example.net', { A: ['192.0.2.9'] });
    const v = await t.env.app.domains.verifyDomain('example.com');
    expect(checkOf(v, 'dmarc').reason).toBe(
      '_dmarc.example.com is an alias (CNAME) of b.example.net (through a.example.net), which has no TXT record; ' +
        'a name with a CNAME holds no other record: publish the record at b.example.net, or replace the CNAME at ' +
        '_dmarc.example.com with it (recommended, not required)',
    );
  });
});

describe('an SPF record receivers would reject (issue 28, bad input)', () => {
  it('names the term of a record with a syntax error', async () => {
    t = await createDomainsEnv();
    const d = await add('example.com');
    publish(t.dns, d);
    t.dns.set('bounces.example.com', { TXT: [`v=spf1 a:${HOST} incude:_spf.example.net ~all`] });
    const v = await t.env.app.domains.verifyDomain('example.com');
    expect(v.status).toBe('PENDING');
    expect(checkOf(v, 'spf').reason).toBe(
      'the SPF record at bounces.example.com has a syntax error at "incude:_spf.example.net": receivers fail SPF (permerror) for all its mail',
    );
  });

  it('counts DNS lookups through includes and refuses a record that needs more than 10', async () => {
    t = await createDomainsEnv();
    const d = await add('example.com');
    publish(t.dns, d);
    // Three includes of four lookups each, plus our a: 1 + 3 × (1 + 4) = 16.
    for (const n of [1, 2, 3])
      t.dns.set(`_spf${n}.example.net`, { TXT: ['v=spf1 a mx a:x.example.net mx:y.example.net -all'] });
    const record = `v=spf1 a:${HOST} include:_spf1.example.net include:_spf2.example.net include:_spf3.example.net ~all`;
    t.dns.set('bounces.example.com', { TXT: [record] });
    const v = await t.env.app.domains.verifyDomain('example.com');
    expect(v.status).toBe('PENDING');
    expect(checkOf(v, 'spf').reason).toContain(
      'the SPF record at bounces.example.com needs more than 10 DNS lookups (include:, a, mx, ptr, exists:, redirect=, counted through its includes): receivers fail SPF (permerror)',
    );
  });
});
