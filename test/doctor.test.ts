import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDoctor, createDoctorDns, type DoctorReport } from '../src/doctor/index.ts';
import { runSvc } from './cli-runner.ts';
import { captureLogger, createDomainsEnv, HOST, HOST_IPV4, publish, type DomainsEnv } from './domains-helpers.ts';
import { startMxPeer, type MxPeer } from './peers/mx.ts';

// svc doctor against a real DNS server and a real MX peer on loopback: nothing leaves the machine.

const UNCONFIRMED = '192.0.2.8';
let d: DomainsEnv;
let mx: MxPeer;
const log = captureLogger();

beforeAll(async () => {
  mx = await startMxPeer();
  d = await createDomainsEnv('UNLIMITED', { mxPort: String(mx.port) }, log.logger);
  // 192.0.2.7 is confirmed (PTR -> mx.svc.test -> 192.0.2.7); 192.0.2.8's PTR names a host without it.
  d.dns.set('7.2.0.192.in-addr.arpa', { PTR: [HOST] });
  d.dns.set('8.2.0.192.in-addr.arpa', { PTR: ['other.svc.test'] });
  d.dns.set('other.svc.test', { A: ['198.51.100.1'] });
  // The port 25 check's MX: the loopback peer (the env's --mx-port is its port).
  d.dns.set('gmail.com', { MX: [{ exchange: 'mx.peer.test', priority: 5 }] });
  d.dns.set('mx.peer.test', { A: ['127.0.0.1'] });
  d.dns.set('7.2.0.192.zen.spamhaus.org', { A: ['127.0.0.4'] });
  d.dns.set('8.2.0.192.zen.spamhaus.org', { A: ['127.255.255.254'] });
  publish(d.dns, await d.env.app.domains.addDomain({ name: 'example.com', organization: 'Acme' }));
});
afterAll(async () => {
  await d.close();
  await mx.close();
});

const find = (r: DoctorReport, check: string, subject: string) =>
  r.checks.find((c) => c.check === check && c.subject === subject);

describe('svc doctor', () => {
  let report: DoctorReport;
  beforeAll(async () => {
    report = await d.env.app.doctor({ addresses: () => Promise.resolve([HOST_IPV4, UNCONFIRMED]) }).run();
  });

  it('checks the host name and the forward-confirmed reverse DNS of each outbound address', () => {
    expect(find(report, 'hostname', HOST)).toMatchObject({ status: 'ok' });
    expect(find(report, 'fcrdns', HOST_IPV4)).toMatchObject({
      status: 'ok',
      detail: `${HOST_IPV4} -> ${HOST} -> ${HOST_IPV4}, and svc says HELO ${HOST}`,
    });
    expect(find(report, 'fcrdns', UNCONFIRMED)).toMatchObject({
      status: 'fail',
      detail: `${UNCONFIRMED}'s PTR names other.svc.test, whose A/AAAA records do not include ${UNCONFIRMED}`,
      fix: `publish an A (or AAAA) record other.svc.test -> ${UNCONFIRMED}`,
    });
  });

  it('connects to one MX on the MX port, timed, and warns (never fails) when it cannot', async () => {
    expect(find(report, 'port25', `gmail.com:${mx.port}`)).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(
        new RegExp(`^connected to mx.peer.test \\(127.0.0.1\\) port ${mx.port} in \\d+ ms$`),
      ),
    });
    const closed = await d.env.app
      .doctor({
        addresses: () => Promise.resolve([]),
        connect: () => Promise.resolve({ ok: false, reason: 'ECONNREFUSED' }),
      })
      .run();
    expect(find(closed, 'port25', `gmail.com:${mx.port}`)).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining('ECONNREFUSED'),
      fix: expect.stringContaining('--relay'),
    });
  });

  it('reads blocklist answers: listed with its meaning, refused (open resolver) as unknown, NXDOMAIN as clear', () => {
    expect(find(report, 'blocklist', `${HOST_IPV4} on zen.spamhaus.org`)).toMatchObject({
      status: 'fail',
      detail: `${HOST_IPV4} is listed on zen.spamhaus.org: XBL (an infected or exploited host)`,
    });
    expect(find(report, 'blocklist', `${UNCONFIRMED} on zen.spamhaus.org`)).toMatchObject({ status: 'warn' });
    expect(find(report, 'blocklist', `${HOST_IPV4} on bl.spamcop.net`)).toMatchObject({ status: 'ok' });
    expect(find(report, 'blocklist', `${HOST_IPV4} on b.barracudacentral.org`)).toMatchObject({ status: 'ok' });
    expect(d.dns.queries).toContain('A 7.2.0.192.zen.spamhaus.org');
  });

  it("reports each domain's DKIM, SPF, DMARC and return path, and changes nothing", async () => {
    for (const check of ['dkim', 'spf', 'dmarc', 'return_path']) {
      expect(find(report, check, 'example.com')).toMatchObject({ status: 'ok' });
    }
    expect((await d.env.app.domains.getDomain('example.com')).status).toBe('PENDING');
    expect(report.status).toBe('fail');
  });

  it('asks each blocklist once per address while its answer is cached', async () => {
    const doctor = d.env.app.doctor({ addresses: () => Promise.resolve([HOST_IPV4]) });
    const asked = () => d.dns.queries.filter((q) => q === 'A 7.2.0.192.bl.spamcop.net').length;
    const before = asked();
    await doctor.run();
    await doctor.run();
    expect(asked() - before).toBe(1);
    d.env.clock.advance(3_600_001);
    await doctor.run();
    expect(asked() - before).toBe(2);
  });

  it('answers a resolver that times out with a warning naming the timeout; the other checks still run', async () => {
    d.dns.set('9.2.0.192.in-addr.arpa', { silent: true });
    const doctor = createDoctor({
      clock: d.env.clock,
      dns: createDoctorDns([d.dns.server], { timeoutMs: 100, tries: 1 }),
      hostname: HOST,
      domains: { listDomainIds: () => Promise.resolve([]), findDomainById: () => Promise.resolve(undefined) },
      mxPort: mx.port,
      relay: false,
      addresses: () => Promise.resolve(['192.0.2.9']),
    });
    const r = await doctor.run();
    expect(find(r, 'fcrdns', '192.0.2.9')).toEqual({
      check: 'fcrdns',
      subject: '192.0.2.9',
      status: 'warn',
      detail: 'no answer from the DNS server within 100 ms looking up PTR of 192.0.2.9 (timeout)',
      fix: 'check the resolver (--dns-servers)',
    });
    expect(find(r, 'port25', `gmail.com:${mx.port}`)).toMatchObject({ status: 'ok' });
  });
});

