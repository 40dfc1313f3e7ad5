import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import MailComposer from 'nodemailer/lib/mail-composer';
import { describe, expect, it } from 'vitest';
import { attachmentOf, readReceived } from './view.ts';

const fixture = (name: string) => readFileSync(new URL(`../../test/fixtures/receiving/${name}`, import.meta.url));
const url = (i: number) => `https://svc.test/v1/received/msg_1/attachments/${i}`;

// Known bytes: a PDF-like header with every byte value after it, so any transcoding shows.
const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.from(Array.from({ length: 256 }, (_, i) => i))]);
const notes = Buffer.from('日本語のメモ\r\nline two\n', 'utf8');
const logo = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(300)]);
const chart = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(500)]);
const big = randomBytes(40_000);

async function composed(): Promise<Buffer> {
  const mail = new MailComposer({
    from: '"Ada Lovelace" <ada@sender.test>',
    to: 'support@in.svc.test, "Grace Hopper" <grace@in.svc.test>',
    replyTo: 'replies@sender.test',
    subject: 'Résumé et graphiques – 2026',
    messageId: '<msg-1@sender.test>',
    inReplyTo: '<orig-1@svc.test>',
    references: ['<root@svc.test>', '<orig-1@svc.test>'],
    date: new Date('2026-11-03T10:02:00Z'),
    text: 'Here is my résumé.\n\nOn Tue, 3 Nov 2026 at 10:02, Support <support@svc.test> wrote:\n> Send it please.\n',
    html: '<p>Here is my résumé.</p><img src="cid:logo@sender.test"><img src="cid:chart@sender.test">',
    attachments: [
      { filename: 'Résumé – 2026.pdf', content: pdf, contentType: 'application/pdf' },
      { filename: '日本語.txt', content: notes, contentType: 'text/plain; charset=utf-8' },
      { filename: 'logo.png', content: logo, contentType: 'image/png', cid: 'logo@sender.test' },
      { filename: 'chart.png', content: chart, contentType: 'image/png', cid: 'chart@sender.test' },
      { filename: 'big.bin', content: big, contentType: 'application/octet-stream' },
    ],
  });
  return mail.compile().build();
}

