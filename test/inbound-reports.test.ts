import { beforeAll, describe, expect, it } from 'vitest';
import { parseDeliveryStatus } from '../src/inbound/index.ts';
import type { MxPeer } from './peers/mx.ts';
import { smtpTalk } from './peers/smtp-talk.ts';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runSvc } from './cli-runner.ts';
import { classifyReply, describeRule } from '../src/delivery/classify.ts';
import { settle, type DeliveryEnv } from './delivery-helpers.ts';
import { arf, bounceSuite, dsn } from './inbound-helpers.ts';

// Reports that come back after the 250 besides DSNs (issues 15 and 29): ARF complaints, forged
// and stray mail at a return path, the one classifier for replies and DSNs, `svc inbound
// process`, and parseDeliveryStatus. DSNs and plain-text bounces: test/inbound.test.ts.

const suite = bounceSuite();
const { delivered, mail, suppressed, suppressionReason } = suite;
let mx: MxPeer;
let d: DeliveryEnv;
let port: number;
beforeAll(() => ({ mx, d, port } = suite.env()));

describe('ARF complaints', () => {
  it('turns a delivered recipient COMPLAINED, with a complained event and a COMPLAINT suppression', async () => {
    const { id, returnPath } = await delivered(['angry@dest.test']);
    const rp = returnPath('dest.test');
    expect((await mail(rp, arf(rp, 'angry@dest.test'))).data).toMatch(/^250 /);
    expect((await d.email(id)).status).toBe('COMPLAINED');
    expect((await d.recipients(id))[0]!.status).toBe('COMPLAINED');
    expect((await d.events(id)).at(-1)).toEqual({
      type: 'complained',
      recipient: 'angry@dest.test',
      feedback_type: 'abuse',
      source: 'arf',
    });
    expect(await suppressionReason('angry@dest.test')).toBe('COMPLAINT');
  });

  it('finds the recipient in the reported headers when the report has no Original-Rcpt-To', async () => {
    const { id, returnPath } = await delivered(['quiet@dest.test']);
    const rp = returnPath('dest.test');
    await mail(rp, arf(rp, 'quiet@dest.test', { originalRcptTo: false }));
    expect((await d.email(id)).status).toBe('COMPLAINED');
  });

  it('does not take a complaint about a recipient at another domain than its return path', async () => {
    const { id, returnPath } = await delivered(['cat@dest.test', 'dog@other.test']);
    const rp = returnPath('dest.test');
    await mail(rp, arf(rp, 'dog@other.test'));
    expect((await d.email(id)).status).toBe('DELIVERED');
    expect(await suppressionReason('dog@other.test')).toBeUndefined();
  });
});

