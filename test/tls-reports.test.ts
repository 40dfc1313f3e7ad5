import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import type { ObservedTls } from '../src/tlsrpt/index.ts';
import { makeCertificate } from './peers/certificates.ts';
import { startDnsServer, type DnsServer } from './peers/dns.ts';
import { startMxPeer, type MxPeer } from './peers/mx.ts';
import { count } from './harness.ts';
import { settle, startDeliveryEnv, verifyDkim, type DeliveryEnv } from './delivery-helpers.ts';
import { captureLogger } from './domains-helpers.ts';

// TLS reporting (RFC 8460; issue 32, item 3): outcomes fed as the delivery engine reports them
// (observeTls), the clock moved past midnight, and the day's report as an HTTPS rua on loopback
// and a mail rua at a loopback MX receive it.

interface Posted {
  path: string;
  contentType: string | undefined;
  body: Buffer;
}

/** An HTTPS rua on 127.0.0.1 (its CA made here): records raw bodies, answers `status`. */
async function startRua() {
  const tls = await makeCertificate({ names: ['rua.test'] });
  const r = { posts: [] as Posted[], status: 200, ca: tls.ca, port: 0, server: undefined as Server | undefined };
  r.server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      r.posts.push({ path: req.url ?? '', contentType: req.headers['content-type'], body: Buffer.concat(chunks) });
      res.writeHead(r.status).end();
    });
  });
  await new Promise<void>((resolve) => r.server!.listen(0, '127.0.0.1', resolve));
  r.port = (r.server.address() as AddressInfo).port;
  return r;
}

const STS = ['version: STSv1', 'mode: enforce', 'mx: mx.dest.test', 'max_age: 86400'];
const outcome = (over: Partial<ObservedTls> = {}): ObservedTls => ({
  policy_type: 'sts',
  policy_string: STS,
  policy_domain: 'dest.test',
  mx_host: 'mx.dest.test',
  receiving_ip: '127.0.0.1',
  sending_ip: '127.0.0.1',
  result: 'success',
  failure_reason: null,
  ...over,
});
const expired = outcome({ result: 'certificate-expired', failure_reason: 'certificate has expired' });

let dns: DnsServer;
let mx: MxPeer;
let rua: Awaited<ReturnType<typeof startRua>>;
let logs: Record<string, unknown>[];

beforeAll(async () => {
  dns = await startDnsServer();
  mx = await startMxPeer();
  rua = await startRua();
  dns.set('dest.test', { MX: [{ exchange: 'mx.dest.test', priority: 10 }] });
  dns.set('mx.dest.test', { A: ['127.0.0.1'] });
  dns.set('rua.test', { A: ['127.0.0.1'] });
  dns.set('_smtp._tls.dest.test', {
    TXT: [
      `v=TLSRPTv1; rua=https://rua.test:${rua.port}/tlsrpt,mailto:tlsrpt@dest.test,ftp://rua.test/x`,
      'v=spf1 -all',
    ],
  });
  dns.set('_smtp._tls.ftp-only.test', { TXT: ['v=TLSRPTv1; rua=ftp://rua.test/x'] });
});

afterAll(async () => {
  await mx.close();
  await dns.close();
  await new Promise((resolve) => rua.server?.close(resolve));
});

/** A delivery env with --tls-reports (or not) whose reports by mail come from sender.test. */
async function envWith(tlsReports: boolean, insecure = true): Promise<DeliveryEnv> {
  const captured = captureLogger();
  logs = captured.lines;
  return startDeliveryEnv(
    dns,
    {
      mxPort: String(mx.port),
      allowInsecureWebhooks: insecure,
      tlsReports,
      tlsReportsFrom: 'tls-reports@sender.test',
    },
    captured.logger,
    { webhookCa: [rua.ca] },
  );
}

const NEXT_DAY = '2026-03-16T00:30:00.000Z';

