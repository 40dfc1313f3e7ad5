import MailComposer from 'nodemailer/lib/mail-composer';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../lib/clock.ts';
import { mergedDmarc } from '../domains/merge.ts';
import {
  dateRangeProblem,
  domainOfReportAddress,
  planReport,
  signingVerdict,
  summarizeByDay,
  type StoredRow,
} from './dmarc.ts';
import { parseAggregateReport, parseReportBytes, type AggregateReport } from './dmarc-parse.ts';
import { reporterDayStart, reporterLimitProblem } from './dmarc-limits.ts';
import { readAggregateReport } from './dmarc-read.ts';
import { reportDayOut } from './dmarc-schema.ts';
import { createDmarcReports, serverAddresses } from './dmarc-service.ts';

const row = (o: Partial<StoredRow>): StoredRow => ({
  source_ip: '192.0.2.10',
  count: 1,
  disposition: 'none',
  dkim_result: 'pass',
  dkim_domain: 'example.com',
  spf_result: 'pass',
  spf_domain: 'bounces.example.com',
  dkim_aligned: 'pass',
  spf_aligned: 'pass',
  own_source: true,
  flagged: false,
  ...o,
});

describe('the report address', () => {
  it('is dmarc@bounces.<domain>, any case; nothing else is', () => {
    expect(domainOfReportAddress('dmarc@bounces.example.com')).toBe('example.com');
    expect(domainOfReportAddress('DMARC@Bounces.Example.COM')).toBe('example.com');
    for (const other of [
      'dmarc@example.com',
      'postmaster@bounces.example.com',
      'bounces.example.com',
      'dmarc@bounces.',
    ]) {
      expect(domainOfReportAddress(other), other).toBeUndefined();
    }
  });
});

describe('what a report says of the DKIM signing', () => {
  it("confirms on one pass from svc's addresses, fails only when svc's rows show results and none passed", () => {
    expect(signingVerdict([row({}), row({ dkim_result: 'fail' })], 'example.com')).toBe('confirmed');
    expect(signingVerdict([row({ dkim_result: 'fail' }), row({ dkim_result: 'permerror' })], 'example.com')).toBe(
      'failed',
    );
    // Other senders' rows, other domains' signatures and rows without a result say nothing.
    expect(signingVerdict([row({ own_source: false })], 'example.com')).toBeNull();
    expect(signingVerdict([row({ dkim_domain: 'esp.example' })], 'example.com')).toBeNull();
    expect(signingVerdict([row({ dkim_result: null, dkim_domain: null })], 'example.com')).toBeNull();
  });

  it('flags rows not from svc that fail DMARC, and covers the emails sent in the whole date range', () => {
    const report: AggregateReport = {
      org_name: 'r.example',
      report_id: '1',
      begin: 1_773_532_800,
      end: 1_773_619_199,
      domain: 'example.com',
      policy: 'none',
      rows: [
        row({ source_ip: '::FFFF:192.0.2.10' }),
        row({ source_ip: '203.0.113.1', dkim_aligned: 'fail', spf_aligned: 'fail' }),
        row({ source_ip: '203.0.113.2', dkim_aligned: 'fail' }),
      ],
    };
    const plan = planReport(report, { id: 'x', domainId: 'd' }, ['192.0.2.10'], '2026-03-16T00:00:00.000Z');
    expect(plan.rows.map((r) => [r.own_source, r.flagged])).toEqual([
      [true, false],
      [false, true],
      [false, false],
    ]);
    expect(plan.signing).toEqual({
      status: 'confirmed',
      domain: 'example.com',
      from: '2026-03-15T00:00:00.000Z',
      to: '2026-03-15T23:59:59.999Z',
    });
  });

  it('sums rows per day and source IP', () => {
    const dated = (o: Partial<StoredRow>, begin_at: string, org_name = 'a') => ({ ...row(o), begin_at, org_name });
    const days = summarizeByDay([
      dated({ count: 2 }, '2026-03-15T00:00:00.000Z'),
      dated({ count: 3, dkim_aligned: 'fail' }, '2026-03-15T06:00:00.000Z', 'b'),
      dated({ count: 1 }, '2026-03-16T00:00:00.000Z'),
    ]);
    expect(days.map((d) => [d.day, d.count, d.dkim_pass, d.dmarc_pass, d.reporters])).toEqual([
      ['2026-03-16', 1, 1, 1, ['a']],
      ['2026-03-15', 5, 2, 5, ['a', 'b']],
    ]);
  });
});

