import { monitorEventLoopDelay } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import nodemailer from 'nodemailer';
import { zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInboundListener, type InboundListener } from '../src/smtp/index.ts';
import { startDnsServer, type DnsServer } from './peers/dns.ts';
import { startMxPeer, type MxPeer } from './peers/mx.ts';
import { count, verifyDomain } from './harness.ts';
import { runSvc } from './cli-runner.ts';
import { listenInbound, settle, startDeliveryEnv, type DeliveryEnv } from './delivery-helpers.ts';
import { login } from './management-helpers.ts';

// DMARC aggregate reports come home (issue 28 item 7): receivers mail them to the rua= of
// svc's DMARC record, dmarc@bounces.<domain>, through the inbound MX, on real sockets.

const SVC_IP = '192.0.2.10';
const SPOOFER_IP = '203.0.113.66';
const REPORT_TO = 'dmarc@bounces.sender.test';
const DAY = 86_400;

let dns: DnsServer;
let mx: MxPeer;
let d: DeliveryEnv;
let inbound: InboundListener;
let port: number;

beforeAll(async () => {
  dns = await startDnsServer();
  mx = await startMxPeer();
  dns.set('dest.test', { MX: [{ exchange: 'mx.dest.test', priority: 10 }] });
  dns.set('mx.dest.test', { A: ['127.0.0.1'] });
  // svc's own outbound address: what its host name resolves to (the a:<hostname> of its SPF).
  dns.set('mta.svc.test', { A: [SVC_IP] });
  d = await startDeliveryEnv(dns, { mxPort: String(mx.port) });
  ({ inbound, port } = await listenInbound(d.env));
});

afterAll(async () => {
  await inbound?.close();
  await d?.env.close();
  await mx?.close();
  await dns?.close();
});

interface Row {
  ip: string;
  count: number;
  dkim: 'pass' | 'fail';
  spf: 'pass' | 'fail';
  /** auth_results: the DKIM signature's result for sender.test. */
  dkimResult?: string;
}

/** An aggregate report as RFC 7489 appendix C describes it, written out by hand. */
function reportXml(o: { id: string; org?: string; domain?: string; begin: number; end: number; rows: Row[] }) {
  const records = o.rows
    .map(
      (r) => `
  <record>
    <row>
      <source_ip>${r.ip}</source_ip>
      <count>${r.count}</count>
      <policy_evaluated><disposition>none</disposition><dkim>${r.dkim}</dkim><spf>${r.spf}</spf></policy_evaluated>
    </row>
    <identifiers><header_from>${o.domain ?? 'sender.test'}</header_from></identifiers>
    <auth_results>
      <dkim><domain>${o.domain ?? 'sender.test'}</domain><selector>svc202603</selector><result>${r.dkimResult ?? r.dkim}</result></dkim>
      <spf><domain>bounces.${o.domain ?? 'sender.test'}</domain><scope>mfrom</scope><result>${r.spf}</result></spf>
    </auth_results>
  </record>`,
    )
    .join('');
  return `<?xml version="1.0" encoding="UTF-8" ?>
<feedback>
  <version>1.0</version>
  <report_metadata>
    <org_name>${o.org ?? 'receiver.example'}</org_name>
    <email>noreply-dmarc@receiver.example</email>
    <report_id>${o.id}</report_id>
    <date_range><begin>${o.begin}</begin><end>${o.end}</end></date_range>
  </report_metadata>
  <policy_published>
    <domain>${o.domain ?? 'sender.test'}</domain><adkim>r</adkim><aspf>r</aspf><p>none</p><sp>none</sp><pct>100</pct>
  </policy_published>${records}
</feedback>
`;
}

type Attachment = { filename: string; content: Buffer; contentType: string };