describe('TLS reports with --tls-reports', () => {
  let d: DeliveryEnv;
  beforeAll(async () => {
    d = await envWith(true);
    const tls = d.env.app.tlsReports;
    tls.observe([outcome(), outcome(), expired]);
    tls.observe([outcome(), outcome({ policy_domain: 'no-record.test' }), outcome({ policy_domain: 'ftp-only.test' })]);
    // Before midnight and its delay nothing is sent; the counts reach the store.
    await tls.runOnce();
    expect(rua.posts).toHaveLength(0);
    expect(await count(d.env, 'tls_report_counts')).toBe(4);
    d.env.clock.set(NEXT_DAY);
    await tls.runOnce();
    await settle(d.env);
  });
  afterAll(() => d.env.close());

  it('POSTs the gzipped JSON of RFC 8460 section 4 to the https rua, with the right counts and failure details', () => {
    expect(rua.posts).toHaveLength(1);
    const post = rua.posts[0]!;
    expect(post.path).toBe('/tlsrpt');
    expect(post.contentType).toBe('application/tlsrpt+gzip');
    const report = JSON.parse(gunzipSync(post.body).toString('utf8'));
    expect(report).toEqual({
      'organization-name': 'mta.svc.test',
      'date-range': { 'start-datetime': '2026-03-15T00:00:00Z', 'end-datetime': '2026-03-15T23:59:59Z' },
      'contact-info': 'tls-reports@sender.test',
      'report-id': expect.stringMatching(/^2026-03-15\.[0-9a-f]{16}@mta\.svc\.test$/),
      policies: [
        {
          policy: {
            'policy-type': 'sts',
            'policy-string': STS,
            'policy-domain': 'dest.test',
            'mx-host': ['mx.dest.test'],
          },
          summary: { 'total-successful-session-count': 3, 'total-failure-session-count': 1 },
          'failure-details': [
            {
              'result-type': 'certificate-expired',
              'sending-mta-ip': '127.0.0.1',
              'receiving-mx-hostname': 'mx.dest.test',
              'receiving-ip': '127.0.0.1',
              'failed-session-count': 1,
              'failure-reason-code': 'certificate has expired',
            },
          ],
        },
      ],
    });
  });

  it('mails the same report to the mailto rua through the queue: the labels of section 5.3, DKIM-signed by the From domain', async () => {
    const m = mx.received.find((x) => x.to.includes('tlsrpt@dest.test'));
    expect(m).toBeDefined();
    const parsed = await simpleParser(m!.raw);
    const report = JSON.parse(gunzipSync(rua.posts[0]!.body).toString('utf8'));
    const id = report['report-id'] as string;
    expect(parsed.from?.text).toBe('tls-reports@sender.test');
    expect(parsed.subject).toBe(`Report Domain: dest.test Submitter: mta.svc.test Report-ID: <${id}>`);
    expect(parsed.headers.get('tls-report-domain')).toBe('dest.test');
    expect(parsed.headers.get('tls-report-submitter')).toBe('mta.svc.test');
    // RFC 8460 section 5.3: the message is a multipart/report of report-type tlsrpt (RFC 6522).
    expect(parsed.headers.get('content-type')).toMatchObject({
      value: 'multipart/report',
      params: expect.objectContaining({ 'report-type': 'tlsrpt' }),
    });
    const [attachment] = parsed.attachments;
    expect(attachment?.contentType).toBe('application/tlsrpt+gzip');
    const unique = id.replace(/[^A-Za-z0-9._-]/g, '_');
    expect(attachment?.filename).toBe(`mta.svc.test!dest.test!1773532800!1773619199!${unique}.json.gz`);
    expect(JSON.parse(gunzipSync(attachment!.content).toString('utf8'))).toEqual(report);
    expect(await verifyDkim(m!.raw, dns)).toMatchObject({ status: 'pass', domain: 'sender.test' });
  });

  it('records each report: sent with its destinations (the ftp rua ignored), skipped without a usable record', async () => {
    const reports = await d.env.app.tlsReports
      .runOnce()
      .then(() =>
        d.env.query<{ policy_domain: string; status: string; destinations: string; detail: string | null }>(
          'SELECT policy_domain, status, destinations, detail FROM tls_reports ORDER BY policy_domain',
        ),
      );
    expect(reports.map((r) => [r.policy_domain, r.status])).toEqual([
      ['dest.test', 'sent'],
      ['ftp-only.test', 'skipped'],
      ['no-record.test', 'skipped'],
    ]);
    expect(JSON.parse(reports[0]!.destinations).map((x: { outcome: string }) => x.outcome)).toEqual([
      'sent',
      'sent',
      'skipped',
    ]);
    expect(reports[1]!.detail).toMatch(/no usable rua/);
    expect(reports[2]!.detail).toBe('no v=TLSRPTv1 record');
    expect(rua.posts).toHaveLength(1);
    expect(logs.filter((l) => l.msg === 'TLS report sent')).toHaveLength(1);
  });

  it('counts every outcome in svc_tls_sessions_total', async () => {
    const text = await d.env.app.metrics.registry.metrics();
    expect(text).toContain('svc_tls_sessions_total{policy_type="sts",result="success"} 5');
    expect(text).toContain('svc_tls_sessions_total{policy_type="sts",result="certificate-expired"} 1');
  });
});

