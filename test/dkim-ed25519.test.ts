import { execFile, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Domain } from '../src/domains/index.ts';
import type { DnsServer } from './peers/dns.ts';
import type { MxPeer } from './peers/mx.ts';
import {
  authenticateReceived,
  receivedFor as received,
  startDeliveryEnv,
  startDestinations,
  type DeliveryEnv,
} from './delivery-helpers.ts';
import { captureLogger, publish } from './domains-helpers.ts';
import { caller, signInMembers } from './management-helpers.ts';

/**
 * Issue 28 item 6: a domain with Ed25519 on carries an RSA and an Ed25519 signature (RFC
 * 8463) on each message, each verified by independent verifiers: mailauth, and dkimpy
 * where it is installed.
 */
let dns: DnsServer;
let mx: MxPeer;
let d: DeliveryEnv;
let domain: Domain;
const log = captureLogger();

/** Publishes every record of `dom`, the keys a rotation waits for included. */
function publishAll(dom: Domain): void {
  publish(dns, dom);
  for (const r of dom.records.filter((x) => x.purpose === 'dkim-next')) dns.set(r.name, { TXT: [r.value] });
}

beforeAll(async () => {
  ({ dns, mx } = await startDestinations());
  d = await startDeliveryEnv(dns, { mxPort: String(mx.port) }, log.logger);
  dns.set('mta.svc.test', { A: ['127.0.0.1'] });
  const { organization_id, project_id } = d.env.init;
  const added = await d.env.app.domains.addDomain({
    name: 'ed.test',
    organization: organization_id,
    project: project_id,
    ed25519: true,
  });
  publishAll(added);
  domain = await d.env.app.domains.verifyDomain('ed.test');
});

afterAll(async () => {
  await d?.env.close();
  await mx?.close();
  await dns?.close();
});

const receivedFor = (to: string) => received(d.env, mx, to);

describe('Ed25519 beside RSA', () => {
  it('lists its own selector and k=ed25519 record with the raw 32-byte key, and signs once that record is seen', () => {
    expect(domain.status).toBe('VERIFIED');
    const keys = domain.dkim_keys.map((k) => [k.algorithm, k.state, k.selector]);
    expect(keys).toEqual([
      ['rsa', 'active', expect.stringMatching(/^svc\d{6}$/)],
      ['ed25519', 'active', expect.stringMatching(/^svc\d{6}ed$/)],
    ]);
    const ed = domain.records.find((r) => r.value.includes('k=ed25519'))!;
    expect(ed).toMatchObject({
      type: 'TXT',
      purpose: 'dkim',
      name: `${domain.dkim_keys[1]!.selector}._domainkey.ed.test`,
    });
    const p = /p=([A-Za-z0-9+/=]+)$/.exec(ed.value)![1]!;
    expect(Buffer.from(p, 'base64')).toHaveLength(32);
  });

  it('puts both signatures on a delivered message, RSA first, and mailauth passes both, and DMARC', async () => {
    await d.send(['both@dest.test'], { from: 'news@ed.test' });
    const m = await receivedFor('both@dest.test');
    const fields = m.raw.toString('latin1').match(/^DKIM-Signature:[^\r\n]*(?:\r\n[ \t][^\r\n]*)*/gim)!;
    expect(fields.map((f) => /a=([\w-]+)/.exec(f)![1])).toEqual(['rsa-sha256', 'ed25519-sha256']);
    const res = await authenticateReceived(m, dns);
    expect(res.dkim.results.map((x) => [x.status.result, x.algo, x.signingDomain])).toEqual([
      ['pass', 'rsa-sha256', 'ed.test'],
      ['pass', 'ed25519-sha256', 'ed.test'],
    ]);
    expect(res.dmarc && res.dmarc.status.result).toBe('pass');
  });

  it('turned off (PATCH …/domains/{id}), stops signing with Ed25519 at once and keeps its record listed as retiring', async () => {
    const call = caller(() => d.env, await signInMembers(d.env, []));
    const res = await call('PATCH', `/v1/organizations/${d.env.init.organization_id}/domains/${domain.id}`, 'OWNER', {
      ed25519: false,
    });
    expect(res.statusCode).toBe(200);
    const off = res.json<{ data: Domain }>().data;
    expect(off.dkim_keys.map((k) => [k.algorithm, k.state])).toEqual([
      ['rsa', 'active'],
      ['ed25519', 'retiring'],
    ]);
    expect(off.records.filter((r) => r.purpose === 'dkim-retiring')).toHaveLength(1);
    await d.send(['rsa-only@dest.test'], { from: 'news@ed.test' });
    const m = await receivedFor('rsa-only@dest.test');
    expect(m.raw.toString('latin1').match(/^DKIM-Signature:/gim)).toHaveLength(1);
  });
});

