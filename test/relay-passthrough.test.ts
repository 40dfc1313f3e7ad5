import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SmtpRelay } from '../src/smtp/index.ts';
import type { DnsServer } from './peers/dns.ts';
import type { MxPeer, Received } from './peers/mx.ts';
import { smtpTalk } from './peers/smtp-talk.ts';
import {
  addSigningDomain,
  SELECTOR,
  settle,
  startDeliveryEnv,
  startDestinations,
  verifyDkim,
  type DeliveryEnv,
} from './delivery-helpers.ts';
import { testRelay } from './relay-helpers.ts';

/**
 * Issue 33: a message relayed over SMTP passes through. What the MX receives is the message as
 * its client wrote it, with svc's DKIM-Signature before it and Message-ID / Date after its
 * header fields when it had none; Bcc, Return-Path and X-Service-* are left out; every other
 * field keeps its bytes and place, and the body after the header block arrives byte for byte.
 * The fixtures are messages as real clients write them (test/fixtures/relay, CRLF line ends).
 */

let dns: DnsServer;
let mx: MxPeer;
let d: DeliveryEnv;
let relay: SmtpRelay;
let port: number;

beforeAll(async () => {
  ({ dns, mx } = await startDestinations(['dest.test']));
  d = await startDeliveryEnv(dns, { mxPort: String(mx.port) });
  // A second sending domain: the signature's d= follows each message's From.
  await addSigningDomain(d.env, dns, 'corp.test');
  relay = testRelay(d.env.app, { maxSessions: 20 });
  port = await relay.listen();
});

afterAll(async () => {
  await relay?.close();
  await d?.env.close();
  await mx?.close();
  await dns?.close();
});

const fixture = (name: string) => readFileSync(new URL(`./fixtures/relay/${name}`, import.meta.url));

/** The sizes of the two PNGs of 04-related-cid-images.eml, decoded (the API reports decoded sizes). */
const LOGO_PNG_BYTES = 2156;
const CHART_PNG_BYTES = 7219;

interface Envelope {
  from: string;
  to: string[];
  /** MAIL FROM parameters, with their leading space. */
  params?: string;
}

/**
 * One relayed message by hand (AUTH PLAIN with the LIVE key): DATA carries `data` as it is,
 * dot-stuffed, ended by the lone dot. Resolves with the email's id from the 250 reply.
 */
async function relaySend(data: Buffer, envelope: Envelope): Promise<string> {
  const s = await smtpTalk(port);
  try {
    expect(await s.reply()).toMatch(/^220 /);
    expect(await s.send('EHLO client.test')).toMatch(/^250[ -]/);
    expect(await s.send(`AUTH PLAIN ${Buffer.from(`\0apikey\0${d.key}`).toString('base64')}`)).toMatch(/^235 /);
    expect(await s.send(`MAIL FROM:<${envelope.from}>${envelope.params ?? ''}`)).toMatch(/^250 /);
    for (const to of envelope.to) expect(await s.send(`RCPT TO:<${to}>`)).toMatch(/^250 /);
    expect(await s.send('DATA')).toMatch(/^354 /);
    s.write(Buffer.concat([dotStuff(data), Buffer.from('.\r\n')]));
    const done = await s.reply();
    expect(done).toMatch(/^250 /);
    const id = /queued as (\S+)/.exec(done)?.[1];
    expect(id).toBeTruthy();
    await s.send('QUIT');
    return id!;
  } finally {
    s.close();
  }
}

/** RFC 5321 4.5.2: a line that starts with a dot gets one more (the message ends with CRLF). */
function dotStuff(data: Buffer): Buffer {
  return Buffer.from(`\r\n${data.toString('latin1')}`.replace(/\r\n\./g, '\r\n..').slice(2), 'latin1');
}

/** The one message the MX received for `to` since `mark` (its count before the send), once delivery settled. */
async function deliveredTo(mark: number, to: string): Promise<Received> {
  await settle(d.env);
  const found = mx.received.slice(mark).filter((m) => m.to.includes(to));
  expect(found, `messages received for ${to}`).toHaveLength(1);
  return found[0]!;
}

