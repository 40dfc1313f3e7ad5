// The bounces of test/inbound.test.ts and test/inbound-reports.test.ts: each file's environment
// and what the tests ask of it, and the DSN and ARF reports as MTAs and feedback loops write them.
import { afterAll, beforeAll, expect } from 'vitest';
import { count } from './harness.ts';
import { mailNullSender, settle, startBounceEnv, type BounceEnv } from './delivery-helpers.ts';

/**
 * The file's bounce environment (startBounceEnv for dest.test and other.test), started before its
 * tests and closed after them, and what the tests do with it; `env()` once started.
 */
export function bounceSuite() {
  let b: BounceEnv | undefined;
  const env = () => b!;
  beforeAll(async () => {
    b = await startBounceEnv(['dest.test', 'other.test']);
  });
  afterAll(() => b?.close());
  return {
    env,
    /** Sends a LIVE email, delivers it, and returns its id and the return path each destination saw. */
    delivered: async (to: string[]): Promise<{ id: string; returnPath: (domain: string) => string }> => {
      const { mx, d } = env();
      const before = mx.received.length;
      const id = await d.send(to);
      await settle(d.env);
      expect((await d.email(id)).status).toBe('DELIVERED');
      const got = mx.received.slice(before);
      return {
        id,
        returnPath: (domain) => got.find((m) => m.to.some((a) => a.endsWith(`@${domain}`)))!.from,
      };
    },
    /** One message to `rcpt` with the null sender, as bounces come; resolves with the replies to RCPT and to the dot. */
    mail: (rcpt: string, body: string) => mailNullSender(env().port, rcpt, body),
    /** How many suppressions of the address the project has (0 or 1). */
    suppressed: (address: string) =>
      count(env().d.env, 'suppressions', 'project_id = ? AND email = ?', env().d.env.init.project_id, address),
    /** The reason the address is suppressed for, if it is. */
    suppressionReason: async (address: string) =>
      (
        await env().d.env.query<{ reason: string }>(
          'SELECT reason FROM suppressions WHERE project_id = ? AND email = ?',
          env().d.env.init.project_id,
          address,
        )
      )[0]?.reason,
  };
}

/** A DSN as Postfix writes one (RFC 3464), for the recipients given. */
export function dsn(
  to: string,
  recipients: { address: string; action?: string; status: string; diagnostic: string }[],
) {
  const blocks = recipients
    .map((r) =>
      [
        `Final-Recipient: rfc822; ${r.address}`,
        `Original-Recipient: rfc822;${r.address}`,
        `Action: ${r.action ?? 'failed'}`,
        `Status: ${r.status}`,
        'Remote-MTA: dns; mailbox.dest.test',
        // Folded, as MTAs write long diagnostics.
        `Diagnostic-Code: smtp; ${r.diagnostic.replace(/ (\S+)$/, '\r\n    $1')}`,
      ].join('\r\n'),
    )
    .join('\r\n\r\n');
  return [
    'From: MAILER-DAEMON@mx.dest.test (Mail Delivery System)',
    `To: ${to}`,
    'Subject: Undelivered Mail Returned to Sender',
    'Auto-Submitted: auto-replied',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="BOUNDARY"',
    '',
    '--BOUNDARY',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'This is the mail system at host mx.dest.test. Your message could not be delivered.',
    '',
    '--BOUNDARY',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.dest.test',
    'Arrival-Date: Sun, 15 Mar 2026 12:00:00 +0000',
    '',
    blocks,
    '',
    '--BOUNDARY',
    'Content-Type: text/rfc822-headers',
    '',
    'From: news@sender.test',
    'Subject: Hello',
    '',
    '--BOUNDARY--',
    '',
  ].join('\r\n');
}

/** An ARF report (RFC 5965) as feedback loops send them, about a message to `rcpt`. */
export function arf(to: string, rcpt: string, opts: { originalRcptTo?: boolean; returnPath?: string } = {}) {
  return [
    'From: feedback@fbl.dest.test',
    `To: ${to}`,
    'Subject: FW: Hello',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report; boundary="ARF"',
    '',
    '--ARF',
    'Content-Type: text/plain',
    '',
    'This is an email abuse report for an email message received from IP 1.2.3.4.',
    '',
    '--ARF',
    'Content-Type: message/feedback-report',
    '',
    'Feedback-Type: abuse',
    'User-Agent: SomeFBL/1.0',
    'Version: 1',
    ...(opts.originalRcptTo === false ? [] : [`Original-Rcpt-To: <${rcpt}>`]),
    'Source-IP: 1.2.3.4',
    '',
    '--ARF',
    'Content-Type: text/rfc822-headers',
    '',
    `Return-Path: <${opts.returnPath ?? to}>`,
    'From: news@sender.test',
    `To: ${rcpt}`,
    'Subject: Hello',
    '',
    '--ARF--',
    '',
  ].join('\r\n');
}
