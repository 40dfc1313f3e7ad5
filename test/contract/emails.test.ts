// The emails store (src/emails/store.ts) on both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Audited } from '../../src/audit/index.ts';
import type { AcceptOptions, NewEmail, Recipient } from '../../src/emails/store.ts';
import { searchQuerySchema, type ListQuery } from '../../src/emails/schema.ts';
import { newEmail } from '../postgres/email-fixture.ts';
import { AT, openStore, STORE_KINDS, type OpenedStore } from './stores.ts';

const PLAIN: AcceptOptions = { suppress: false, volume: null, idempotency: null };
const to = (...addresses: string[]): Recipient[] => addresses.map((address) => ({ address, kind: 'to' }));
const email = (id: string, over: Partial<NewEmail> = {}): NewEmail =>
  newEmail(id, { to: ['a@x.test'], created_at: AT, ...over });
const refusal = (code: string) => expect.objectContaining({ code });

describe.each(STORE_KINDS)('EmailsStore on %s', (kind) => {
  let s: OpenedStore;
  beforeAll(async () => {
    s = await openStore(kind);
    await s.exec(`INSERT INTO projects (id, organization_id, name, created_at) VALUES ('pl', 'o1', 'L', '${AT}');
      INSERT INTO projects (id, organization_id, name, created_at) VALUES ('pr', 'o1', 'R', '${AT}');
      INSERT INTO suppressions (project_id, email, reason, created_at) VALUES ('p1', 'gone@x.test', 'HARD_BOUNCE', '${AT}')`);
  });
  afterAll(() => s?.close());
  const count = async (sql: string) => Number((await s.query<{ n: number }>(sql))[0]!.n);
  const seqOf = async (id: string) => (await s.store.emails.findById(id))!.seq;

  it('acceptEmail: keeps a message passed through as written, byte for byte, and findById reads it back', async () => {
    const raw = Buffer.from('From: a@x.test\r\nTo: b@x.test\r\nSubject: \xe9\r\n\r\nbody \x00\xff\r\n', 'latin1');
    await s.store.emails.acceptEmail(email('raw1', { html: null, text: null, raw }), to('b@x.test'), PLAIN);
    const row = (await s.store.emails.findById('raw1'))!;
    expect(Buffer.isBuffer(row.raw_message) && row.raw_message.equals(raw)).toBe(true);
    expect([row.html_body, row.text_body]).toEqual([null, null]);
  });

  it('acceptEmail: writes the email, its body, tags, recipients, attachments and first event', async () => {
    const attachments = [
      { filename: 'a.txt', content_type: 'text/plain', content: Buffer.from('A'), content_id: null },
      { filename: 'b.txt', content_type: 'text/plain', content: Buffer.from('B'), content_id: 'cid-b' },
    ];
    const r = await s.store.emails.acceptEmail(
      email('a1', { tags: ['t', 't'], html: '<p>h</p>', attachments }),
      to('A@X.test', 'b@y.test'),
      PLAIN,
    );
    expect(r).toEqual({ replay: false, response: { id: 'a1', status: 'QUEUED', skipped_recipients: [] } });
    const seq = await seqOf('a1');
    expect(
      await s.query(`SELECT address, address_lc, domain, kind, status, next_attempt_at FROM recipients
        WHERE email_seq = ${seq} ORDER BY address_lc`),
    ).toEqual([
      {
        address: 'A@X.test',
        address_lc: 'a@x.test',
        domain: 'x.test',
        kind: 'to',
        status: 'QUEUED',
        next_attempt_at: AT,
      },
      {
        address: 'b@y.test',
        address_lc: 'b@y.test',
        domain: 'y.test',
        kind: 'to',
        status: 'QUEUED',
        next_attempt_at: AT,
      },
    ]);
    expect(await s.query(`SELECT tag FROM email_tags WHERE email_seq = ${seq}`)).toEqual([{ tag: 't' }]);
    expect(await s.query(`SELECT html_body, text_body FROM email_bodies WHERE email_seq = ${seq}`)).toEqual([
      { html_body: '<p>h</p>', text_body: 'x' },
    ]);
    expect((await s.store.emails.listEvents(seq)).map((e) => [e.id, e.type])).toEqual([['ev-a1', 'queued']]);
    const stored = await s.store.emails.listAttachments(seq);
    expect(stored.map((a) => [a.filename, Buffer.from(a.content).toString(), a.content_id])).toEqual([
      ['a.txt', 'A', null],
      ['b.txt', 'B', 'cid-b'],
    ]);
  });

  it('acceptEmail: drops suppressed recipients from the email and lists them as skipped', async () => {
    const e = email('a2', { to: ['gone@x.test', 'a@x.test'] });
    const r = await s.store.emails.acceptEmail(e, to('Gone@X.test', 'a@x.test'), { ...PLAIN, suppress: true });
    expect(r.response.skipped_recipients).toEqual([{ email: 'Gone@X.test', reason: 'HARD_BOUNCE' }]);
    expect(JSON.parse((await s.store.emails.findById('a2'))!.to_emails as string)).toEqual(['a@x.test']);
    expect(await count(`SELECT count(*) AS n FROM recipients WHERE email_seq = ${await seqOf('a2')}`)).toBe(1);
  });

  it('acceptEmail: refuses all_recipients_suppressed, a second trial and a passed volume, writing nothing', async () => {
    const suppressed = s.store.emails.acceptEmail(email('a3'), to('gone@x.test'), { ...PLAIN, suppress: true });
    await expect(suppressed).rejects.toEqual(refusal('all_recipients_suppressed'));
    await s.store.emails.acceptEmail(email('a4', { project_id: 'pr', trial: true }), to('a@x.test'), PLAIN);
    const trial = s.store.emails.acceptEmail(email('a5', { project_id: 'pr', trial: true }), to('a@x.test'), PLAIN);
    await expect(trial).rejects.toEqual(refusal('trial_restricted'));
    const volume = { orgId: 'o1', limits: { monthly: 1, daily: null }, now: Date.parse(AT) };
    const over = s.store.emails.acceptEmail(email('a6'), to('a@x.test', 'b@x.test'), { ...PLAIN, volume });
    await expect(over).rejects.toEqual(refusal('monthly_volume_exceeded'));
    expect(await count("SELECT count(*) AS n FROM emails WHERE id IN ('a3', 'a5', 'a6')")).toBe(0);
  });

  it('acceptEmail: counts the kept recipients against the volume', async () => {
    const volume = { orgId: 'o1', limits: { monthly: null, daily: null }, now: Date.parse(AT) };
    const before = await count("SELECT coalesce(sum(count), 0) AS n FROM usage_counters WHERE period = '2026-11'");
    await s.store.emails.acceptEmail(email('a7'), to('a@x.test', 'b@x.test'), { ...PLAIN, volume });
    const after = await count("SELECT coalesce(sum(count), 0) AS n FROM usage_counters WHERE period = '2026-11'");
    expect(after - before).toBe(2);
  });

  it('acceptEmail: the same idempotency key replays the first response; another body is refused', async () => {
    const idempotency = { key: 'k1', hash: 'h1', expiresAt: '2026-11-27T12:00:00.000Z' };
    const first = await s.store.emails.acceptEmail(email('i1'), to('a@x.test'), { ...PLAIN, idempotency });
    const again = await s.store.emails.acceptEmail(email('i2'), to('a@x.test'), { ...PLAIN, idempotency });
    expect(again).toEqual({ replay: true, response: first.response });
    expect(await s.store.emails.findById('i2')).toBeUndefined();
    const other = s.store.emails.acceptEmail(email('i3'), to('a@x.test'), {
      ...PLAIN,
      idempotency: { ...idempotency, hash: 'h2' },
    });
    await expect(other).rejects.toEqual(refusal('idempotency_key_reused'));
  });

  it('findIdempotent: the committed record as its replay, undefined when none or expired, a refusal for another body', async () => {
    const idempotency = { key: 'k2', hash: 'h1', expiresAt: '2026-11-27T12:00:00.000Z' };
    expect(await s.store.emails.findIdempotent('p1', 'k2', 'h1', AT)).toBeUndefined();
    const { response } = await s.store.emails.acceptEmail(email('i4'), to('a@x.test'), { ...PLAIN, idempotency });
    expect(await s.store.emails.findIdempotent('p1', 'k2', 'h1', AT)).toEqual({ replay: true, response });
    expect(await s.store.emails.findIdempotent('p1', 'k2', 'h1', '2026-11-28T12:00:00.000Z')).toBeUndefined();
    await expect(s.store.emails.findIdempotent('p1', 'k2', 'h2', AT)).rejects.toEqual(
      refusal('idempotency_key_reused'),
    );
  });

  it('acceptEmails: each item on its own, outcomes and seqs in the items order', async () => {
    const outcomes = await s.store.emails.acceptEmails([
      { email: email('b1'), recipients: to('a@x.test'), opts: PLAIN },
      { email: email('b2'), recipients: to('gone@x.test'), opts: { ...PLAIN, suppress: true } },
      { email: email('b3'), recipients: to('a@x.test'), opts: PLAIN },
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(outcomes[1]).toEqual({ status: 'rejected', reason: refusal('all_recipients_suppressed') });
    expect(await seqOf('b1')).toBeLessThan(await seqOf('b3'));
    expect(await s.store.emails.findById('b2')).toBeUndefined();
  });

  it('resendEmail: accepts the email with its audit row in the same transaction; a refusal writes neither', async () => {
    const audited = (id: string) => (r: { id: string }) => ({
      actor: { type: 'cli' as const, os_user: 'op' },
      atMs: Date.parse(AT),
      entry: {
        action: 'email.resend',
        organization_id: 'o1',
        project_id: 'p1',
        target_type: 'email',
        target_id: id,
        before: null,
        after: r,
      },
    });
    const sent = await s.store.emails.resendEmail(
      email('r1', { resent_from: 'a1' }),
      to('a@x.test'),
      PLAIN,
      audited('r1'),
    );
    expect(sent).toEqual({ id: 'r1', status: 'QUEUED', skipped_recipients: [] });
    expect((await s.store.emails.findById('r1'))!.resent_from).toBe('a1');
    expect(await s.query("SELECT action, target_id FROM audit_logs WHERE target_id = 'r1'")).toEqual([
      { action: 'email.resend', target_id: 'r1' },
    ]);
    const refused = s.store.emails.resendEmail(
      email('r2'),
      to('gone@x.test'),
      { ...PLAIN, suppress: true },
      audited('r2'),
    );
    await expect(refused).rejects.toEqual(refusal('all_recipients_suppressed'));
    expect(await count("SELECT count(*) AS n FROM audit_logs WHERE target_id = 'r2'")).toBe(0);
  });

  it('changeSchedule: moves or cancels an email no recipient has started; refuses a started, a final or a cancelled one', async () => {
    const LATER = '2026-03-15T13:00:00.000Z';
    const NOW = '2026-03-15T12:00:05.000Z';
    await s.store.emails.acceptEmail(email('sc1', { scheduled_at: LATER }), to('a@x.test', 'b@y.test'), PLAIN);
    const seq = await seqOf('sc1');
    const due = async () =>
      await s.query<{ next_attempt_at: string | null; status: string }>(
        `SELECT next_attempt_at, status FROM recipients WHERE email_seq = ${seq} ORDER BY address_lc`,
      );
    expect(await due()).toEqual([
      { next_attempt_at: LATER, status: 'QUEUED' },
      { next_attempt_at: LATER, status: 'QUEUED' },
    ]);
    const AFTER = '2026-03-16T09:00:00.000Z';
    expect(await s.store.emails.changeSchedule('p1', 'sc1', { at: AFTER }, NOW)).toEqual({
      outcome: 'done',
      status: 'QUEUED',
      scheduled_at: AFTER,
    });
    expect((await due()).map((r) => r.next_attempt_at)).toEqual([AFTER, AFTER]);
    expect((await s.store.emails.findById('sc1'))!.scheduled_at).toBe(AFTER);
    expect(await s.store.emails.changeSchedule('pr', 'sc1', { at: LATER }, NOW)).toEqual({ outcome: 'missing' });
    expect(await s.store.emails.changeSchedule('p1', 'none', { at: LATER }, NOW)).toEqual({ outcome: 'missing' });
    expect(await s.store.emails.changeSchedule('p1', 'sc1', { cancel: { eventId: 'ev-c1' } }, NOW)).toEqual({
      outcome: 'done',
      status: 'CANCELED',
      scheduled_at: AFTER,
    });
    expect(await due()).toEqual([
      { next_attempt_at: null, status: 'CANCELED' },
      { next_attempt_at: null, status: 'CANCELED' },
    ]);
    expect((await s.store.emails.findById('sc1'))!.status).toBe('CANCELED');
    expect((await s.store.emails.listEvents(seq)).map((e) => [e.id, e.type])).toEqual([
      ['ev-sc1', 'queued'],
      ['ev-c1', 'canceled'],
    ]);
    expect(await s.store.emails.changeSchedule('p1', 'sc1', { cancel: { eventId: 'ev-c2' } }, NOW)).toEqual({
      outcome: 'started',
      status: 'CANCELED',
    });
    // One recipient attempted (as delivery's claim leaves it): the email has started, nothing changes.
    await s.store.emails.acceptEmail(email('sc2', { scheduled_at: LATER }), to('a@x.test', 'b@y.test'), PLAIN);
    const seq2 = await seqOf('sc2');
    await s.exec(`UPDATE recipients SET attempts = 1 WHERE email_seq = ${seq2} AND address_lc = 'b@y.test'`);
    expect(await s.store.emails.changeSchedule('p1', 'sc2', { cancel: { eventId: 'ev-c3' } }, NOW)).toEqual({
      outcome: 'started',
      status: 'QUEUED',
    });
    expect(await s.store.emails.changeSchedule('p1', 'sc2', { at: AFTER }, NOW)).toEqual({
      outcome: 'started',
      status: 'QUEUED',
    });
    expect(
      await count(`SELECT count(*) AS n FROM recipients WHERE email_seq = ${seq2} AND next_attempt_at = '${LATER}'`),
    ).toBe(2);
  });

  it('changeSchedule: writes the audit row it is given with a change made, none with a refusal', async () => {
    const NOW = '2026-03-15T12:00:05.000Z';
    await s.store.emails.acceptEmail(email('sc3', { scheduled_at: '2026-03-15T13:00:00.000Z' }), to('a@x.test'), PLAIN);
    const audited = (action: string): Audited => ({
      actor: { type: 'cli', os_user: 'root' },
      atMs: Date.parse(NOW),
      entry: { action, project_id: 'p1', target_type: 'email', target_id: 'sc3', before: null, after: null },
    });
    await s.store.emails.changeSchedule('p1', 'sc3', { cancel: { eventId: 'ev-c4' } }, NOW, audited('email.cancel'));
    await s.store.emails.changeSchedule('p1', 'sc3', { cancel: { eventId: 'ev-c5' } }, NOW, audited('email.again'));
    expect(await s.query("SELECT action FROM audit_logs WHERE target_id = 'sc3'")).toEqual([
      { action: 'email.cancel' },
    ]);
  });

  it('suppressionOf: the reason for an address in any case, null when not suppressed', async () => {
    expect(await s.store.emails.suppressionOf('p1', 'GONE@x.test')).toBe('HARD_BOUNCE');
    expect(await s.store.emails.suppressionOf('p1', 'a@x.test')).toBeNull();
    expect(await s.store.emails.suppressionOf('pr', 'gone@x.test')).toBeNull();
  });

  it('findById: the email of any project with its bodies, undefined when none', async () => {
    const row = await s.store.emails.findById('a1');
    expect(row).toMatchObject({ id: 'a1', project_id: 'p1', html_body: '<p>h</p>', text_body: 'x', subject: 's' });
    expect((await s.store.emails.findById('a4'))!.project_id).toBe('pr');
    expect(await s.store.emails.findById('missing')).toBeUndefined();
  });

  it('listAttachments, listAttachmentInfo and listEvents: in their order, none for an email without', async () => {
    const seq = await seqOf('a1');
    expect((await s.store.emails.listAttachments(seq)).map((a) => a.filename)).toEqual(['a.txt', 'b.txt']);
    expect(await s.store.emails.listAttachments(await seqOf('b1'))).toEqual([]);
    expect(await s.store.emails.listAttachmentInfo(seq)).toEqual([
      { filename: 'a.txt', content_type: 'text/plain', size: 1, content_id: null },
      { filename: 'b.txt', content_type: 'text/plain', size: 1, content_id: 'cid-b' },
    ]);
    expect(await s.store.emails.listAttachmentInfo(await seqOf('b1'))).toEqual([]);
    await s.exec(`INSERT INTO email_events (id, email_seq, type, data, created_at)
      VALUES ('ev-a1-2', ${seq}, 'sent', '{}', '${AT}')`);
    expect((await s.store.emails.listEvents(seq)).map((e) => e.id)).toEqual(['ev-a1', 'ev-a1-2']);
  });

  describe('list', () => {
    // The cursors are the store's to look up: ids here are not the UUIDs the API parses.
    const q = ({ before, after, ...over }: Record<string, unknown> = {}): ListQuery => ({
      ...searchQuerySchema.parse({ limit: 10, ...over }),
      ...(before === undefined ? {} : { before: before as string }),
      ...(after === undefined ? {} : { after: after as string }),
    });
    const ids = async (over: Record<string, unknown> = {}) =>
      (await s.store.emails.list('pl', q(over))).map((r) => r.id);
    beforeAll(async () => {
      const at = (h: number) => `2026-11-2${h}T12:00:00.000Z`;
      await s.store.emails.acceptEmail(
        email('l1', { project_id: 'pl', created_at: at(1), tags: ['x'] }),
        to('p@x.test'),
        PLAIN,
      );
      await s.store.emails.acceptEmail(
        email('l2', { project_id: 'pl', created_at: at(3), from_email: 'Ann@x.test' }),
        to('Q@x.test'),
        PLAIN,
      );
      await s.store.emails.acceptEmail(
        email('l3', { project_id: 'pl', created_at: at(2), tags: ['x'], status: 'SENT' }),
        to('p@x.test'),
        PLAIN,
      );
    });

    it('list: the project emails newest first, without bodies', async () => {
      expect(await ids()).toEqual(['l3', 'l2', 'l1']);
      expect((await s.store.emails.list('pl', q()))[0]).not.toHaveProperty('text_body');
    });

    it('list: filtered by status, sender and recipient in any case, tag, and a date window by created_at', async () => {
      expect(await ids({ status: 'SENT' })).toEqual(['l3']);
      expect(await ids({ from_email: 'ann@X.test' })).toEqual(['l2']);
      expect(await ids({ to_email: 'q@x.TEST' })).toEqual(['l2']);
      expect(await ids({ tag: 'x' })).toEqual(['l3', 'l1']);
      expect(await ids({ from: '2026-11-22T00:00:00.000Z' })).toEqual(['l2', 'l3']);
    });

    it('list: pages before and after a cursor, newest first; an unknown cursor is an empty page', async () => {
      expect(await ids({ before: 'l3', limit: 1 })).toEqual(['l2']);
      expect(await ids({ after: 'l1', limit: 1 })).toEqual(['l2']);
      expect(await ids({ after: 'l1' })).toEqual(['l3', 'l2']);
      expect(await ids({ before: 'a1' })).toEqual([]);
    });

    describe("the dashboard's search (issue 31)", () => {
      const KEY_A = '00000000-0000-7000-8000-00000000000a';
      const KEY_B = '00000000-0000-7000-8000-00000000000b';
      const found = async (over: Record<string, unknown>) =>
        (await s.store.emails.list('ps', q(over))).map((r) => r.id);
      beforeAll(async () => {
        await s.exec(`INSERT INTO projects (id, organization_id, name, created_at) VALUES ('ps', 'o1', 'S', '${AT}')`);
        const put = (id: string, subject: string, over: Partial<NewEmail> = {}) =>
          s.store.emails.acceptEmail(email(id, { project_id: 'ps', subject, ...over }), to('a@x.test'), PLAIN);
        await put('s1', 'Your INVOICE for May', { api_key_id: KEY_A });
        await put('s2', 'École ouverte', { api_key_id: KEY_B, source: 'SMTP' });
        await put('s3', 'invoice: 50% off_now', { api_key_id: KEY_A, source: 'SMTP', tags: ['t'] });
        await put('s4', 'Welcome');
        await put('s5', 'C:\\Temp\\x_y');
      });

      it('list: by subject, a substring without regard to ASCII case; other letters as written', async () => {
        expect(await found({ subject: 'invoice' })).toEqual(['s3', 's1']);
        expect(await found({ subject: 'InVoIcE FOR' })).toEqual(['s1']);
        expect(await found({ subject: 'École' })).toEqual(['s2']);
        expect(await found({ subject: 'cole OUV' })).toEqual(['s2']);
        // Both stores fold ASCII only, whatever PostgreSQL's locale: the same answer on each.
        expect(await found({ subject: 'école' })).toEqual([]);
        // The text is a substring, not a LIKE pattern: % and _ are themselves.
        expect(await found({ subject: '50% off_' })).toEqual(['s3']);
        expect(await found({ subject: '5_%' })).toEqual([]);
        expect(await found({ subject: '\\temp\\X_' })).toEqual(['s5']);
        expect(await found({ subject: '\\\\' })).toEqual([]);
        expect(await found({ subject: 'nothing like it' })).toEqual([]);
      });

      it('list: by source and by the API key that sent it, with the other filters and cursors', async () => {
        expect(await found({ source: 'SMTP' })).toEqual(['s3', 's2']);
        expect(await found({ source: 'API' })).toEqual(['s5', 's4', 's1']);
        expect(await found({ source: 'CAMPAIGN' })).toEqual([]);
        expect(await found({ api_key_id: KEY_A })).toEqual(['s3', 's1']);
        expect(await found({ api_key_id: KEY_B, subject: 'invoice' })).toEqual([]);
        expect(await found({ api_key_id: KEY_A, source: 'API' })).toEqual(['s1']);
        expect(await found({ api_key_id: KEY_A, tag: 't', subject: 'OFF' })).toEqual(['s3']);
        expect(await found({ api_key_id: KEY_A, limit: 1 })).toEqual(['s3']);
        expect(await found({ api_key_id: KEY_A, before: 's3' })).toEqual(['s1']);
        expect(await found({ subject: 'o', after: 's1' })).toEqual(['s4', 's3', 's2']);
        expect(await found({ source: 'SMTP', from: AT, to: AT })).toEqual(['s3', 's2']);
        // Another project's emails are never found, whatever the filter.
        expect(await ids({ api_key_id: KEY_A })).toEqual([]);
      });
    });
  });

  describe('retention', () => {
    // Emails of their own, older than every other one here, walked from the start.
    const old = (d: number) => `2026-10-0${d}T00:00:00.000Z`;
    const cutoff = '2026-10-05T00:00:00.000Z';
    let first: number;
    beforeAll(async () => {
      const put = (id: string, d: number, status: NewEmail['status']) =>
        s.store.emails.acceptEmail(
          email(id, {
            project_id: 'pr',
            created_at: old(d),
            status,
            html: 'h',
            attachments: [{ filename: 'f', content_type: 'text/plain', content: Buffer.from('f'), content_id: null }],
          }),
          to('a@x.test'),
          PLAIN,
        );
      await put('o1', 1, 'DELIVERED');
      await put('o2', 2, 'QUEUED');
      await put('o3', 9, 'DELIVERED');
      first = (await seqOf('o1')) - 1;
    });

    it('dropContentBefore: drops the body and attachments of final emails before the cutoff, holds those in flight', async () => {
      const r = await s.store.emails.dropContentBefore(cutoff, { after: first, held: [], limit: 10 });
      expect(r).toEqual({ changed: 1, next: await seqOf('o2'), held: [await seqOf('o2')], done: true });
      const o1 = await s.store.emails.findById('o1');
      expect([o1!.html_body, o1!.text_body]).toEqual([null, null]);
      expect(await s.store.emails.listAttachments(o1!.seq)).toEqual([]);
      expect(await s.store.emails.listEvents(o1!.seq)).toHaveLength(1);
      expect((await s.store.emails.findById('o3'))!.html_body).toBe('h');
    });

    it('deleteBefore: deletes final emails before the cutoff with what hangs on them; a held email again once final', async () => {
      const seq1 = await seqOf('o1');
      const seq2 = await seqOf('o2');
      const r = await s.store.emails.deleteBefore(cutoff, { after: first, held: [], limit: 1 });
      expect(r).toEqual({ changed: 1, next: seq1, held: [], done: false });
      expect(await s.store.emails.findById('o1')).toBeUndefined();
      expect(await count(`SELECT count(*) AS n FROM recipients WHERE email_seq = ${seq1}`)).toBe(0);
      expect(await count(`SELECT count(*) AS n FROM email_events WHERE email_seq = ${seq1}`)).toBe(0);
      const held = await s.store.emails.deleteBefore(cutoff, { after: seq1, held: [], limit: 1 });
      expect(held).toEqual({ changed: 0, next: seq2, held: [seq2], done: false });
      await s.exec(`UPDATE emails SET status = 'DELIVERED' WHERE seq = ${seq2}`);
      const again = await s.store.emails.deleteBefore(cutoff, { after: seq2, held: [seq2], limit: 1 });
      expect(again).toEqual({ changed: 1, next: seq2, held: [], done: true });
      expect(await s.store.emails.findById('o3')).toBeDefined();
    });
  });
});
