import MailComposer from 'nodemailer/lib/mail-composer';
import { afterAll, describe, expect, it } from 'vitest';
import { createReportReader } from './dmarc-reader.ts';

const record = (i: number) =>
  `<record><row><source_ip>198.18.${i >> 8}.${i & 255}</source_ip><count>1</count><policy_evaluated>` +
  '<disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row></record>';

/** A report message of `records` records, as a receiver mails it. */
async function reportMessage(id: string, records: number): Promise<Buffer> {
  const xml =
    `<feedback><report_metadata><org_name>r.example</org_name><report_id>${id}</report_id>` +
    '<date_range><begin>1773532800</begin><end>1773619199</end></date_range></report_metadata>' +
    `<policy_published><domain>example.com</domain></policy_published>${Array.from({ length: records }, (_, i) => record(i)).join('')}</feedback>`;
  return new MailComposer({
    from: 'r@r.example',
    to: 'dmarc@bounces.example.com',
    attachments: [{ filename: 'r.xml', content: xml, contentType: 'text/xml' }],
  })
    .compile()
    .build();
}

describe('the report reader (a worker)', () => {
  const reader = createReportReader({ timeoutMs: 300 });
  afterAll(() => reader.close());

  it('reads a report in its worker, as the main thread would', async () => {
    const parsed = await reader.read(await reportMessage('small', 3));
    expect(parsed).toMatchObject({ ok: true, report: { report_id: 'small', domain: 'example.com' } });
    expect(parsed.ok && parsed.report.rows).toHaveLength(3);
  });

  it('refuses a report that takes longer than its time limit, and reads the next one', async () => {
    // 20,000 records take seconds to parse: far past 300 ms.
    const slow = await reportMessage('slow', 20_000);
    const asked = performance.now();
    expect(await reader.read(slow)).toEqual({
      ok: false,
      reason: 'reading the report took longer than 300 ms: refused',
    });
    expect(performance.now() - asked).toBeLessThan(2000);
    expect(await reader.read(await reportMessage('after', 1))).toMatchObject({ ok: true });
  });

  it('answers a message that is not a report with its reason, not an exception', async () => {
    expect(await reader.read(Buffer.from('Subject: hi\r\n\r\nhello\r\n'))).toEqual({
      ok: false,
      reason: 'no report attached (application/gzip, application/zip or XML)',
    });
  });
});