describe('forged and stray mail', () => {
  it('does not let one destination’s return path bounce a recipient at another domain', async () => {
    const { id, returnPath } = await delivered(['ann@dest.test', 'bob@other.test']);
    const rp = returnPath('dest.test');
    const r = await mail(
      rp,
      dsn(rp, [{ address: 'bob@other.test', status: '5.1.1', diagnostic: '550 5.1.1 unknown' }]),
    );
    expect(r.data).toMatch(/^250 /);
    expect((await d.email(id)).status).toBe('DELIVERED');
    expect(await suppressed('bob@other.test')).toBe(0);
  });

  it('does not let one recipient’s return path bounce a co-recipient at the same domain', async () => {
    const { id } = await delivered(['ann2@dest.test', 'cat2@dest.test']);
    const annRp = mx.received.find((m) => m.to.includes('ann2@dest.test'))!.from;
    await mail(annRp, dsn(annRp, [{ address: 'cat2@dest.test', status: '5.1.1', diagnostic: '550 5.1.1 unknown' }]));
    expect((await d.email(id)).status).toBe('DELIVERED');
    expect(await suppressed('cat2@dest.test')).toBe(0);
    // Its own recipient, it does bounce.
    await mail(annRp, dsn(annRp, [{ address: 'ann2@dest.test', status: '5.1.1', diagnostic: '550 5.1.1 unknown' }]));
    expect((await d.recipients(id)).map((r) => r.status)).toEqual(['BOUNCED', 'DELIVERED']);
  });

  it('does not apply a DSN to a return path whose tag is wrong', async () => {
    const { id, returnPath } = await delivered(['tag@dest.test']);
    const rp = returnPath('dest.test');
    const forged = rp.replace(
      /-([0-9a-f])([0-9a-f]{11})@/,
      (_m, a: string, rest: string) => `-${a === '0' ? '1' : '0'}${rest}@`,
    );
    expect(forged).not.toBe(rp);
    await mail(forged, dsn(forged, [{ address: 'tag@dest.test', status: '5.1.1', diagnostic: '550 5.1.1 unknown' }]));
    expect((await d.email(id)).status).toBe('DELIVERED');
    expect(await suppressed('tag@dest.test')).toBe(0);
  });

  it('refuses any address that is not a return path of an email it sent: 550 5.1.1', async () => {
    for (const rcpt of [
      'postmaster@sender.test',
      'someone@elsewhere.example',
      'bounces+00000000000070008000000000000001-0123456789ab@bounces.sender.test',
    ]) {
      expect((await mail(rcpt, 'Subject: x\r\n\r\nx\r\n')).rcpt).toMatch(/^550 5\.1\.1 /);
    }
  });

  // The listener's SIZE is a received message's 25 MiB (issue 34); a bounce is held to 10 MiB after DATA.
  it('refuses a message over 25 MiB at MAIL when declared, and a bounce over 10 MiB after DATA', async () => {
    const { returnPath } = await delivered(['big@dest.test']);
    const rp = returnPath('dest.test');
    const s = await smtpTalk(port);
    try {
      await s.reply();
      await s.send('EHLO mx.dest.test');
      expect(await s.send(`MAIL FROM:<> SIZE=${26 * 1024 * 1024}`)).toMatch(/^552 5\.3\.4 /);
      await s.send('MAIL FROM:<>');
      await s.send(`RCPT TO:<${rp}>`);
      await s.send('DATA');
      s.write(`Subject: big\r\n\r\n${`${'x'.repeat(998)}\r\n`.repeat(11 * 1050)}.\r\n`);
      expect(await s.reply()).toMatch(/^552 5\.3\.4 /);
    } finally {
      s.close();
    }
  });

  it('takes malformed MIME without a crash and without a change', async () => {
    const { id, returnPath } = await delivered(['odd@dest.test']);
    const rp = returnPath('dest.test');
    const body = `To: ${rp}\r\nContent-Type: multipart/report; report-type=delivery-status; boundary="X"\r\n\r\n--X\r\nContent-Type: message/delivery-status\r\n\r\nFinal-Recipient: garbage\r\nAction:\r\n--X`;
    expect((await mail(rp, body)).data).toMatch(/^250 /);
    expect((await d.email(id)).status).toBe('DELIVERED');
  });
});

describe('one classifier for synchronous replies and DSNs (issue 29, item 5)', () => {
  // A reply about our sender (Exim's sender callout) with a code that otherwise means a dead recipient.
  const about =
    'Called: 192.0.2.1 Sent: RCPT TO:<bounces@sender.test> Response: 550 User unknown in local recipient table';

  it('bounces a DSN about our sender soft by the sender rule, as the same reply in the transaction, and shows the rule', async () => {
    mx.behaviour.set('callout-sync@dest.test', { rcpt: [550, `5.1.1 ${about}`] });
    const sync = await d.send(['callout-sync@dest.test']);
    await settle(d.env);
    const { id, returnPath } = await delivered(['callout-dsn@dest.test']);
    const rp = returnPath('dest.test');
    const diagnostic = `550 5.1.1 ${about}`;
    const r = await mail(rp, dsn(rp, [{ address: 'callout-dsn@dest.test', status: '5.1.1', diagnostic }]));
    expect(r.data).toMatch(/^250 /);

    const c = classifyReply({ code: 550, enhanced: '5.1.1', text: diagnostic }, { senders: [rp, 'news@sender.test'] });
    expect(c.rule.by).toBe('sender');
    const line = describeRule(c.rule);
    for (const email of [sync, id]) {
      expect(await d.email(email)).toMatchObject({
        status: 'BOUNCED',
        bounce_type: 'soft',
        bounce_category: 'policy-rejection',
        bounce_rule: line,
      });
      expect((await d.recipients(email))[0]).toMatchObject({ status: 'BOUNCED', bounce_rule: line });
    }
    expect((await d.events(id)).at(-1)).toMatchObject({ type: 'bounced', source: 'dsn', bounce_rule: line });
    expect(await suppressed('callout-sync@dest.test')).toBe(0);
    expect(await suppressed('callout-dsn@dest.test')).toBe(0);
    const shown = await runSvc(d.env.dir, ['emails', 'show', id], d.env.cliEnv);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/callout-dsn@dest\.test: BOUNCED.*; bounced \(from dsn\) at .*\n {4}rule: /);
    expect(shown.stdout).toContain(`\n    rule: ${line}\n`);
  });
});