describe('svc serve runs the doctor', () => {
  it('puts the latest report in /readyz (still 200 ready), a gauge per check in /metrics, and warns once', async () => {
    d.env.app.startDoctor({ addresses: () => Promise.resolve([HOST_IPV4]) });
    const ready = async () => (await d.env.server.inject({ url: '/readyz' })).json<{ data: Record<string, unknown> }>();
    const reported = async (at: string) => {
      for (let i = 0; i < 200; i++) {
        if ((d.env.app.doctorReport()?.checked_at ?? '') >= at) return;
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    expect((await ready()).data.doctor).toBeUndefined();
    d.env.clock.advance(1);
    await reported(new Date(d.env.clock.now()).toISOString());
    const res = await d.env.server.inject({ url: '/readyz' });
    expect(res.statusCode).toBe(200);
    const data = res.json<{ data: { status: string; doctor: DoctorReport } }>().data;
    expect(data.status).toBe('ready');
    expect(data.doctor.status).toBe('fail');
    const metrics = (await d.env.server.inject({ url: '/metrics' })).body;
    expect(metrics).toContain(`svc_doctor_check{check="fcrdns",subject="${HOST_IPV4}"} 1`);
    expect(metrics).toContain(`svc_doctor_check{check="blocklist",subject="${HOST_IPV4} on zen.spamhaus.org"} 0`);
    expect(metrics).toMatch(/^svc_doctor_failing [1-9]/m);
    const warned = log.lines.filter((l) => l.check === 'blocklist' && l.subject === `${HOST_IPV4} on zen.spamhaus.org`);
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ level: 40, status: 'fail' });
    // An hour on, the checks run again; a check still bad is not warned about again.
    d.env.clock.advance(3_600_000);
    await reported(new Date(d.env.clock.now()).toISOString());
    expect(d.env.app.doctorReport()!.checked_at).toBe(new Date(d.env.clock.now()).toISOString());
    expect(
      log.lines.filter((l) => l.check === 'blocklist' && l.subject === `${HOST_IPV4} on zen.spamhaus.org`),
    ).toHaveLength(1);
  });
});

describe('svc doctor (CLI)', () => {
  it('prints one line per check and exits 1 when one fails; --json prints the report', async () => {
    const args = ['doctor', '--dns-servers', d.dns.server, '--hostname', HOST, '--mx-port', String(mx.port)];
    const env = d.env.cliEnv;
    const human = await runSvc(d.env.dir, [...args, '--address', HOST_IPV4, '--address', UNCONFIRMED], env);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain(`ok    fcrdns ${HOST_IPV4}: ${HOST_IPV4} -> ${HOST} -> ${HOST_IPV4}`);
    expect(human.stdout).toContain(`fail  fcrdns ${UNCONFIRMED}: `);
    expect(human.stdout).toContain('(fix: publish an A (or AAAA) record other.svc.test');
    const json = await runSvc(d.env.dir, [...args, '--address', UNCONFIRMED, '--json'], env);
    expect(json.code).toBe(1);
    expect(find(json.json() as DoctorReport, 'hostname', HOST)).toMatchObject({ status: 'ok' });
    const wrong = await runSvc(d.env.dir, [...args, '--address', 'mta.example.com'], env);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('error: --address wants an IPv4 or IPv6 address, got "mta.example.com"');
  });

  it('given no flags, checks with the resolver, host name and MX port the server recorded', async () => {
    // What `svc serve` does at start: the env's app runs with the peer's MX port and the test DNS.
    await d.env.app.recordServerSettings();
    const env = { ...d.env.cliEnv, SVC_DNS_SERVERS: '', SVC_HOSTNAME: '', SVC_MX_PORT: '' };
    const r = await runSvc(d.env.dir, ['doctor', '--address', HOST_IPV4, '--json'], env);
    const report = r.json() as DoctorReport;
    expect(find(report, 'hostname', HOST)).toMatchObject({ status: 'ok' });
    expect(find(report, 'port25', `gmail.com:${mx.port}`)).toMatchObject({ status: 'ok' });
  });
});
