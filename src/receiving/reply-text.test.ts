import { describe, expect, it } from 'vitest';
import { replyTextOf } from './reply-text.ts';

const lines = (...l: string[]) => l.join('\n');

describe('replyTextOf', () => {
  it('cuts a Gmail reply at "On … wrote:" and its quote', () => {
    const text = lines(
      'Sounds good, see you Thursday.',
      '',
      'On Tue, 3 Nov 2026 at 10:02, Ada <ada@example.com> wrote:',
      '> Shall we meet on Thursday?',
      '>',
      '> Ada',
      '',
    );
    expect(replyTextOf(text)).toBe('Sounds good, see you Thursday.');
  });

  it('cuts a Gmail header wrapped before "wrote:"', () => {
    const text = lines(
      'Yes.',
      '',
      'On Tue, 3 Nov 2026 at 10:02, Ada Lovelace <ada.lovelace@example.com>',
      'wrote:',
      '',
      '> Shall we?',
    );
    expect(replyTextOf(text)).toBe('Yes.');
  });

  it('cuts an Apple Mail reply: its "Sent from my iPhone" and the quoted "On … wrote:"', () => {
    const text = lines(
      'Thanks, received.',
      '',
      'Sent from my iPhone',
      '',
      '> On 3 Nov 2026, at 10:02, Ada <ada@example.com> wrote:',
      '> ',
      '> Here is the file.',
    );
    expect(replyTextOf(text)).toBe('Thanks, received.');
  });

  it('cuts Outlook\'s "-----Original Message-----" block', () => {
    const text = lines(
      'Approved.',
      '',
      'Grace',
      '',
      '-----Original Message-----',
      'From: Ada Lovelace <ada@example.com>',
      'Sent: Tuesday, November 3, 2026 10:02 AM',
      'To: Grace <grace@example.com>',
      'Subject: Budget',
      '',
      'Please approve.',
    );
    expect(replyTextOf(text)).toBe('Approved.\n\nGrace');
  });

  it('cuts Outlook\'s "From: … Sent: …" block after its underscore rule', () => {
    const text = lines(
      'Approved.',
      '',
      '________________________________',
      'From: Ada Lovelace <ada@example.com>',
      'Sent: Tuesday, November 3, 2026 10:02 AM',
      'Subject: Budget',
      '',
      'Please approve.',
    );
    expect(replyTextOf(text)).toBe('Approved.');
  });

  it('cuts Outlook\'s "From: name" / "Sent:" block with no address, which the library keeps', () => {
    const text = lines(
      'Approved, go ahead.',
      '',
      'From: Ada Lovelace',
      'Sent: Tuesday, November 3, 2026 10:02 AM',
      'To: Grace Hopper',
      'Subject: Budget',
      '',
      'Please approve.',
    );
    expect(replyTextOf(text)).toBe('Approved, go ahead.');
  });

  it('keeps a message with no quote as it is, trailing blank lines aside', () => {
    const text = 'Hello,\n\nCan you send me the invoice for October?\n\nThanks\n\n';
    expect(replyTextOf(text)).toBe('Hello,\n\nCan you send me the invoice for October?\n\nThanks');
  });

  it('drops a "-- " signature', () => {
    expect(replyTextOf('The invoice is attached.\n\n-- \nGrace Hopper\nACME Ltd\n')).toBe('The invoice is attached.');
  });

  it('keeps the answers written between quoted lines when the quote comes first', () => {
    const text = lines(
      'On Tue, 3 Nov 2026 at 10:02, Ada <ada@example.com> wrote:',
      '> Can you come on Thursday?',
      '',
      'Yes, at ten.',
      '',
      '> And bring the slides?',
      '',
      'Of course.',
    );
    const reply = replyTextOf(text);
    expect(reply).toContain('Yes, at ten.');
    expect(reply).toContain('Of course.');
    expect(reply).not.toContain('>');
    expect(reply).not.toContain('wrote:');
  });
});