/** A Python 3 that has dkimpy (Debian's python3-dkim), or undefined. */
function dkimpyPython(): string | undefined {
  return ['python3', '/usr/bin/python3'].find(
    (py) => spawnSync(py, ['-c', 'import dkim, dns.resolver'], { stdio: 'ignore' }).status === 0,
  );
}

/** Verifies every DKIM-Signature of stdin with dkimpy, its keys asked of the test DNS server. */
const DKIMPY = `
import sys, dkim, dns.resolver
r = dns.resolver.Resolver(configure=False)
r.nameservers = ['127.0.0.1']
r.port = int(sys.argv[1])
def txt(name, timeout=5):
    name = name.decode() if isinstance(name, bytes) else name
    return b''.join(r.resolve(name.rstrip('.'), 'TXT')[0].strings)
msg = sys.stdin.buffer.read()
count = sum(1 for k, _ in dkim.rfc822_parse(msg)[0] if k.lower() == b'dkim-signature')
for i in range(count):
    d = dkim.DKIM(msg)
    ok = d.verify(idx=i, dnsfunc=txt)
    print(d.signature_fields[b'a'].decode(), 'pass' if ok else 'fail')
`;

describe.skipIf(dkimpyPython() === undefined)('dkimpy', () => {
  it('verifies both signatures of a delivered message', async () => {
    await d.env.app.domains.setEd25519('ed.test', true);
    publishAll(await d.env.app.domains.getDomain('ed.test'));
    await d.env.app.domains.verifyDomain('ed.test');
    await d.send(['dkimpy@dest.test'], { from: 'news@ed.test' });
    const m = await receivedFor('dkimpy@dest.test');
    const port = dns.server.split(':')[1]!;
    // Asynchronously: the DNS server dkimpy asks answers from this process's event loop.
    const out = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      const child = execFile(dkimpyPython()!, ['-c', DKIMPY, port], (err, stdout, stderr) =>
        err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve({ stdout, stderr }),
      );
      child.stdin!.end(m.raw);
    });
    expect(out.stderr).toBe('');
    expect(out.stdout.trim().split('\n')).toEqual(['rsa-sha256 pass', 'ed25519-sha256 pass']);
  });
});

// Last: it damages the domain's Ed25519 key for good.
describe('an Ed25519 key that cannot sign', () => {
  it('sends with the RSA signature only, which passes, and logs why: the email is not failed', async () => {
    await d.env.app.domains.setEd25519('ed.test', true);
    publishAll(await d.env.app.domains.getDomain('ed.test'));
    await d.env.app.domains.verifyDomain('ed.test');
    // A damaged row: the PEM of something that is no key.
    const pem = `-----BEGIN PRIVATE KEY-----\n${Buffer.from('not a key').toString('base64')}\n-----END PRIVATE KEY-----\n`;
    await d.env.query(
      "UPDATE domain_dkim_keys SET private_key = ? WHERE algorithm = 'ed25519' AND state = 'active'",
      pem,
    );
    await d.send(['damaged@dest.test'], { from: 'news@ed.test' });
    const m = await receivedFor('damaged@dest.test');
    const res = await authenticateReceived(m, dns);
    expect(res.dkim.results.map((x) => [x.status.result, x.algo])).toEqual([['pass', 'rsa-sha256']]);
    const warning = log.lines.find((l) => String(l.msg).includes('cannot sign'));
    expect(warning).toMatchObject({ level: 40, domain: 'ed.test' });
    expect(String(warning!.msg)).toMatch(
      /^the Ed25519 DKIM key svc\d{6}ed(-\d+)? of ed\.test cannot sign \(.+\): sent with RSA only$/,
    );
  });
});