/** Mails `attachment` to `to` through the inbound MX as a receiver's reporter would; the server's reply. */
async function mailReport(
  attachment: Attachment,
  to = REPORT_TO,
  via: { port?: number; localAddress?: string } = {},
): Promise<{ ok: boolean; reply: string }> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: via.port ?? port,
    secure: false,
    ignoreTLS: true,
    ...(via.localAddress ? { localAddress: via.localAddress } : {}),
  });
  try {
    const info = await transport.sendMail({
      from: 'noreply-dmarc@receiver.example',
      to,
      subject: `Report Domain: sender.test Submitter: receiver.example`,
      text: 'This is an aggregate report from receiver.example.',
      attachments: [attachment],
    });
    return { ok: true, reply: info.response };
  } catch (e) {
    return { ok: false, reply: (e as { response?: string }).response ?? String(e) };
  } finally {
    transport.close();
  }
}

const gz = (xml: string): Attachment => ({
  filename: 'receiver.example!sender.test!1!2.xml.gz',
  content: gzipSync(xml),
  contentType: 'application/gzip',
});
const zip = (xml: string): Attachment => ({
  filename: 'receiver.example!sender.test!1!2.zip',
  content: Buffer.from(zipSync({ 'receiver.example!sender.test!1!2.xml': new TextEncoder().encode(xml) })),
  contentType: 'application/zip',
});
const plain = (xml: string): Attachment => ({
  filename: 'receiver.example!sender.test!1!2.xml',
  content: Buffer.from(xml),
  contentType: 'text/xml',
});

const reports = () => count(d.env, 'dmarc_reports');
const seconds = (ms: number) => Math.floor(ms / 1000);

/** Sends a LIVE email now and delivers it; its id. */
async function deliveredNow(): Promise<string> {
  const id = await d.send(['someone@dest.test']);
  await settle(d.env);
  expect((await d.email(id)).dkim_signing_status).toBe('expected');
  return id;
}