describe('TLS reports, once and again', () => {
  it('sends a day once across a restart, and retries a failed rua alone until it answers', async () => {
    rua.posts.length = 0;
    rua.status = 500;
    const d = await envWith(true);
    try {
      d.env.app.tlsReports.observe([outcome(), expired]);
      // Stopping writes what is counted (svc serve's shutdown).
      await d.env.app.tlsReports.stop();
      d.env.clock.set(NEXT_DAY);
      await d.env.app.tlsReports.runOnce();
      await settle(d.env);
      expect(rua.posts).toHaveLength(1);
      const mails = () => mx.received.filter((x) => x.to.includes('tlsrpt@dest.test')).length;
      const mailed = mails();
      const [row] = await d.env.query<{ status: string; next_attempt_at: string }>('SELECT * FROM tls_reports');
      expect(row).toMatchObject({ status: 'retry', next_attempt_at: '2026-03-16T00:45:00.000Z' });
      // A restart: a second app on the same store neither sends early nor sends twice.
      const again = await createApp(d.env.app.config, { clock: d.env.clock, webhookCa: [rua.ca] });
      try {
        await again.tlsReports.runOnce();
        expect(rua.posts).toHaveLength(1);
        rua.status = 200;
        d.env.clock.advance(15 * 60_000);
        await again.tlsReports.runOnce();
        await d.env.app.tlsReports.runOnce();
        await again.tlsReports.runOnce();
      } finally {
        await again.close();
      }
      await settle(d.env);
      expect(rua.posts).toHaveLength(2);
      const first = JSON.parse(gunzipSync(rua.posts[0]!.body).toString('utf8'));
      const second = JSON.parse(gunzipSync(rua.posts[1]!.body).toString('utf8'));
      expect(second['report-id']).toBe(first['report-id']);
      // The mail rua took the report at the first attempt: it is not mailed again.
      expect(mails()).toBe(mailed);
      expect((await d.env.query<{ status: string }>('SELECT status FROM tls_reports'))[0]!.status).toBe('sent');
    } finally {
      await d.env.close();
    }
  });
});

describe('TLS reports without --tls-reports', () => {
  it('counts the metric only: nothing in the store, nothing sent', async () => {
    rua.posts.length = 0;
    const d = await envWith(false);
    try {
      d.env.app.tlsReports.observe([outcome(), expired]);
      await d.env.app.tlsReports.runOnce();
      d.env.clock.set(NEXT_DAY);
      await d.env.app.tlsReports.runOnce();
      expect(rua.posts).toHaveLength(0);
      expect(await count(d.env, 'tls_report_counts')).toBe(0);
      expect(await count(d.env, 'tls_reports')).toBe(0);
      expect(await d.env.app.metrics.registry.metrics()).toContain(
        'svc_tls_sessions_total{policy_type="sts",result="certificate-expired"} 1',
      );
    } finally {
      await d.env.close();
    }
  });
});

describe('TLS reports to a rua URL on a private address', () => {
  it('are refused as a webhook URL there would be (without --allow-insecure-webhooks), and retried', async () => {
    rua.posts.length = 0;
    rua.status = 200;
    const d = await envWith(true, false);
    try {
      d.env.app.tlsReports.observe([outcome()]);
      await d.env.app.tlsReports.runOnce();
      d.env.clock.set(NEXT_DAY);
      await d.env.app.tlsReports.runOnce();
      expect(rua.posts).toHaveLength(0);
      const [row] = await d.env.query<{ status: string; detail: string }>('SELECT status, detail FROM tls_reports');
      expect(row?.status).toBe('retry');
      expect(row?.detail).toBe(
        `https://rua.test:${rua.port}/tlsrpt: webhook target rua.test (127.0.0.1) refused: a loopback address`,
      );
      expect(logs.some((l) => l.msg === 'TLS report failed; will retry')).toBe(true);
    } finally {
      await d.env.close();
    }
  });
});
