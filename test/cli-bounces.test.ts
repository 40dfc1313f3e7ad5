import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyReply, describeRule } from '../src/delivery/classify.ts';
import { runSvc, type Run } from './cli-runner.ts';

// svc bounces classify (issue 29, item 4): what the classifier makes of any reply text, and
// which rule decided, with no store: the data dir is never created, a database URL never dialled.

let dir: string;
const NO_STORE = { SVC_DATABASE_URL: 'postgres://svc@127.0.0.1:1/nowhere' };
const svc = (...args: string[]): Promise<Run> => runSvc(dir, args, NO_STORE);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-bounces-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('svc bounces classify', () => {
  it('prints category, type, suppression, reason and the rule, opening no store', async () => {
    const reply = '550 5.1.1 <ada@example.org>: Recipient address rejected: User unknown';
    const c = classifyReply({ code: 550, text: reply });
    const r = await svc('bounces', 'classify', reply);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      [
        'category: invalid-recipient',
        'type: hard',
        'suppresses: yes',
        `reason: ${c.reason}`,
        `rule: ${describeRule(c.rule)}`,
        '',
      ].join('\n'),
    );
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });

  it('prints the classification object with --json; a reply without its basic code is read as the classifier reads it', async () => {
    const r = await svc('bounces', 'classify', '4.2.2 Mailbox full', '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toEqual(classifyReply({ code: Number.NaN, text: '4.2.2 Mailbox full' }));
    expect(r.json()).toMatchObject({ outcome: 'retry', category: 'mailbox-full', suppress: false });
    const given = await svc('bounces', 'classify', '--code', '550', 'Rejected', '--json');
    expect(given.json()).toEqual(classifyReply({ code: 550, text: 'Rejected' }));
  });

  it('reads the codes of the reply a DSN or a relaying server quotes', async () => {
    const quoted = 'host mx.example[192.0.2.1] said: 452 4.2.2 Mailbox full (in reply to RCPT TO command)';
    const r = await svc('bounces', 'classify', quoted);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('note: no reply code');
    expect(r.stdout.split('\n').slice(0, 3)).toEqual(['category: mailbox-full', 'type: retry', 'suppresses: no']);
    const json = await svc('bounces', 'classify', quoted, '--json');
    expect(json.json()).toEqual(classifyReply({ code: 452, text: quoted }));
  });

  it.each([
    [
      'User unknown',
      'note: no reply code: read as a failed delivery (550); give --code 4xx for a temporary one',
      ['category: invalid-recipient', 'type: hard', 'suppresses: yes'],
    ],
    [
      'Mailbox unknown, try again later',
      'note: no reply code: read as temporary (450), as its words say; give --code 5xx for a failed delivery',
      ['category: invalid-recipient', 'type: retry', 'suppresses: no'],
    ],
  ])(
    'reads "%s", with no code at all, as svc reads a DSN diagnostic without one, and says so',
    async (text, note, lines) => {
      const r = await svc('bounces', 'classify', text);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.split('\n').slice(0, 4)).toEqual([note, ...lines]);
    },
  );

  it('reads a text with no code and no sign of being temporary as a failed delivery, 550', async () => {
    const json = await svc('bounces', 'classify', 'User unknown', '--json');
    expect(json.json()).toEqual(classifyReply({ code: 550, text: 'User unknown' }));
  });

  it('feeds --stage and --sender to the classifier: a reply about our sender never suppresses', async () => {
    const reply = '550 5.1.1 <news@example.com>: User unknown';
    const dead = await svc('bounces', 'classify', reply, '--json');
    expect(dead.json()).toMatchObject({ outcome: 'hard', suppress: true });
    const sender = await svc(
      'bounces',
      'classify',
      reply,
      '--sender',
      'other@example.com',
      '--sender',
      'news@example.com',
    );
    expect(sender.code, sender.stderr).toBe(0);
    expect(sender.stdout).toContain('type: soft\nsuppresses: no\n');
    expect(sender.stdout).toContain(`rule: ${describeRule({ by: 'sender', matched: 'news@example.com' })}\n`);
    const mail = await svc('bounces', 'classify', '550 5.1.1 Rejected', '--stage', 'mail', '--json');
    expect(mail.json()).toMatchObject({ outcome: 'soft', suppress: false, rule: { by: 'sender' } });
  });

  it.each([
    [[''], /give the reply to classify/],
    [['   '], /give the reply to classify/],
    [['650 5.1.1 User unknown'], /650 is not an SMTP reply code/],
    [['150 Opening'], /150 is not an SMTP reply code/],
    [['--code', '99', 'User unknown'], /99 is not an SMTP reply code/],
    [['--code', 'abc', 'User unknown'], /abc is not an SMTP reply code/],
    [['550 x', '--stage', 'helo'], /Allowed choices are mail, rcpt, data/],
    [[], /missing required argument 'reply'/],
  ])('refuses %j with one clear line and exit 2', async (args, message) => {
    const r = await svc('bounces', 'classify', ...args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n')[0]).toMatch(message);
  });
});