describe('svc inbound process', () => {
  it('applies a saved bounce found by its return path, and says what it did', async () => {
    const { id, returnPath } = await delivered(['saved@dest.test']);
    const rp = returnPath('dest.test');
    const file = join(d.env.dir, 'bounce.eml');
    writeFileSync(
      file,
      dsn(rp, [{ address: 'saved@dest.test', status: '5.1.1', diagnostic: '550 5.1.1 No such user' }]),
    );
    const run = await runSvc(d.env.dir, ['inbound', 'process', file, '--json'], d.env.cliEnv);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json()).toEqual({
      kind: 'dsn',
      applied: [
        {
          email_id: id,
          recipient: 'saved@dest.test',
          status: 'BOUNCED',
          bounce_type: 'hard',
          bounce_category: 'invalid-recipient',
        },
      ],
      ignored: [],
    });
    expect((await d.email(id)).status).toBe('BOUNCED');
    // svc emails show says where each recipient's outcome came from.
    const shown = await runSvc(d.env.dir, ['emails', 'show', id, '--json'], d.env.cliEnv);
    expect(shown.json().delivery[0].outcome).toMatchObject({ type: 'bounced', source: 'dsn' });
    const text = await runSvc(d.env.dir, ['emails', 'show', id], d.env.cliEnv);
    expect(text.stdout).toMatch(/saved@dest\.test: BOUNCED.*; bounced \(from dsn\) at /);
  });

  it('says clearly when a file is missing or names no return path: exit 1', async () => {
    const missing = await runSvc(d.env.dir, ['inbound', 'process', join(d.env.dir, 'nope.eml')], {
      SVC_DATA_DIR: d.env.dir,
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/cannot read .*nope\.eml/);
    const file = join(d.env.dir, 'plain.eml');
    writeFileSync(file, 'Subject: hi\r\n\r\nhello\r\n');
    const none = await runSvc(d.env.dir, ['inbound', 'process', file], d.env.cliEnv);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no return path of svc in .*--to/);
  });
});

describe('parseDeliveryStatus', () => {
  it('reads every recipient block, folded fields and CRLF, and skips the per-message block', () => {
    const body = [
      'Reporting-MTA: dns; mx.example',
      '',
      'Final-Recipient: rfc822; a@example.com',
      'Action: failed',
      'Status: 5.1.1 (user unknown)',
      'Diagnostic-Code: smtp; 550 5.1.1 <a@example.com>:',
      '    Recipient address rejected',
      '',
      'Original-Recipient: rfc822; <b@example.com>',
      'Action: Delayed',
      'Status: 4.4.7',
    ].join('\r\n');
    expect(parseDeliveryStatus(body)).toEqual([
      {
        address: 'a@example.com',
        original: null,
        action: 'failed',
        status: '5.1.1',
        diagnostic: { code: 550, text: '550 5.1.1 <a@example.com>: Recipient address rejected' },
        remoteMta: null,
      },
      {
        address: 'b@example.com',
        original: 'b@example.com',
        action: 'delayed',
        status: '4.4.7',
        diagnostic: null,
        remoteMta: null,
      },
    ]);
  });
});
