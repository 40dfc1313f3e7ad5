import { gzipSync } from 'node:zlib';
import { zipSync } from 'fflate';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DnsServer } from './peers/dns.ts';
import { count, verifyDomain } from './harness.ts';
import type { DeliveryEnv } from './delivery-helpers.ts';
import { DAY, dmarcSuite, gz, plain, REPORT_TO, reportXml, seconds, SVC_IP, type Attachment } from './dmarc-helpers.ts';

// DMARC aggregate reports (issue 28 item 7): bad reports get a clear answer, and a reporter has
// a daily limit. Reports read and shown: test/dmarc-reports.test.ts.

const s = dmarcSuite();
const { mailReport, reports, deliveredNow } = s;
let dns: DnsServer;
let d: DeliveryEnv;
beforeAll(() => ({ dns, d } = s.env()));

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