describe('reading a report', () => {
  const xml = (body: string) => `<?xml version="1.0"?><feedback>${body}</feedback>`;
  const meta =
    '<report_metadata><org_name>r.example</org_name><report_id>7</report_id>' +
    '<date_range><begin>1</begin><end>2</end></date_range></report_metadata>' +
    '<policy_published><domain>Example.com</domain><p>reject</p></policy_published>';

  it('reads metadata, policy and records, with the auth result of the domain signature', () => {
    const record =
      '<record><row><source_ip>2001:db8::1</source_ip><count>9</count><policy_evaluated><disposition>reject</disposition>' +
      '<dkim>fail</dkim><spf>fail</spf></policy_evaluated></row><identifiers><header_from>example.com</header_from></identifiers>' +
      '<auth_results><dkim><domain>esp.example</domain><result>pass</result></dkim>' +
      '<dkim><domain>example.com</domain><result>fail</result></dkim><spf><domain>x.example</domain><result>softfail</result></spf></auth_results></record>';
    const parsed = parseAggregateReport(xml(meta + record));
    expect(parsed).toEqual({
      ok: true,
      report: {
        org_name: 'r.example',
        report_id: '7',
        begin: 1,
        end: 2,
        domain: 'example.com',
        policy: 'reject',
        rows: [
          {
            source_ip: '2001:db8::1',
            count: 9,
            disposition: 'reject',
            dkim_result: 'fail',
            dkim_domain: 'example.com',
            spf_result: 'softfail',
            spf_domain: 'x.example',
            dkim_aligned: 'fail',
            spf_aligned: 'fail',
          },
        ],
      },
    });
  });

  it('refuses a DOCTYPE, a bad source IP and a count that is not a number, each with its reason', () => {
    const bad = (row: string) =>
      `<record><row>${row}<policy_evaluated><disposition>none</disposition></policy_evaluated></row></record>`;
    expect(parseAggregateReport('<!DOCTYPE x [<!ENTITY a "aaaa">]>' + xml(meta))).toEqual({
      ok: false,
      reason: 'the report declares a DOCTYPE: refused',
    });
    expect(parseAggregateReport(xml(meta + bad('<source_ip>999.1.1.1</source_ip><count>1</count>')))).toEqual({
      ok: false,
      reason: '<row><source_ip> is not an IP address: 999.1.1.1',
    });
    expect(parseAggregateReport(xml(meta + bad('<source_ip>192.0.2.1</source_ip><count>many</count>')))).toEqual({
      ok: false,
      reason: '<row><count> is not a whole number: many',
    });
  });
});