describe('readReceived', () => {
  it('gives every attachment of a mixed + related message back byte for byte, with its decoded name', async () => {
    const raw = await composed();
    // The composer nests the cid images in multipart/related under multipart/mixed.
    expect(raw.toString()).toMatch(/multipart\/mixed[\s\S]*multipart\/related/);
    const view = await readReceived(raw, { inlineMaxBytes: 10_000, attachmentUrl: url });
    const byName = new Map(view.attachments.map((a) => [a.filename, a]));
    expect([...byName.keys()].sort()).toEqual(
      ['big.bin', 'chart.png', 'logo.png', 'Résumé – 2026.pdf', '日本語.txt'].sort(),
    );
    const expected = [
      ['Résumé – 2026.pdf', pdf, 'application/pdf', null, 'attachment'],
      ['日本語.txt', notes, 'text/plain', null, 'attachment'],
      ['logo.png', logo, 'image/png', 'logo@sender.test', 'inline'],
      ['chart.png', chart, 'image/png', 'chart@sender.test', 'inline'],
    ] as const;
    for (const [name, bytes, type, cid, disposition] of expected) {
      const a = byName.get(name)!;
      expect(Buffer.from(a.content_base64!, 'base64').equals(bytes), name).toBe(true);
      expect(a).toMatchObject({ content_type: type, size: bytes.length, content_id: cid, disposition });
      expect(a.url).toBeUndefined();
    }
    const large = byName.get('big.bin')!;
    expect(large).toMatchObject({ size: big.length, disposition: 'attachment', url: url(large.index) });
    expect(large.content_base64).toBeUndefined();
    expect(view.attachments.map((a) => a.index)).toEqual(view.attachments.map((_, i) => i));
    // The HTML keeps its cid: links as written.
    expect(view.html).toContain('src="cid:logo@sender.test"');
  });

  it('serves the same bytes by the same index for the download link', async () => {
    const raw = await composed();
    const view = await readReceived(raw, { inlineMaxBytes: 0, attachmentUrl: url });
    for (const a of view.attachments) {
      const got = await attachmentOf(raw, a.index);
      expect(got).toMatchObject({ filename: a.filename, content_type: a.content_type });
      expect(got!.content.length).toBe(a.size);
      expect(a.url).toBe(url(a.index));
    }
    const pdfAt = view.attachments.find((a) => a.filename === 'Résumé – 2026.pdf')!.index;
    expect((await attachmentOf(raw, pdfAt))!.content.equals(pdf)).toBe(true);
    expect(await attachmentOf(raw, view.attachments.length)).toBeUndefined();
    // Reading the same bytes again gives the same order.
    const again = await readReceived(raw, { inlineMaxBytes: 0, attachmentUrl: url });
    expect(again.attachments.map((a) => a.filename)).toEqual(view.attachments.map((a) => a.filename));
  });

  it('reads the addresses, the threading fields, the text and its reply text', async () => {
    const view = await readReceived(await composed(), { inlineMaxBytes: 0, attachmentUrl: url });
    expect(view).toMatchObject({
      from: { address: 'ada@sender.test', name: 'Ada Lovelace' },
      to: [
        { address: 'support@in.svc.test', name: '' },
        { address: 'grace@in.svc.test', name: 'Grace Hopper' },
      ],
      cc: [],
      reply_to: [{ address: 'replies@sender.test', name: '' }],
      subject: 'Résumé et graphiques – 2026',
      message_id: 'msg-1@sender.test',
      in_reply_to: 'orig-1@svc.test',
      references: ['root@svc.test', 'orig-1@svc.test'],
      date: '2026-11-03T10:02:00.000Z',
    });
    expect(view.text).toContain('> Send it please.');
    expect(view.reply_text).toBe('Here is my résumé.');
  });

  it('decodes an RFC 2231 continued file name and RFC 2047 header fields written by another client', async () => {
    const view = await readReceived(fixture('apple-mail-2231.eml'), { inlineMaxBytes: 1000, attachmentUrl: url });
    expect(view.subject).toBe('Re: Facture n° 42 – réponse');
    expect(view.from).toEqual({ address: 'jose@example.net', name: 'José García' });
    expect(view.to.map((a) => a.address)).toEqual(['support@in.svc.test', 'bob@in.svc.test']);
    // A group's members are its addresses.
    expect(view.cc.map((a) => a.address)).toEqual(['carol@example.net', 'dave@example.net']);
    expect(view.references).toEqual(['root@svc.test', 'orig-1@svc.test']);
    expect(view.date).toBe('2026-11-03T10:02:09.000Z');
    const pdfAttachment = view.attachments.find((a) => a.content_type === 'application/pdf');
    expect(pdfAttachment).toMatchObject({ filename: 'Facture n° 42 – décembre.pdf', disposition: 'attachment' });
    expect(Buffer.from(pdfAttachment!.content_base64!, 'base64').toString('latin1')).toBe(
      Buffer.from('JVBERi0xLjQKJcOkw7zDtsOfCjEgMCBvYmoK', 'base64').toString('latin1'),
    );
    // The calendar part, with no file name and no disposition, is a body, not an attachment.
    expect(view.attachments).toHaveLength(1);
    expect(view.text).toContain('Voilà la facture.');
    expect(view.reply_text).toBe('Voilà la facture.');
  });

  it('lists every header field in order, name as written, value unfolded and decoded', async () => {
    const view = await readReceived(fixture('apple-mail-2231.eml'), { inlineMaxBytes: 0, attachmentUrl: url });
    expect(view.headers.map((h) => h.name)).toEqual([
      'Received',
      'From',
      'To',
      'Cc',
      'Subject',
      'Date',
      'Message-ID',
      'In-Reply-To',
      'References',
      'X-Mailer',
      'MIME-Version',
      'Content-Type',
    ]);
    const value = (name: string) => view.headers.find((h) => h.name === name)?.value;
    expect(value('Received')).toBe(
      'from mail.example.net (mail.example.net [192.0.2.7]) by mx.svc.test with ESMTPS; Tue, 03 Nov 2026 10:02:11 +0000',
    );
    expect(value('Subject')).toBe('Re: Facture n° 42 – réponse');
    expect(value('From')).toBe('José García <jose@example.net>');
    expect(value('References')).toBe('<root@svc.test> <orig-1@svc.test>');
  });

  it('keeps an HTML-only message without a made-up text', async () => {
    const raw = await new MailComposer({
      from: 'ada@sender.test',
      to: 'support@in.svc.test',
      subject: 'Hi',
      html: '<p>Only HTML</p>',
    })
      .compile()
      .build();
    const view = await readReceived(raw, { inlineMaxBytes: 0, attachmentUrl: url });
    expect(view).toMatchObject({ text: null, reply_text: null, attachments: [] });
    expect(view.html?.trim()).toBe('<p>Only HTML</p>');
    expect(view.message_id).toMatch(/@/);
    expect(view.message_id).not.toMatch(/[<>]/);
    expect(view.date).not.toBeNull();
  });

  it('gives no date, rather than the time of reading, when the Date field is missing or unreadable', async () => {
    const message = (date: string) =>
      Buffer.from(`From: ada@sender.test\r\nTo: support@in.svc.test\r\n${date}Subject: x\r\n\r\nHello\r\n`);
    const read = (raw: Buffer) => readReceived(raw, { inlineMaxBytes: 0, attachmentUrl: url });
    expect((await read(message('Date: not a date\r\n'))).date).toBeNull();
    expect((await read(message(''))).date).toBeNull();
    expect((await read(message('Date: Tue, 3 Nov 2026 10:02:00 -0500\r\n'))).date).toBe('2026-11-03T15:02:00.000Z');
  });
});
