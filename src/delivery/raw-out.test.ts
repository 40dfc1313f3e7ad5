import { describe, expect, it } from 'vitest';
import type { DeliveryJob } from './job.ts';
import { mailParamsOf, prepareRaw } from './raw-out.ts';

const job = (raw: string, headers: Record<string, string> = {}) =>
  ({
    raw: new Uint8Array(Buffer.from(raw)),
    from_email: 'me@sender.test',
    message_id: 'id1@svc.test',
    date: '2026-11-28T12:00:00.000Z',
    headers,
  }) as unknown as DeliveryJob & { raw: Uint8Array };

describe('prepareRaw', () => {
  it('keeps every other field and the body, takes out Bcc, Resent-Bcc, Return-Path and X-Service-*, adds what is missing', () => {
    const out = prepareRaw(
      job(
        'Return-Path: <x@y.test>\r\nFrom: A <me@sender.test>\r\nBcc: h@x.test\r\nTo:  b@x.test\r\nResent-Bcc: r@x.test\r\nX-Service-Tags: t\r\nSubject: s\r\n\r\nbody  \r\n.\r\n',
        { 'List-Unsubscribe': '<https://u.test/1>' },
      ),
    ).toString();
    expect(out).toBe(
      'From: A <me@sender.test>\r\nTo:  b@x.test\r\nSubject: s\r\nMessage-ID: <id1@svc.test>\r\n' +
        'Date: Sat, 28 Nov 2026 12:00:00 +0000\r\nList-Unsubscribe: <https://u.test/1>\r\n\r\nbody  \r\n.\r\n',
    );
  });

  it('puts the added fields in the header block of a message that is all header block, its last field taken out', () => {
    const out = prepareRaw(job('From: me@sender.test\r\nSubject: s\r\nBcc: hidden@y.test')).toString();
    expect(out).toBe(
      'From: me@sender.test\r\nSubject: s\r\nMessage-ID: <id1@svc.test>\r\nDate: Sat, 28 Nov 2026 12:00:00 +0000\r\n',
    );
  });

  it('ends an unterminated last field before the added ones', () => {
    const out = prepareRaw(job('From: me@sender.test\r\nMessage-ID: <a@b>\r\nSubject: s')).toString();
    expect(out).toBe(
      'From: me@sender.test\r\nMessage-ID: <a@b>\r\nSubject: s\r\nDate: Sat, 28 Nov 2026 12:00:00 +0000\r\n',
    );
  });
});

describe('mailParamsOf', () => {
  it('asks for 8BITMIME for an 8-bit body, and SMTPUTF8 too for UTF-8 in the header block', () => {
    expect(mailParamsOf(Buffer.from('A: b\r\n\r\nplain\r\n'))).toEqual({ eightBit: false, utf8: false });
    expect(mailParamsOf(Buffer.from('A: b\r\n\r\nGrüße\r\n'))).toEqual({ eightBit: true, utf8: false });
    expect(mailParamsOf(Buffer.from('Subject: Grüße\r\n\r\nx\r\n'))).toEqual({ eightBit: true, utf8: true });
  });
});