describe('hostile reports', () => {
  const report = (meta: string, extra = '') =>
    '<?xml version="1.0"?><feedback><report_metadata><org_name>r.example</org_name><report_id>7</report_id>' +
    `<date_range><begin>1</begin><end>2</end></date_range></report_metadata>${meta}${extra}</feedback>`;
  const published = '<policy_published><domain>example.com</domain></policy_published>';

  it('reads a domain given with its root dot as the domain', () => {
    const parsed = parseAggregateReport(report('<policy_published><domain>Example.COM.</domain></policy_published>'));
    expect(parsed.ok && parsed.report.domain).toBe('example.com');
  });

  it('answers deep nesting and an attribute flood with a reason, without throwing', () => {
    const deep = '<a>'.repeat(5000) + '</a>'.repeat(5000);
    expect(parseAggregateReport(report(published, deep))).toEqual({
      ok: false,
      reason: 'the report could not be read as XML (Maximum nested tags exceeded)',
    });
    const flood = '<a ' + Array.from({ length: 2000 }, (_, i) => `x${i}="1"`).join(' ') + '/>';
    expect(parseAggregateReport(report(published, flood))).toEqual({
      ok: false,
      reason: 'the report has a tag over 4096 characters long: refused',
    });
  });

  it('decodes the encoding the report declares, and refuses bytes that are not in it', () => {
    const latin1 = Buffer.from(
      report(published)
        .replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="ISO-8859-1"?>')
        .replace('r.example', 'Télé'),
      'latin1',
    );
    const read = parseReportBytes(latin1);
    expect(read.ok && read.report.org_name).toBe('Télé');
    const utf8 = parseReportBytes(Buffer.from(report(published)));
    expect(utf8.ok && utf8.report.org_name).toBe('r.example');
    const utf16 = parseReportBytes(
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(report(published), 'utf16le')]),
    );
    expect(utf16.ok && utf16.report.org_name).toBe('r.example');
    expect(parseReportBytes(Buffer.from(report(published).replace('r.example', 'T\xe9l\xe9'), 'latin1'))).toEqual({
      ok: false,
      reason: 'the report is not valid utf-8 (the encoding it declares, else UTF-8)',
    });
    const unknown = Buffer.from(report(published).replace('version="1.0"', 'version="1.0" encoding="x-klingon"'));
    expect(parseReportBytes(unknown)).toEqual({
      ok: false,
      reason: 'the report declares an encoding this server cannot read: x-klingon',
    });
  });

  it('refuses a value longer than 255 characters, which would only fill the disk', () => {
    const long = report(published).replace('<org_name>r.example', `<org_name>${'x'.repeat(5000)}`);
    expect(parseAggregateReport(long)).toEqual({ ok: false, reason: '<org_name> is 5000 characters long, over 255' });
  });

  it('refuses a count over a billion, and sums many large counts to a number the API can send', () => {
    const big = (count: string) =>
      report(
        published,
        `<record><row><source_ip>192.0.2.1</source_ip><count>${count}</count>` +
          '<policy_evaluated><disposition>none</disposition></policy_evaluated></row></record>',
      );
    expect(parseAggregateReport(big('1000000000')).ok).toBe(true);
    expect(parseAggregateReport(big('999999999999999'))).toEqual({
      ok: false,
      reason: '<row><count> is 999999999999999, over 1000000000',
    });
    // Rows stored before the cap may hold up to 15 digits; ten of them pass 2^53.
    const rows = Array.from({ length: 10 }, () => ({
      ...row({ count: 999_999_999_999_999 }),
      begin_at: '2026-03-15T00:00:00.000Z',
      org_name: 'a',
    }));
    const days = summarizeByDay(rows);
    expect(days[0]!.count).toBe(Number.MAX_SAFE_INTEGER);
    expect(reportDayOut.array().safeParse(days).success).toBe(true);
  });

  it('refuses a date range that begins after it ends, ends in the future or spans more than 31 days', () => {
    const now = Date.parse('2026-03-16T12:00:00Z');
    const s = now / 1000;
    expect(dateRangeProblem(s - 86_400, s - 1, now)).toBeUndefined();
    expect(dateRangeProblem(s - 600, s + 600, now)).toBeUndefined();
    expect(dateRangeProblem(s - 31 * 86_400, s, now)).toBeUndefined();
    expect(dateRangeProblem(s, s - 100, now)).toBe(
      `the report's date range begins after it ends (begin ${s}, end ${s - 100})`,
    );
    expect(dateRangeProblem(0, 253_402_300_799, now)).toBe(
      "the report's date range ends in the future (end 253402300799)",
    );
    expect(dateRangeProblem(0, 999_999_999_999_999, now)).toMatch(/ends in the future/);
    expect(dateRangeProblem(0, s, now)).toBe("the report's date range spans 20529 days, over 31");
  });
});

describe('the DMARC record to publish beside an existing one', () => {
  const ours = 'dmarc@bounces.example.com';
  it("adds svc's address to rua=, or a rua= tag, and nothing when it is there", () => {
    expect(mergedDmarc('v=DMARC1; p=reject; rua=mailto:a@example.net', ours)).toBe(
      'v=DMARC1; p=reject; rua=mailto:a@example.net,mailto:dmarc@bounces.example.com',
    );
    expect(mergedDmarc('v=DMARC1;p=none;', ours)).toBe('v=DMARC1; p=none; rua=mailto:dmarc@bounces.example.com');
    expect(mergedDmarc('v=DMARC1; p=none; rua=mailto:DMARC@bounces.example.com!5m', ours)).toBeUndefined();
  });
});

describe('receiving a report', () => {
  it('logs the first 20 flagged sources and their number, however many the report holds', async () => {
    const records = Array.from(
      { length: 2000 },
      (_, i) =>
        `<record><row><source_ip>198.18.${i >> 8}.${i & 255}</source_ip><count>1</count><policy_evaluated>` +
        '<disposition>none</disposition><dkim>fail</dkim><spf>fail</spf></policy_evaluated></row></record>',
    ).join('');
    const clock = new FakeClock(Date.parse('2026-03-16T00:00:00Z'));
    const xml =
      '<feedback><report_metadata><org_name>r.example</org_name><report_id>many</report_id><date_range>' +
      `<begin>${clock.now() / 1000 - 86_400}</begin><end>${clock.now() / 1000}</end></date_range></report_metadata>` +
      `<policy_published><domain>example.com</domain></policy_published>${records}</feedback>`;
    const raw = await new MailComposer({
      from: 'r@r.example',
      to: 'dmarc@bounces.example.com',
      attachments: [{ filename: 'r.xml', content: xml, contentType: 'text/xml' }],
    })
      .compile()
      .build();
    const lines: string[] = [];
    const dmarc = createDmarcReports({
      repo: { recordReport: () => Promise.resolve({ recorded: true, emails: 0 }), listRows: () => Promise.resolve([]) },
      findDomain: (name) => Promise.resolve({ id: 'd1', name }),
      reader: { read: readAggregateReport },
      ownAddresses: () => Promise.resolve([]),
      clock,
      logger: pino({ base: null }, { write: (line: string) => lines.push(line) }),
    });
    expect((await dmarc.receive(raw, ['dmarc@bounces.example.com'])).flagged).toHaveLength(2000);
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line.length).toBeLessThan(4000);
      expect(JSON.parse(line)).toMatchObject({ flagged: expect.any(Array), flagged_sources: 2000 });
    }
  });
});