/** The header block's fields (each with its folded lines, without its last CRLF) as bytes (latin1), and the body. */
function splitMessage(raw: Buffer): { fields: string[]; body: Buffer } {
  const end = raw.indexOf('\r\n\r\n');
  expect(end, 'the end of the header block').toBeGreaterThan(0);
  const fields: string[] = [];
  for (const line of raw.toString('latin1', 0, end).split('\r\n')) {
    if ((line.startsWith(' ') || line.startsWith('\t')) && fields.length) fields[fields.length - 1] += `\r\n${line}`;
    else fields.push(line);
  }
  return { fields, body: raw.subarray(end + 4) };
}

const nameOf = (field: string) => field.slice(0, field.indexOf(':')).trim().toLowerCase();
const valueOf = (field: string) =>
  field
    .slice(field.indexOf(':') + 1)
    .replace(/\r\n(?=[ \t])/g, '')
    .trim();
/** Fields the relay takes out at delivery. */
const dropped = (field: string) =>
  ['bcc', 'return-path'].includes(nameOf(field)) || nameOf(field).startsWith('x-service-');

/** The fixtures must reach the test as written: every line ending in CRLF (see .gitattributes). */
function expectCrlfOnly(raw: Buffer): void {
  const rest = raw.toString('latin1').replace(/\r\n/g, '');
  expect(rest.includes('\r') || rest.includes('\n'), 'a bare CR or LF in the fixture').toBe(false);
  expect(raw.subarray(-2).toString(), 'the fixture ends with CRLF').toBe('\r\n');
}

/**
 * What the MX received is `sent` passed through: the same body bytes; svc's DKIM-Signature
 * (d= the From domain, verified by mailauth) first, then `sent`'s fields in order byte for
 * byte minus Bcc, Return-Path and X-Service-*, then Message-ID (`<id@host>`) and Date (the accept
 * time) when `sent` had none.
 */
async function expectPassedThrough(got: Received, sent: Buffer, fromDomain: string, id: string): Promise<void> {
  const mine = splitMessage(sent);
  const theirs = splitMessage(got.raw);
  expect(theirs.body.toString('latin1'), 'the body after the header block').toBe(mine.body.toString('latin1'));

  const kept = mine.fields.filter((f) => !dropped(f));
  expect(nameOf(theirs.fields[0] ?? ''), 'the first field').toBe('dkim-signature');
  expect(theirs.fields.filter((f) => nameOf(f) === 'dkim-signature')).toHaveLength(1);
  expect(valueOf(theirs.fields[0]!)).toMatch(new RegExp(`(^|;)\\s*d=${fromDomain.replace(/\./g, '\\.')}\\s*(;|$)`));
  expect(theirs.fields.slice(1, 1 + kept.length), "the message's own fields, in order").toEqual(kept);

  // In this order (docs/decisions.md): Message-ID, then Date.
  const missing = ['message-id', 'date'].filter((n) => !mine.fields.some((f) => nameOf(f) === n));
  const appended = theirs.fields.slice(1 + kept.length);
  expect(appended.map(nameOf), 'the fields svc appended').toEqual(missing);
  for (const n of ['message-id', 'date']) expect(theirs.fields.filter((f) => nameOf(f) === n)).toHaveLength(1);
  if (missing.includes('message-id')) {
    // The email's id at svc's host name (docs/decisions.md, "SMTP relay: messages pass through").
    expect(valueOf(theirs.fields.find((f) => nameOf(f) === 'message-id')!)).toBe(`<${id}@mta.svc.test>`);
  }
  if (missing.includes('date')) {
    const date = valueOf(theirs.fields.find((f) => nameOf(f) === 'date')!);
    // The accept's time on the env's clock, to the second (RFC 5322 dates have no milliseconds).
    expect(Math.abs(Date.parse(date) - d.env.clock.now()), `Date: ${date}`).toBeLessThan(1000);
  }

  expect(await verifyDkim(got.raw, dns)).toEqual({ status: 'pass', domain: fromDomain, selector: SELECTOR });
}

interface View {
  subject: string;
  from_email: string;
  from_name: string | null;
  to_emails: string[];
  cc_emails?: string[];
  text: string | null;
  html: string | null;
  attachments: { filename: string; content_type: string; size?: number; content_id?: string | null }[];
}

/** A body as text for comparing: line ends as LF, no trailing line ends (a part's last CRLF is its delimiter's). */
const norm = (v: unknown) => (typeof v === 'string' ? v.replace(/\r\n/g, '\n').replace(/\n+$/, '') : v);

