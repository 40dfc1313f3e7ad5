import { PassThrough } from 'node:stream';
import MailComposer from 'nodemailer/lib/mail-composer';
import { describe, expect, it } from 'vitest';
import RelaxedBody from 'nodemailer/lib/dkim/relaxed-body';
import { REGEX_HASH_MAX_BYTES, relaxedBodyHash, serialize } from './mime.ts';

type Mail = ConstructorParameters<typeof MailComposer>[0];

/** Fixed boundary and date: two compiles of the same mail give the same bytes. */
const base: Mail = {
  from: { name: 'Acme Shop', address: 'shop@sender.test' },
  to: ['alice@dest.test', 'Bob <bob@dest.test>'],
  subject: 'Your order',
  messageId: '<m1@svc.test>',
  date: new Date('2026-11-24T10:00:00Z'),
  baseBoundary: 'f00dfeedcafe0123',
};

const bytes = (n: number, seed = 7) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed * 17) & 0xff));

/** Every shape of message the delivery worker composes, and the edges of nodemailer's encoders. */
const cases: [string, Mail][] = [
  ['text only, plain ASCII', { text: 'Hello Alice,\n\nyour order shipped.\n' }],
  ['html only', { html: '<p>Hello <b>Alice</b></p>' }],
  ['text and html', { text: 'Hi\n', html: '<p>Hi</p>' }],
  ['non-ASCII text and subject (quoted-printable)', { subject: 'Café ✓ Größe', text: 'Grüße aus Köln, €12,50.\n' }],
  [
    'mostly non-Latin text (base64)',
    { subject: 'Заказ отправлен', text: 'Ваш заказ отправлен сегодня утром. 订单已发货。' },
  ],
  [
    'lines longer than 76',
    { text: 'x'.repeat(300) + '\n' + 'word '.repeat(80), html: `<p>${'long '.repeat(200)}</p>` },
  ],
  ['trailing whitespace before line ends and at the end', { text: 'a line with trailing space   \nnext\t\nlast  ' }],
  ['CRLF and lone CR in text', { text: 'one\r\ntwo\rthree\nfour\r\n' }],
  ['empty text', { text: '' }],
  ['no body at all', {}],
  ['body over the 64 KiB encode slice', { text: ('é'.repeat(50) + ' ').repeat(1500), html: '<p>ü</p>'.repeat(9000) }],
  [
    'cc, reply-to and custom headers',
    {
      cc: ['c@dest.test'],
      replyTo: ['help@sender.test'],
      headers: { 'X-Order': '1001', 'X-Ünïcode': 'värde' },
      text: 'x',
    },
  ],
  [
    'attachments: binary, text, empty, unicode name',
    {
      text: 'see attached',
      html: '<p>see attached</p>',
      attachments: [
        { filename: 'invoice.pdf', contentType: 'application/pdf', content: bytes(5000) },
        { filename: 'notes.txt', contentType: 'text/plain', content: Buffer.from('line one\r\nline two  \n') },
        { filename: 'empty.bin', contentType: 'application/octet-stream', content: Buffer.alloc(0) },
        { filename: 'Rechnung Größe.csv', contentType: 'text/csv', content: Buffer.from('a;b\n1;ü\n') },
        { filename: 'odd.bin', contentType: 'application/octet-stream', content: bytes(1, 3) },
        { filename: 'two.bin', contentType: 'application/octet-stream', content: bytes(2, 5) },
      ],
    },
  ],
  [
    'attachment with lone CR and LF bytes',
    {
      text: 'x',
      attachments: [{ filename: 'a.dat', contentType: 'application/x-thing', content: Buffer.from('a\rb\nc\r\n \r') }],
    },
  ],
  ['html ending without a line break', { html: '<p>end</p>' }],
  ['plain text ending in a lone CR', { text: 'last line\r' }],
  [
    'attachment forced to quoted-printable (binary: lone CR and LF are data)',
    {
      text: 'x',
      attachments: [
        {
          filename: 'a.dat',
          contentType: 'application/x-thing',
          contentTransferEncoding: 'quoted-printable',
          content: Buffer.from('a\rb\nc\r\n end \r'),
        },
      ],
    },
  ],
];