async function reportDays(days?: number): Promise<{ status: number; body: any }> {
  const token = await login(d.env, 'owner@example.com', 'owner-password-1');
  const [domain] = await d.env.query<{ id: string }>("SELECT id FROM domains WHERE name = 'sender.test'");
  const res = await d.env.server.inject({
    method: 'GET',
    url: `/v1/organizations/${d.env.init.organization_id}/domains/${domain!.id}/reports${days ? `?days=${days}` : ''}`,
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: res.statusCode, body: res.json() };
}

describe('DMARC aggregate reports at the inbound MX', () => {
  it("confirms DKIM signing from a gzip report of svc's address, flags a spoofer, and shows both", async () => {
    const id = await deliveredNow();
    const day = seconds(d.env.clock.now());
    const xml = reportXml({
      id: 'r-gzip-1',
      begin: day - 3600,
      end: day + 3600,
      rows: [
        { ip: SVC_IP, count: 12, dkim: 'pass', spf: 'pass' },
        { ip: SPOOFER_IP, count: 3, dkim: 'fail', spf: 'fail', dkimResult: 'none' },
      ],
    });
    const sent = await mailReport(gz(xml));
    expect(sent).toMatchObject({ ok: true });
    expect(sent.reply).toMatch(/^250/);
    expect((await d.email(id)).dkim_signing_status).toBe('confirmed');
    const rows = await d.env.query<Record<string, unknown>>(
      `SELECT w.source_ip, w.count, w.disposition, w.dkim_result, w.dkim_domain, w.spf_result, w.spf_domain,
              w.dkim_aligned, w.spf_aligned, w.own_source, w.flagged
       FROM dmarc_report_rows w JOIN dmarc_reports r ON r.id = w.report_id WHERE r.report_id = 'r-gzip-1' ORDER BY w.n`,
    );
    expect(rows.map((r) => ({ ...r, count: Number(r.count) }))).toEqual([
      {
        source_ip: SVC_IP,
        count: 12,
        disposition: 'none',
        dkim_result: 'pass',
        dkim_domain: 'sender.test',
        spf_result: 'pass',
        spf_domain: 'bounces.sender.test',
        dkim_aligned: 'pass',
        spf_aligned: 'pass',
        own_source: 1,
        flagged: 0,
      },
      {
        source_ip: SPOOFER_IP,
        count: 3,
        disposition: 'none',
        dkim_result: 'none',
        dkim_domain: 'sender.test',
        spf_result: 'fail',
        spf_domain: 'bounces.sender.test',
        dkim_aligned: 'fail',
        spf_aligned: 'fail',
        own_source: 0,
        flagged: 1,
      },
    ]);

    const api = await reportDays();
    expect(api.status).toBe(200);
    const today = new Date(d.env.clock.now()).toISOString().slice(0, 10);
    expect(api.body.data).toEqual([
      {
        day: today,
        source_ip: SVC_IP,
        count: 12,
        spf_pass: 12,
        dkim_pass: 12,
        dmarc_pass: 12,
        own_source: true,
        flagged: false,
        reporters: ['receiver.example'],
      },
      {
        day: today,
        source_ip: SPOOFER_IP,
        count: 3,
        spf_pass: 0,
        dkim_pass: 0,
        dmarc_pass: 0,
        own_source: false,
        flagged: true,
        reporters: ['receiver.example'],
      },
    ]);
  });

  it('svc doctor warns of the sources not svc that failed DMARC', async () => {
    const report = await d.env.app
      .doctor({
        addresses: () => Promise.resolve([]),
        connect: () => Promise.resolve({ ok: false, reason: 'ECONNREFUSED' }),
      })
      .run();
    expect(report.checks.find((c) => c.check === 'dmarc_reports')).toEqual({
      check: 'dmarc_reports',
      subject: 'sender.test',
      status: 'warn',
      detail: `DMARC reports of the last 7 days: 3 messages from ${SPOOFER_IP}, not this server, failed DMARC`,
      fix: expect.stringContaining('svc domains report sender.test'),
    });
  });

  it('takes zip and plain XML reports, and a report sent twice is recorded once', async () => {
    const day = seconds(d.env.clock.now());
    const rows: Row[] = [{ ip: SVC_IP, count: 5, dkim: 'pass', spf: 'pass' }];
    const before = await reports();
    expect((await mailReport(zip(reportXml({ id: 'r-zip-1', begin: day, end: day + 60, rows })))).ok).toBe(true);
    expect((await mailReport(plain(reportXml({ id: 'r-xml-1', begin: day, end: day + 60, rows })))).ok).toBe(true);
    expect(await reports()).toBe(before + 2);
    // The same org_name and report_id again, even packed otherwise: 250, and nothing new.
    const again = await mailReport(gz(reportXml({ id: 'r-zip-1', begin: day, end: day + 60, rows })));
    expect(again.reply).toMatch(/^250/);
    expect(await reports()).toBe(before + 2);
    expect(await count(d.env, 'dmarc_report_rows', 'source_ip = ? AND count = 5', SVC_IP)).toBe(2);
  });

  it("fails DKIM signing when svc's rows show the signature failing over the period the email was sent in", async () => {
    const confirmed = (
      await d.env.query<{ id: string }>("SELECT id FROM emails WHERE dkim_signing_status = 'confirmed'")
    ).length;
    d.env.clock.advance(3 * DAY * 1000);
    const id = await deliveredNow();
    const now = seconds(d.env.clock.now());
    const xml = reportXml({
      id: 'r-fail-1',
      begin: now - 600,
      end: now + 600,
      rows: [{ ip: SVC_IP, count: 4, dkim: 'fail', spf: 'pass', dkimResult: 'fail' }],
    });
    expect((await mailReport(gz(xml))).ok).toBe(true);
    expect((await d.email(id)).dkim_signing_status).toBe('failed');
    // Emails outside the report's range keep their status.
    expect((await d.env.query("SELECT id FROM emails WHERE dkim_signing_status = 'confirmed'")).length).toBe(confirmed);
  });
});

describe('a report at the caps', () => {
  it('is read off the event loop: the server answers HTTP while it is unpacked and parsed', async () => {
    const begin = seconds(d.env.clock.now()) - 20 * DAY;
    // 20,000 records (the cap), ~10 MB of XML: seconds of CPU to parse.
    const rows = Array.from({ length: 20_000 }, (_, i) => ({
      ip: `198.19.${i >> 8}.${i & 255}`,
      count: 1,
      dkim: 'pass' as const,
      spf: 'pass' as const,
    }));
    const attachment = gz(reportXml({ id: 'r-at-the-caps', begin, end: begin + 60, rows }));
    const delay = monitorEventLoopDelay({ resolution: 10 });
    // The longest wait between two answers of GET /healthz, asked every 10 ms meanwhile.
    let longestGap = 0;
    let answered = false;
    delay.enable();
    const sent = mailReport(attachment).finally(() => (answered = true));
    for (let last = performance.now(); !answered;) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect((await d.env.server.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
      longestGap = Math.max(longestGap, performance.now() - last);
      last = performance.now();
    }
    delay.disable();
    expect((await sent).reply).toMatch(/^250 /);
    expect(await count(d.env, 'dmarc_report_rows', "source_ip LIKE '198.19.%'")).toBe(20_000);
    // On the main thread the parse held the loop 2 to 5 s; what is left there (the SMTP
    // session, storing the rows) stays well under a second.
    expect(delay.max / 1e6).toBeLessThan(1000);
    expect(longestGap).toBeLessThan(1000);
  });
});

describe('bad reports get a clear answer', () => {
  const day = () => seconds(d.env.clock.now());
  const good = (id: string) =>
    reportXml({ id, begin: day(), end: day() + 60, rows: [{ ip: SVC_IP, count: 1, dkim: 'pass', spf: 'pass' }] });

  it('refuses a zip bomb and a gzip bomb at the decompression cap, without inflating them whole', async () => {
    // 20 MiB of one repeated byte packs into ~20 KB; the cap is 16 MiB of XML.
    const huge = new Uint8Array(20 * 1024 * 1024).fill(0x20);
    const bomb = Buffer.from(zipSync({ 'bomb.xml': huge }, { level: 1 }));
    expect(bomb.length).toBeLessThan(32 * 1024);
    const rss = process.memoryUsage().rss;
    const before = await reports();
    const zipped = await mailReport({ filename: 'bomb.zip', content: bomb, contentType: 'application/zip' });
    expect(zipped).toEqual({ ok: false, reply: expect.stringMatching(/^554 5\.6\.0 .*more than 16777216 bytes/) });
    const gzipped = await mailReport({
      filename: 'bomb.xml.gz',
      content: gzipSync(huge),
      contentType: 'application/gzip',
    });
    expect(gzipped).toEqual({ ok: false, reply: expect.stringMatching(/^554 5\.6\.0 .*more than 16777216 bytes/) });
    expect(process.memoryUsage().rss - rss).toBeLessThan(200 * 1024 * 1024);
    expect(await reports()).toBe(before);
  });

  it('refuses a truncated gzip, malformed XML, an oversized attachment and a document that is not a report, each with its reason', async () => {
    const whole = gzipSync(good('r-trunc'));
    const cases: [Attachment, RegExp][] = [
      [{ ...gz(''), content: whole.subarray(0, whole.length - 20) }, /gzip attachment is truncated or corrupt/],
      [plain(good('r-bad').replace('</feedback>', '')), /not well-formed XML \(line \d+: /],
      [plain('<?xml version="1.0"?><html><body>hi</body></html>'), /root element is not <feedback>/],
      [plain(good('r-noid').replace(/<report_id>.*<\/report_id>/, '')), /no <report_id> in <report_metadata>/],
      [{ filename: 'notes.txt', content: Buffer.from('hello'), contentType: 'text/plain' }, /no report attached/],
      // Oversized: an attachment over 5 MiB is refused before it is read (the message fits in 10 MiB).
      [{ ...plain(''), content: Buffer.alloc(5 * 1024 * 1024 + 1, 0x20) }, /attachment is 5242881 bytes, over 5242880/],
    ];
    for (const [attachment, reason] of cases) {
      const sent = await mailReport(attachment);
      expect(sent.ok, reason.source).toBe(false);
      expect(sent.reply).toMatch(/^554 5\.6\.0 DMARC report refused: /);
      expect(sent.reply).toMatch(reason);
    }
  });

  it('refuses a date range a forger would use (1970 to 9999, past year 275760, reversed) and moves no email', async () => {
    const id = await deliveredNow();
    const forged = (rid: string, begin: number, end: number) =>
      reportXml({ id: rid, begin, end, rows: [{ ip: SVC_IP, count: 1, dkim: 'fail', spf: 'fail' }] });
    const cases: [string, RegExp][] = [
      [forged('r-range-1', 0, 253_402_300_799), /date range ends in the future \(end 253402300799\)/],
      [forged('r-range-2', 0, 999_999_999_999_999), /date range ends in the future/],
      [forged('r-range-3', day(), day() - 60), /date range begins after it ends/],
      [forged('r-range-4', 0, day()), /date range spans \d+ days, over 31/],
    ];
    const before = await reports();
    for (const [xml, reason] of cases) {
      const sent = await mailReport(gz(xml));
      expect(sent.reply, reason.source).toMatch(/^554 5\.6\.0 DMARC report refused: /);
      expect(sent.reply).toMatch(reason);
    }
    expect(await reports()).toBe(before);
    expect((await d.email(id)).dkim_signing_status).toBe('expected');
  });

  it("answers 451 when svc's own addresses cannot be looked up for now, rather than flag its own rows", async () => {
    const before = await reports();
    // Twenty days back: its row stays off the days the report table below reads.
    const xml = reportXml({
      id: 'r-servfail',
      begin: day() - 20 * DAY,
      end: day() - 20 * DAY + 60,
      rows: [{ ip: SVC_IP, count: 1, dkim: 'pass', spf: 'pass' }],
    });
    dns.set('mta.svc.test', { rcode: 'SERVFAIL' });
    try {
      const sent = await mailReport(gz(xml));
      expect(sent).toEqual({ ok: false, reply: expect.stringMatching(/^451 4\.3\.0 /) });
    } finally {
      dns.set('mta.svc.test', { A: [SVC_IP] });
    }
    expect(await reports()).toBe(before);
    const retried = await mailReport(gz(xml));
    expect(retried.reply).toMatch(/^250 /);
    expect(await count(d.env, 'dmarc_report_rows', 'source_ip = ? AND own_source = 1 AND flagged = 0', SVC_IP)).toBe(
      await count(d.env, 'dmarc_report_rows', 'source_ip = ?', SVC_IP),
    );
  });

  it('svc doctor names five flagged addresses and counts the rest, however many a report holds', async () => {
    const rows = Array.from({ length: 40 }, (_, i) => ({
      ip: `198.18.0.${i + 1}`,
      count: 100 - i,
      dkim: 'fail' as const,
      spf: 'fail' as const,
    }));
    const xml = reportXml({ id: 'r-many-spoofers', begin: day(), end: day() + 60, rows });
    expect((await mailReport(gz(xml))).reply).toMatch(/^250 /);
    const doctor = await d.env.app
      .doctor({
        addresses: () => Promise.resolve([]),
        connect: () => Promise.resolve({ ok: false, reason: 'ECONNREFUSED' }),
      })
      .run();
    const warned = doctor.checks.find((c) => c.check === 'dmarc_reports')!;
    expect(warned.detail).toMatch(
      / from 198\.18\.0\.1, 198\.18\.0\.2, 198\.18\.0\.3, 198\.18\.0\.4, 198\.18\.0\.5 and \d+ more, /,
    );
  });

  it('takes a report about the domain written with its root dot', async () => {
    const xml = reportXml({
      id: 'r-root-dot',
      domain: 'Sender.TEST.',
      begin: day(),
      end: day() + 60,
      rows: [{ ip: '198.51.100.7', count: 1, dkim: 'pass', spf: 'pass' }],
    });
    expect((await mailReport(gz(xml))).reply).toMatch(/^250 /);
  });

  it('refuses the report address of a domain svc does not have, and a report about one', async () => {
    const unknownAddress = await mailReport(gz(good('r-unknown-1')), 'dmarc@bounces.unknown.test');
    expect(unknownAddress).toEqual({ ok: false, reply: expect.stringMatching(/^550 5\.1\.1 /) });
    const aboutOther = reportXml({
      id: 'r-unknown-2',
      domain: 'unknown.test',
      begin: day(),
      end: day() + 60,
      rows: [],
    });
    const sent = await mailReport(gz(aboutOther));
    expect(sent.reply).toMatch(/^554 5\.6\.0 .*about unknown\.test, not a domain of this server/);
  });

  it("refuses a report about another of svc's domains sent to this domain's address", async () => {
    await verifyDomain(d.env, 'other.test');
    const before = await reports();
    const xml = reportXml({ id: 'r-crossed', domain: 'other.test', begin: day(), end: day() + 60, rows: [] });
    const sent = await mailReport(gz(xml));
    expect(sent.reply).toMatch(
      /^554 5\.6\.0 .*about other\.test but was sent to dmarc@bounces\.sender\.test: .*dmarc@bounces\.other\.test/,
    );
    expect(await reports()).toBe(before);
    // At its own domain's address it is taken.
    expect((await mailReport(gz(xml), 'dmarc@bounces.other.test')).reply).toMatch(/^250 /);
  });
});

describe('svc domains report', () => {
  it('prints the days and source IPs with a flag column; the API refuses days past a year', async () => {
    // The CLI counts days back from the real time, the reports from the test's clock (2026-03).
    const days = Math.ceil((Date.now() - d.env.clock.now()) / (DAY * 1000)) + 3;
    const run = await runSvc(d.env.dir, ['domains', 'report', 'sender.test', '--days', String(days)], d.env.cliEnv);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^DMARC aggregate reports for sender\\.test, last ${days} days:`));
    expect(run.stdout).toMatch(/DAY +SOURCE_IP +COUNT +SPF +DKIM +DMARC +FLAG +REPORTERS/);
    expect(run.stdout).toMatch(new RegExp(`${SPOOFER_IP} +3 +fail +fail +fail +NOT SVC, FAILS DMARC`));
    expect(run.stdout).toMatch(new RegExp(`${SVC_IP} +4 +pass +fail +pass +svc`));
    expect(run.stdout).toMatch(/warning: mail from addresses that are not this server failed DMARC/);
    const api = await reportDays(400);
    expect(api.status).toBe(422);
  });
});

describe('mail sent through a smarthost (--relay)', () => {
  it("counts the relay's addresses as svc's own: its rows are not flagged as a spoofer's", async () => {
    const RELAY_IP = '198.51.100.25';
    const RELAY_IP6 = '2001:db8::25';
    dns.set('smarthost.test', { A: [RELAY_IP], AAAA: [RELAY_IP6] });
    const relayed = await startDeliveryEnv(dns, { mxPort: String(mx.port), relay: 'smtp://smarthost.test:2525' });
    const listener = createInboundListener(relayed.env.app, {
      host: '127.0.0.1',
      port: 0,
      maxSessions: 10,
      idleTimeoutMs: 10_000,
      closeTimeoutMs: 50,
    });
    try {
      const at = await listener.listen();
      const day = seconds(relayed.env.clock.now());
      // The relay's rows fail DMARC here (say a key not yet published): svc's own, not flagged.
      const rows: Row[] = [
        { ip: RELAY_IP, count: 7, dkim: 'fail', spf: 'fail' },
        { ip: RELAY_IP6, count: 2, dkim: 'fail', spf: 'fail' },
        { ip: SPOOFER_IP, count: 1, dkim: 'fail', spf: 'fail' },
      ];
      const sent = await mailReport(gz(reportXml({ id: 'r-relay', begin: day, end: day + 60, rows })), REPORT_TO, {
        port: at,
      });
      expect(sent.reply).toMatch(/^250 /);
      const stored = await relayed.env.query<{ source_ip: string; own_source: number; flagged: number }>(
        'SELECT source_ip, own_source, flagged FROM dmarc_report_rows ORDER BY n',
      );
      expect(stored).toEqual([
        { source_ip: RELAY_IP, own_source: 1, flagged: 0 },
        { source_ip: RELAY_IP6, own_source: 1, flagged: 0 },
        { source_ip: SPOOFER_IP, own_source: 0, flagged: 1 },
      ]);
    } finally {
      await listener.close();
      await relayed.env.close();
    }
  });
});

describe('a daily limit per reporter', () => {
  it('takes 50 reports a day from one reporter about a domain, by org_name and by address, then answers 452 until the next day', async () => {
    await verifyDomain(d.env, 'limits.test');
    const to = 'dmarc@bounces.limits.test';
    const day = seconds(d.env.clock.now());
    const report = (id: string, org: string) =>
      gz(
        reportXml({
          id,
          org,
          domain: 'limits.test',
          begin: day,
          end: day + 60,
          rows: [{ ip: SVC_IP, count: 1, dkim: 'pass', spf: 'pass' }],
        }),
      );
    // Loopback has all of 127/8: a second source address without leaving the machine.
    const first = { localAddress: '127.0.0.1' };
    const second = { localAddress: '127.0.0.2' };
    for (let i = 1; i <= 50; i++) {
      expect((await mailReport(report(`flood-${i}`, 'flood.example'), to, first)).reply, `report ${i}`).toMatch(
        /^250 /,
      );
    }
    const before = await reports();
    // The 51st by the same org_name, from another address: its org_name is at the limit.
    expect(await mailReport(report('flood-51', 'Flood.Example'), to, second)).toEqual({
      ok: false,
      reply: expect.stringMatching(
        /^452 4\.3\.1 DMARC report limit reached: Flood\.Example has sent 50 DMARC reports about limits\.test today, .*\(50 a day\)/,
      ),
    });
    // Another org_name from the first address: the address is at the limit.
    expect(await mailReport(report('renamed-1', 'renamed.example'), to, first)).toEqual({
      ok: false,
      reply: expect.stringMatching(
        /^452 4\.3\.1 .*the address 127\.0\.0\.1 has sent 50 DMARC reports about limits\.test today/,
      ),
    });
    expect(await reports()).toBe(before);
    // A report already recorded is still answered 250 (reporters resend after a timeout); other
    // reporters from other addresses, and other domains, are not held up.
    expect((await mailReport(report('flood-7', 'flood.example'), to, first)).reply).toMatch(/^250 /);
    expect((await mailReport(report('renamed-1', 'renamed.example'), to, second)).reply).toMatch(/^250 /);
    const otherDomain = reportXml({ id: 'limits-other-domain', begin: day, end: day + 60, rows: [] });
    expect((await mailReport(gz(otherDomain), REPORT_TO, first)).reply).toMatch(/^250 /);
    expect(await reports()).toBe(before + 2);
    // The next UTC day, the reporter is taken again.
    d.env.clock.advance(DAY * 1000);
    expect((await mailReport(report('flood-52', 'flood.example'), to, first)).reply).toMatch(/^250 /);
  });
});