/** The API's view of email `id` (read from the stored message) is `view`. */
async function expectView(id: string, view: View): Promise<void> {
  const projectId = d.env.init.project_id;
  const got = await d.env.app.emails.get(projectId, id);
  expect({
    subject: got.subject,
    from_email: got.from_email,
    from_name: got.from_name,
    to_emails: got.to_emails,
    cc_emails: got.cc_emails,
  }).toEqual({
    subject: view.subject,
    from_email: view.from_email,
    from_name: view.from_name,
    to_emails: view.to_emails,
    cc_emails: view.cc_emails ?? null,
  });
  expect(norm(got.text_body), 'text_body').toBe(norm(view.text));
  expect(norm(got.html_body), 'html_body').toBe(norm(view.html));
  const attachments = await d.env.app.emails.attachments(projectId, id);
  expect(attachments.map((a) => ({ filename: a.filename, content_type: a.content_type }))).toEqual(
    view.attachments.map((a) => ({ filename: a.filename, content_type: a.content_type })),
  );
  expect(attachments).toMatchObject(view.attachments);
}

interface Case {
  name: string;
  file: string;
  envelope: Envelope;
  view: View;
}

const lines = (...l: string[]) => l.join('\n');

const CASES: Case[] = [
  {
    name: 'S/MIME multipart/signed with a detached application/pkcs7-signature (Thunderbird)',
    file: '01-smime-signed.eml',
    envelope: { from: 'alice@sender.test', to: ['smime@dest.test'] },
    view: {
      subject: 'Signed: Q1 figures',
      from_email: 'alice@sender.test',
      from_name: 'Example, Alice',
      to_emails: ['smime@dest.test'],
      text: lines(
        'Hi Bob,',
        '',
        'the Q1 figures are in the shared folder.  Please check the totals',
        'before Friday.',
        '',
        'Regards,',
        'Alice',
      ),
      html: lines(
        '<!DOCTYPE html>',
        '<html>',
        '  <head>',
        '    <meta http-equiv="content-type" content="text/html; charset=UTF-8">',
        '  </head>',
        '  <body>',
        '    <p>Hi Bob,</p>',
        '    <p>the Q1 figures are in the shared folder.&nbsp; Please check the totals',
        '      before Friday.</p>',
        '    <p>Regards,<br>',
        '      Alice</p>',
        '  </body>',
        '</html>',
      ),
      attachments: [{ filename: 'smime.p7s', content_type: 'application/pkcs7-signature' }],
    },
  },
  {
    name: 'PGP/MIME multipart/signed with protected headers, and lines that start with a dot (Thunderbird)',
    file: '02-pgp-mime-signed.eml',
    envelope: { from: 'alice@sender.test', to: ['pgp@dest.test'] },
    view: {
      subject: 'Release 4.2 checksums',
      from_email: 'alice@sender.test',
      from_name: 'Alice Example',
      to_emails: ['pgp@dest.test'],
      text: lines(
        'Hi all,',
        '',
        'the release tarball ships these hidden files:',
        '.gitignore',
        '.editorconfig',
        '..double-dot-name',
        '.',
        'and the checksums are:',
        '',
        '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08  svc-4.2.tar.gz',
        '',
        '-- ',
        'Alice',
      ),
      html: null,
      attachments: [{ filename: 'OpenPGP_signature.asc', content_type: 'application/pgp-signature' }],
    },
  },
  {
    name: 'a calendar REQUEST: text, HTML and text/calendar alternatives and an .ics attachment (Google Calendar)',
    file: '03-calendar-request.eml',
    envelope: { from: 'organizer@corp.test', to: ['invitee@dest.test', 'cc-invitee@dest.test'] },
    view: {
      subject: 'Invitation: Design review @ Tue 17 Mar 2026 15:00 - 16:00 (CET) (invitee@dest.test)',
      from_email: 'organizer@corp.test',
      from_name: 'Olga Organizer',
      to_emails: ['invitee@dest.test'],
      cc_emails: ['cc-invitee@dest.test'],
      text: lines(
        'Design review',
        'Tuesday 17 March 2026 15:00 - 16:00 (CET)',
        'Location: Room 4.12',
        '',
        'Walk through the new relay design.',
        '',
        'Reply for invitee@dest.test: Yes / No / Maybe',
      ),
      html: '<div><h2>Design review</h2><p>Tuesday 17 March 2026 15:00 - 16:00 (CET)</p><p>Location: Room 4.12</p><p>Walk through the new relay design.</p></div>',
      // The text/calendar alternative is the message's invitation, not a file: only invite.ics is attached.
      attachments: [{ filename: 'invite.ics', content_type: 'application/ics' }],
    },
  },
  {
    name: 'multipart/related HTML with two cid: images in base64 (Apple Mail), tagged with X-Service-Tags',
    file: '04-related-cid-images.eml',
    envelope: { from: 'news@sender.test', to: ['related@dest.test'] },
    view: {
      subject: 'Our March update',
      from_email: 'news@sender.test',
      from_name: 'Marketing Team',
      to_emails: ['related@dest.test'],
      text: lines('Our March update', '', 'Revenue is up, see the chart.'),
      html: '<html><head><meta http-equiv="content-type" content="text/html; charset=us-ascii"></head><body style="overflow-wrap: break-word;"><img src="cid:logo.7F3A9C@sender.test" alt="Logo"><div>Our March update</div><div><br></div><div>Revenue is up, see the chart.</div><div><img src="cid:chart.1B2C3D@sender.test" alt="Chart"></div></body></html>',
      attachments: [
        {
          filename: 'logo.png',
          content_type: 'image/png',
          size: LOGO_PNG_BYTES,
          content_id: 'logo.7F3A9C@sender.test',
        },
        {
          filename: 'chart.png',
          content_type: 'image/png',
          size: CHART_PNG_BYTES,
          content_id: 'chart.1B2C3D@sender.test',
        },
      ],
    },
  },
  {
    name: 'an 8-bit UTF-8 body without Message-ID and Date (BODY=8BITMIME)',
    file: '05-8bit-body.eml',
    envelope: { from: 'ci@sender.test', to: ['eightbit@dest.test'], params: ' BODY=8BITMIME' },
    view: {
      subject: 'Nightly build résumé',
      from_email: 'ci@sender.test',
      from_name: 'Build Bot',
      to_emails: ['eightbit@dest.test'],
      text: lines(
        'Nightly build résumé',
        '',
        'Zürich: ✔ passed',
        'São Paulo: ✘ failed (naïve café test)',
        '東京: ✔ passed',
        'Deploy: 🚀 — next window 02:00–03:00',
      ),
      html: null,
      attachments: [],
    },
  },
  {
    name: 'UTF-8 in the Subject and the From name (SMTPUTF8 BODY=8BITMIME)',
    file: '05-smtputf8.eml',
    envelope: { from: 'zoe@sender.test', to: ['utf8@dest.test'], params: ' SMTPUTF8 BODY=8BITMIME' },
    view: {
      subject: 'Grüße aus Köln – 東京 meeting',
      from_email: 'zoe@sender.test',
      from_name: 'Zoë Ångström',
      to_emails: ['utf8@dest.test'],
      text: lines('Hallo Jürgen,', '', 'bis nächste Woche in 東京.', '', 'Zoë'),
      html: null,
      attachments: [],
    },
  },
  {
    name: 'quoted-printable with =20 and raw trailing spaces, double spaces and soft line breaks, without Date (Outlook)',
    file: '06-quoted-printable.eml',
    envelope: { from: 'qp@sender.test', to: ['qp@dest.test'] },
    view: {
      subject: 'Minutes of the weekly meeting',
      from_email: 'qp@sender.test',
      from_name: 'Quentin P.',
      to_emails: ['qp@dest.test'],
      // RFC 2045 6.7: =20 is a space; white space at a line's end was added in transport and is deleted.
      text: lines(
        'Hello team, ',
        'a raw trailing space follows here',
        'Two  spaces  between  words  and  after  full stops.  Like  this.',
        'This paragraph is longer than seventy-six characters, so it is wrapped with a soft line break in the middle of a word, and once more at a space.',
        'Café costs €3 = cheap.',
        '',
        'Quentin',
      ),
      html: '<html><head><meta http-equiv="Content-Type" content="text/html; charset=utf-8"></head><body><p>Hello team,&nbsp;</p><p>Two&nbsp; spaces.</p><p>Café</p></body></html>',
      attachments: [],
    },
  },
  {
    name: 'a 990-octet body line and a References folded over 3000 characters',
    file: '07-long-lines.eml',
    envelope: { from: 'long@sender.test', to: ['long@dest.test'] },
    view: {
      subject: 'Re: [svc-dev] a very long thread about line lengths',
      from_email: 'long@sender.test',
      from_name: 'Long Lines',
      to_emails: ['long@dest.test'],
      text: lines(
        'The next line is 990 octets long:',
        'lorem-ipsum-dolor-sit-amet-'.repeat(37).slice(0, 990),
        'and this one is short.',
      ),
      html: null,
      attachments: [],
    },
  },
];