describe('serialize (synchronous writer of nodemailer MIME trees)', () => {
  it.each(cases)('writes the same bytes as nodemailer’s stream: %s', async (_name, mail) => {
    const streamed = await new MailComposer({ ...base, ...mail }).compile().build();
    const written = serialize(new MailComposer({ ...base, ...mail }).compile());
    expect(written).not.toBeNull();
    expect(written!.toString('latin1')).toBe(streamed.toString('latin1'));
  });

  it('leaves a tree it does not cover to the stream (a body read from a stream, a raw message)', () => {
    const body = new PassThrough();
    body.end('streamed');
    expect(serialize(new MailComposer({ ...base, text: body }).compile())).toBeNull();
    expect(serialize(new MailComposer({ raw: 'Subject: x\r\n\r\nbody\r\n' }).compile())).toBeNull();
  });
});

/** nodemailer's streaming relaxed body hash, fed the whole body as the signer fed it. */
function nodemailerRelaxedHash(body: Buffer): string {
  const relaxed = new RelaxedBody({ hashAlgo: 'sha256' });
  let hash = '';
  relaxed.once('hash', (h: string) => (hash = h));
  relaxed.updateHash(body);
  relaxed._flush(() => {});
  return hash;
}

describe('relaxedBodyHash (DKIM relaxed body canonicalization)', () => {
  it.each([
    ['empty', ''],
    ['only line breaks', '\r\n\r\n\n'],
    ['only whitespace', ' \t \r\n  '],
    ['no final line break', 'abc'],
    ['trailing whitespace at the end', 'abc \t '],
    ['whitespace runs and tabs', 'a  b\t\tc \t d\r\n'],
    ['whitespace before CRLF and bare LF', 'a \r\nb\t\nc'],
    ['empty lines inside and at the end', 'a\r\n\r\n \r\nb\r\n\r\n\r\n'],
    ['lone CR inside, before whitespace, and at the end', 'a\rb \r \nc\r\r\nd\r'],
    ['8-bit bytes', 'Gr\xfc\xdfe \xe9  \r\n'],
  ])('hashes as nodemailer does: %s', (_name, text) => {
    const body = Buffer.from(text, 'latin1');
    expect(relaxedBodyHash(body)).toBe(nodemailerRelaxedHash(body));
  });

  it('hashes a body over the regex limit in pieces, as nodemailer does, across a CRLF and a whitespace run', () => {
    // A 64 KiB piece boundary falls inside "  \r\n" runs: the stream carries its state across.
    const line = 'x'.repeat(65_533) + '  \r\n';
    const body = Buffer.from(
      line.repeat(Math.ceil((REGEX_HASH_MAX_BYTES + 1) / line.length)) + ' \t\r\n\r\n',
      'latin1',
    );
    expect(body.length).toBeGreaterThan(REGEX_HASH_MAX_BYTES);
    expect(relaxedBodyHash(body)).toBe(nodemailerRelaxedHash(body));
  });

  it('hashes as nodemailer does on 3,000 random bodies of spaces, tabs, CR, LF and text', () => {
    const alphabet = [' ', '\t', '\r', '\n', '\r\n', 'a', 'b', '\xe9', '.'];
    let seed = 42;
    const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
    for (let i = 0; i < 3000; i++) {
      const text = Array.from({ length: next() % 40 }, () => alphabet[next() % alphabet.length]).join('');
      const body = Buffer.from(text, 'latin1');
      expect(relaxedBodyHash(body), JSON.stringify(text)).toBe(nodemailerRelaxedHash(body));
    }
  });
});
