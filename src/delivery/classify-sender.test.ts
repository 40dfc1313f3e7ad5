import { describe, expect, it } from 'vitest';
import { classifyReply, describeRule, type ReplyContext, type SmtpReply } from './classify.ts';

// Issue 29, item 3: a reply about our sender is never a dead recipient, and item 4: each
// decision says which rule made it.

const SENDER = 'bounces+0192f4c1x@bounces.example.com';
const reply = (code: number, enhanced: string | null, text: string): SmtpReply => ({ code, enhanced, text });
const dead = reply(550, '5.1.1', 'User unknown');

describe('the sender rule', () => {
  it('keeps a dead-address reply a hard, suppressing bounce when it is about the recipient', () => {
    const c = classifyReply(reply(550, '5.1.1', '<ada@example.org>: Recipient address rejected: User unknown'), {
      stage: 'rcpt',
      senders: [SENDER],
    });
    expect(c).toMatchObject({ outcome: 'hard', category: 'invalid-recipient', suppress: true });
    expect(c.rule).toEqual({ by: 'text', matched: 'User unknown' });
  });

  it.each<[string, SmtpReply, ReplyContext, string]>([
    ['it answered MAIL FROM', dead, { stage: 'mail' }, 'a reply to MAIL FROM'],
    ['it names our envelope sender', reply(550, '5.1.1', `<${SENDER}>: User unknown`), { senders: [SENDER] }, SENDER],
    [
      'it names our From address, in another case',
      reply(550, '5.1.1', 'Mailbox News@Example.com does not exist'),
      { senders: [SENDER, 'news@example.com'] },
      'news@example.com',
    ],
    ['its code is about the sender mailbox (X.1.7)', reply(550, '5.1.7', 'User unknown'), {}, '5.1.7'],
    ['its code is about the sender system (X.1.8)', reply(550, '5.1.8', 'No such user'), {}, '5.1.8'],
    ['it names the sender in German', reply(550, '5.1.1', 'Absender unbekannt'), {}, 'Absender'],
    [
      "it is Exim's sender callout",
      reply(550, '5.1.1', 'Called: 192.0.2.1 Sent: RCPT TO:<bounces@example.com> Response: 550 User unknown'),
      {},
      'Called:',
    ],
    ['it names the originator', reply(553, '5.1.1', 'Originator mailbox unknown'), {}, 'Originator'],
  ])('gives way when %s: soft, kept, and says so', (_why, r, context, evidence) => {
    const c = classifyReply(r, { stage: 'rcpt', ...context });
    expect(c).toMatchObject({ outcome: 'soft', bounce_type: 'soft', category: 'policy-rejection', suppress: false });
    expect(c.rule.by).toBe('sender');
    expect(c.rule.matched).toContain(evidence);
    expect(describeRule(c.rule)).toMatch(
      /^the sender rule: the reply is about our sender \(.+\), never a dead recipient$/,
    );
  });

  it("reads a callout that does not name the sender as the recipient's (Exim calls out for both)", () => {
    // Exim's "Callout verification failed" is its recipient callout's answer; a sender callout says "sender".
    const c = classifyReply(
      reply(550, null, 'Callout verification failed: 550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found'),
      { stage: 'rcpt' },
    );
    expect(c).toMatchObject({ outcome: 'hard', category: 'invalid-recipient', suppress: true });
  });

  it('reads "(in reply to MAIL FROM command)" as the stage, not as words about the sender', () => {
    expect(
      classifyReply(reply(451, '4.7.700', 'PFA agent busy, please try again. (in reply to MAIL FROM command)')),
    ).toMatchObject({ outcome: 'retry', category: 'connection-error' });
    expect(classifyReply(reply(550, '5.1.1', 'User unknown (in reply to MAIL FROM command)')).suppress).toBe(false);
  });

  it('never suppresses a reply to MAIL FROM, whatever it says', () => {
    const texts = [
      'User unknown',
      'No such user here',
      'Recipient address rejected: User unknown in virtual mailbox table',
      'The email account that you tried to reach does not exist',
      'mailbox unavailable',
      'Domain not found',
      'null MX',
    ];
    for (const text of texts) {
      for (const enhanced of [null, '5.1.1', '5.1.2', '5.1.10', '5.2.1']) {
        expect(classifyReply(reply(550, enhanced, text), { stage: 'mail' }).suppress, `${enhanced} ${text}`).toBe(
          false,
        );
      }
    }
  });

  it('does not touch a reply that was never a dead address', () => {
    const c = classifyReply(reply(550, '5.7.1', 'Sender blocked using zen.spamhaus.org'), { stage: 'mail' });
    expect(c).toMatchObject({ category: 'reputation-blocklist', outcome: 'soft' });
    expect(c.rule).toEqual({ by: 'text', matched: 'spamhaus' });
  });
});

describe('which rule decided', () => {
  it.each<[SmtpReply, { by: string; matched: string | null }, string]>([
    [reply(550, '5.1.1', 'Rejected'), { by: 'enhanced-code', matched: '5.1.1' }, 'the enhanced status code "5.1.1"'],
    [reply(421, null, 'Rejected'), { by: 'basic-code', matched: '421' }, 'the basic reply code "421"'],
    [
      reply(554, null, 'Transaction failed'),
      { by: 'default', matched: null },
      'the default: the reply gives no reason',
    ],
    [
      reply(421, '4.7.0', '[TSS04] Messages from 192.0.2.1 temporarily deferred'),
      { by: 'provider-text', matched: '[TSS04]' },
      'the provider\'s own code "[TSS04]"',
    ],
    [reply(452, '4.2.2', 'Mailbox full'), { by: 'text', matched: 'Mailbox full' }, 'the reply\'s words "Mailbox full"'],
    [reply(250, '2.0.0', 'OK'), { by: 'accepted', matched: null }, 'a 2xx reply'],
  ])('%j', (r, rule, line) => {
    const c = classifyReply(r);
    expect(c.rule).toEqual(rule);
    expect(describeRule(c.rule)).toBe(line);
  });
});