describe('a relayed message passes through to the MX (issue 33)', () => {
  it.each(CASES)('$name', async ({ file, envelope, view }) => {
    const raw = fixture(file);
    expectCrlfOnly(raw);
    const mark = mx.received.length;
    const id = await relaySend(raw, envelope);
    const fromDomain = view.from_email.slice(view.from_email.indexOf('@') + 1);
    // 8-bit bytes go with BODY=8BITMIME (RFC 6152), UTF-8 in the header fields with SMTPUTF8 too (RFC 6531).
    const high = (b: Buffer) => b.some((x) => x > 0x7f);
    const params = {
      ...(high(raw) ? { BODY: '8BITMIME' } : {}),
      ...(high(raw.subarray(0, raw.indexOf('\r\n\r\n'))) ? { SMTPUTF8: true } : {}),
    };
    for (const to of envelope.to) {
      const got = await deliveredTo(mark, to);
      await expectPassedThrough(got, raw, fromDomain, id);
      expect(got.mailParams, 'MAIL FROM parameters').toEqual(params);
    }
    expect(await d.email(id)).toMatchObject({ status: 'DELIVERED', source: 'SMTP' });
    await expectView(id, view);
  });

  it('the fixtures are what the cases say: a dot line, a 990-octet line, a 3000-character References', () => {
    const pgp = fixture('02-pgp-mime-signed.eml').toString('latin1');
    expect(pgp).toMatch(/\r\n\.\r\n/);
    const long = splitMessage(fixture('07-long-lines.eml'));
    expect(
      long.body
        .toString('latin1')
        .split('\r\n')
        .map((l) => l.length),
    ).toContain(990);
    const references = long.fields.find((f) => nameOf(f) === 'references')!;
    expect(references.length).toBeGreaterThan(3000);
    expect(Math.max(...references.split('\r\n').map((l) => l.length))).toBeLessThan(998);
    expect(fixture('05-8bit-body.eml').toString('latin1')).not.toMatch(/^(message-id|date):/im);
    expect(fixture('06-quoted-printable.eml').toString('latin1')).toMatch(/ \r\n/);
  });

  it('leaves the Bcc header out of what the MX receives, while the bcc recipient still gets the message', async () => {
    const raw = fixture('08-bcc-header.eml');
    expectCrlfOnly(raw);
    const mark = mx.received.length;
    const id = await relaySend(raw, { from: 'alice@sender.test', to: ['visible@dest.test', 'hidden@dest.test'] });
    const visible = await deliveredTo(mark, 'visible@dest.test');
    const hidden = await deliveredTo(mark, 'hidden@dest.test');
    expect(hidden.to).toEqual(['hidden@dest.test']);
    for (const got of [visible, hidden]) {
      expect(got.raw.toString('latin1')).not.toMatch(/^bcc:/im);
      expect(got.raw.toString('latin1')).not.toContain('hidden@dest.test');
      // Return-Path and X-Service-Tags are gone too (expectPassedThrough holds the rest to the message).
      expect(got.raw.toString('latin1')).not.toMatch(/^(return-path|x-service-tags):/im);
      await expectPassedThrough(got, raw, 'sender.test', id);
    }
    const view = await d.env.app.emails.get(d.env.init.project_id, id);
    expect({ to: view.to_emails, bcc: view.bcc_emails }).toEqual({
      to: ['visible@dest.test'],
      bcc: ['hidden@dest.test'],
    });
  });

  it('makes bare LF and bare CR line ends CRLF at accept, so what is delivered is the CRLF message', async () => {
    const crlf = fixture('06-quoted-printable.eml');
    expectCrlfOnly(crlf);
    // Every line ended by a bare LF, except one by a bare CR (the one with two spaces between its words).
    const bare = crlf.toString('latin1').replace(/\r\n/g, '\n').replace('Like  this.\n', 'Like  this.\r').slice(0, -1);
    expect(bare).toContain('Like  this.\r');
    const mark = mx.received.length;
    // DATA ends with CRLF . CRLF: that CRLF ends the message's last line.
    const id = await relaySend(Buffer.from(`${bare}\r\n`, 'latin1'), { from: 'qp@sender.test', to: ['qp@dest.test'] });
    await expectPassedThrough(await deliveredTo(mark, 'qp@dest.test'), crlf, 'sender.test', id);
  });
});