describe("svc's own addresses", () => {
  const dns = (zone: Record<string, string[] | 'servfail'>) => ({
    addresses: (name: string) => {
      const found = zone[name];
      if (found === 'servfail') return Promise.resolve({ ok: false as const, temporary: true, reason: 'SERVFAIL' });
      return Promise.resolve(
        found ? { ok: true as const, values: found } : { ok: false as const, temporary: false, reason: 'NXDOMAIN' },
      );
    },
  });
  const local = () => Promise.resolve(['10.0.0.2']);

  it("are the host name's, the machine's and, with a smarthost, the relay's (a relay given by address is its own)", async () => {
    const zone = dns({ 'mta.example': ['192.0.2.1'], 'relay.example': ['198.51.100.1', '2001:db8::1'] });
    const h = { hostname: 'mta.example' };
    expect(await serverAddresses(zone, { ...h, relayHost: null }, local)).toEqual(['192.0.2.1', '10.0.0.2']);
    expect(await serverAddresses(zone, { ...h, relayHost: 'relay.example' }, local)).toEqual([
      '192.0.2.1',
      '198.51.100.1',
      '2001:db8::1',
      '10.0.0.2',
    ]);
    expect(await serverAddresses(zone, { ...h, relayHost: '[2001:db8::25]' }, local)).toContain('2001:db8::25');
    expect(await serverAddresses(zone, { ...h, relayHost: 'gone.example' }, local)).toEqual(['192.0.2.1', '10.0.0.2']);
  });

  it("throw while the relay's addresses cannot be looked up for now (the reporter retries)", async () => {
    const zone = dns({ 'mta.example': ['192.0.2.1'], 'relay.example': 'servfail' });
    await expect(serverAddresses(zone, { hostname: 'mta.example', relayHost: 'relay.example' }, local)).rejects.toThrow(
      /unknown for now \(SERVFAIL\)/,
    );
  });
});

describe('the daily limit per reporter', () => {
  const party = { org_name: 'google.com', sender_ip: '209.85.220.41', domain: 'example.com', rows: 10 };
  const none = { reports: 0, rows: 0 };

  it('takes a report while the reporter is under 50 reports and 100,000 rows today, by org_name and by address', () => {
    expect(reporterLimitProblem(party, { org: { reports: 49, rows: 99_990 }, ip: none })).toBeUndefined();
    expect(reporterLimitProblem(party, { org: none, ip: { reports: 49, rows: 99_990 } })).toBeUndefined();
    // Fed by hand (svc inbound process): no address to count by.
    expect(reporterLimitProblem({ ...party, sender_ip: null }, { org: none, ip: null })).toBeUndefined();
  });

  it('refuses the 51st report, or one whose rows would pass 100,000, naming the limit', () => {
    expect(reporterLimitProblem(party, { org: { reports: 50, rows: 50 }, ip: none })).toBe(
      'google.com has sent 50 DMARC reports about example.com today, the most one reporter may (50 a day): try again tomorrow',
    );
    expect(reporterLimitProblem(party, { org: none, ip: { reports: 50, rows: 50 } })).toMatch(
      /^the address 209\.85\.220\.41 has sent 50 DMARC reports about example\.com today/,
    );
    expect(reporterLimitProblem(party, { org: { reports: 3, rows: 99_991 }, ip: none })).toBe(
      "the reports google.com sent about example.com today hold 99991 rows; this one's 10 would pass the 100000 a day one reporter may store: try again tomorrow",
    );
  });

  it('counts the day from midnight UTC, and a report keeps its sender', () => {
    expect(reporterDayStart('2026-03-16T23:59:59.999Z')).toBe('2026-03-16T00:00:00.000Z');
    const report: AggregateReport = {
      org_name: 'r.example',
      report_id: '1',
      begin: 0,
      end: 60,
      domain: 'example.com',
      policy: 'none',
      rows: [],
    };
    const plan = planReport(report, { id: 'r1', domainId: 'd1' }, [], '2026-03-16T10:00:00.000Z', '::ffff:192.0.2.9');
    expect(plan.reporter).toEqual({
      org_name: 'r.example',
      sender_ip: '192.0.2.9',
      domain: 'example.com',
      rows: 0,
      since: '2026-03-16T00:00:00.000Z',
    });
    expect(plan.report).toMatchObject({ sender_ip: '192.0.2.9', row_count: 0 });
  });
});
