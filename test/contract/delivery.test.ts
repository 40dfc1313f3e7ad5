// The delivery store (src/delivery/store.ts) on both stores: the claim under a lease, the
// outcomes with their events and webhook outbox rows, the throttles, the late reports.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Recipient } from '../../src/emails/store.ts';
import { iso } from '../../src/lib/clock.ts';
import type { ConnectionInfo } from '../../src/delivery/job.ts';
import { describeRule } from '../../src/delivery/classify.ts';
import { decide, type Decision } from '../../src/delivery/outcome.ts';
import type { LeasedRow, RecipientOutcome, RecipientRef, Stamp } from '../../src/delivery/store.ts';
import { newEmail } from '../postgres/email-fixture.ts';
import { collateNotByBytes } from './collation.ts';
import { AT, openStore, STORE_KINDS, type OpenedStore } from './stores.ts';

const T0 = Date.parse(AT);
const LEASE = 60_000;
const CONN: ConnectionInfo = {
  mx_host: 'mx.x.test',
  ip: '192.0.2.25',
  tls: true,
  tls_version: 'TLSv1.3',
  local_ip: null,
};
const POLICY = { schedule: [600_000], maxAgeMs: 86_400_000 };

/** What the classifier decides of `code text` for `address` on its first attempt at T0. */
const decision = (address: string, code: number, text: string): Decision =>
  decide(
    { recipient: address, stage: 'rcpt', reply: { code, enhanced: null, text }, failure: null },
    1,
    T0,
    T0,
    POLICY,
  );
const bounce = (address: string): Extract<Decision, { kind: 'bounced' }> => {
  const d = decision(address, 550, '5.1.1 User unknown');
  if (d.kind !== 'bounced') throw new Error(`a dead address is a bounce, not ${d.kind}`);
  return d;
};
const outcome = (r: LeasedRow, d: Decision, detail = 'detail'): RecipientOutcome => ({
  recipient_id: r.id,
  address: r.address,
  attempts: r.attempts + 1,
  decision: d,
  detail,
  delay_notified: r.delay_notified,
  waited_ms: 0,
});
const delivered = (r: LeasedRow) => outcome(r, decision(r.address, 250, '2.0.0 ok'), '250 ok');
const stampOf = (seq: number): Map<number, Stamp> =>
  new Map([
    [
      seq,
      { message_id: `m${seq}@x.test`, dkim: { d: 'x.test', s: 'sel' }, spf_domain: 'b.x.test', from_domain: 'x.test' },
    ],
  ]);

describe.each(STORE_KINDS)('DeliveryStore on %s', (kind) => {
  let s: OpenedStore;
  beforeAll(async () => {
    s = await openStore(kind);
    // A webhook on every event: each event's outbox row shows what the event's transaction wrote.
    await s.exec(`INSERT INTO webhooks (id, project_id, url, events, secret, is_active, auto_disabled, exhausted_in_a_row,
        created_at, updated_at) VALUES ('w1', 'p1', 'https://hooks.x.test/w1', '["*"]', 's', 1, 0, 0, '${AT}', '${AT}')`);
  });
  afterAll(() => s?.close());
  const d = () => s.store.delivery;

  /** Accepts email `id` to `addresses` (due at AT); its seq. */
  const accept = async (id: string, addresses: string[], over: Parameters<typeof newEmail>[1] = {}) => {
    const recipients = addresses.map((address): Recipient => ({ address, kind: 'to' }));
    await s.store.emails.acceptEmail(newEmail(id, { to: addresses, created_at: AT, ...over }), recipients, {
      suppress: false,
      volume: null,
      idempotency: null,
    });
    return (await s.store.emails.findById(id))!.seq;
  };
  /** The email's due rows, by id (findDue promises no order within one email). */
  const dueOf = async (seq: number, now = T0) =>
    (await d().findDue(now, 1000)).filter((r) => r.email_seq === seq).sort((x, y) => x.id - y.id);
  const claimOf = async (seq: number, now = T0) => d().claim(await dueOf(seq, now), now, LEASE, stampOf(seq));
  const recipients = (seq: number) =>
    s.query<Record<string, unknown>>(
      `SELECT address, status, attempts, next_attempt_at, lease_until, mx_host, last_error FROM recipients
       WHERE email_seq = ${seq} ORDER BY id`,
    );
  const events = async (seq: number) =>
    (
      await s.query<{ type: string; data: string }>(
        `SELECT type, data FROM email_events WHERE email_seq = ${seq} AND type <> 'queued' ORDER BY seq`,
      )
    ).map((e): Record<string, unknown> => ({ type: e.type, ...(JSON.parse(e.data) as object) }));
  /** The webhook outbox rows of the email's events after its accept: type and the status each carries. */
  const outbox = (seq: number) =>
    s.query<{ event_type: string; email_status: string }>(
      `SELECT o.event_type, o.email_status FROM webhook_outbox o JOIN email_events ev ON ev.id = o.event_id
       WHERE ev.email_seq = ${seq} AND ev.type <> 'queued' ORDER BY o.seq`,
    );
  const emailOf = async (seq: number) =>
    (
      await s.query<Record<string, unknown>>(
        `SELECT status, message_id, dkim_d, dkim_selector, dkim_signing_status, spf_domain, spf_aligned,
           spf_authorized_ip FROM emails WHERE seq = ${seq}`,
      )
    )[0]!;
  const suppressed = (address: string) =>
    s.query(`SELECT email, reason FROM suppressions WHERE project_id = 'p1' AND email = '${address}'`);
  const refOf = (seq: number, id: string, r: { id: number; address: string }): RecipientRef => ({
    seq,
    projectId: 'p1',
    emailId: id,
    recipientId: r.id,
    address: r.address,
  });
  /** Email `id` to `addresses`, every recipient delivered through CONN; its seq and rows. */
  const deliveredEmail = async (id: string, addresses: string[]) => {
    const seq = await accept(id, addresses);
    const got = await claimOf(seq);
    await d().record(seq, 'p1', id, CONN, got.map(delivered), T0 + 1, got[0]!.lease);
    return { seq, rows: got };
  };

  it('findDue: due, unleased recipients, oldest due first, at most limit; writes nothing', async () => {
    const first = await accept('fd1', ['a@x.test', 'b@y.test']);
    const second = await accept('fd2', ['c@x.test']);
    await s.exec(`UPDATE recipients SET next_attempt_at = '${iso(T0 - 60_000)}' WHERE email_seq = ${second}`);
    expect(await dueOf(first, T0 - 1)).toEqual([]);
    const due = (await d().findDue(T0, 1000)).filter((r) => [first, second].includes(r.email_seq));
    // Oldest due first, then by email; the order within one email is not promised.
    expect(due.map((r) => r.email_seq)).toEqual([second, first, first]);
    const rows = due.map((r) => [r.email_seq, r.address, r.domain, r.attempts, r.last_error]);
    expect(rows.sort((x, y) => String(x[1]).localeCompare(String(y[1])))).toEqual([
      [first, 'a@x.test', 'x.test', 0, null],
      [first, 'b@y.test', 'y.test', 0, null],
      [second, 'c@x.test', 'x.test', 0, null],
    ]);
    expect(await d().findDue(T0, 1)).toHaveLength(1);
    expect((await recipients(first)).map((r) => [r.status, r.attempts, r.lease_until])).toEqual([
      ['QUEUED', 0, null],
      ['QUEUED', 0, null],
    ]);
  });

  it('findEmails: each email with its bodies and its attachments in order, in the order asked', async () => {
    const attachments = [
      { filename: 'b.txt', content_type: 'text/plain', content: Buffer.from('B'), content_id: null },
      { filename: 'a.txt', content_type: 'text/plain', content: Buffer.from('A'), content_id: 'cid-a' },
    ];
    const seq = await accept('fe1', ['a@x.test'], { html: '<p>h</p>', text: 't', attachments });
    const other = await accept('fe2', ['b@x.test'], { html: null, text: 'plain' });
    const third = await accept('fe3', ['c@x.test'], { attachments: [attachments[1]!] });
    const [e, o, again, t] = await d().findEmails([seq, other, seq, third]);
    expect(e!.seq).toBe(seq);
    expect(e!.row).toMatchObject({ id: 'fe1', from_email: 'news@example.com', html_body: '<p>h</p>', text_body: 't' });
    expect(e!.attachments).toEqual(attachments);
    expect(o!.seq).toBe(other);
    expect(o!.row).toMatchObject({ id: 'fe2', html_body: null, text_body: 'plain' });
    expect(o!.attachments).toEqual([]);
    expect(again).toEqual(e);
    expect(t!.row).toMatchObject({ id: 'fe3' });
    expect(t!.attachments).toEqual([attachments[1]]);
    expect(Object.keys(e!.row)).not.toContain('has_attachments');
  });

  it('claim: leases the due rows under one token, stamps the email, then writes a sending event each', async () => {
    const seq = await accept('c1', ['a@x.test', 'b@y.test']);
    const due = await dueOf(seq);
    const got = await d().claim(due, T0, LEASE, stampOf(seq));
    expect(got).toEqual(due.map((r) => ({ ...r, lease: got[0]!.lease })));
    expect(got[0]!.lease).not.toBe('');
    expect((await recipients(seq)).map((r) => [r.status, r.attempts, r.lease_until])).toEqual([
      ['SENDING', 1, iso(T0 + LEASE)],
      ['SENDING', 1, iso(T0 + LEASE)],
    ]);
    expect(await emailOf(seq)).toMatchObject({
      status: 'SENDING',
      message_id: `m${seq}@x.test`,
      dkim_d: 'x.test',
      dkim_selector: 'sel',
      dkim_signing_status: 'expected',
      spf_domain: 'b.x.test',
    });
    expect(await events(seq)).toEqual([
      { type: 'sending', recipient: 'a@x.test', attempt: 1 },
      { type: 'sending', recipient: 'b@y.test', attempt: 1 },
    ]);
    expect(await outbox(seq)).toEqual([
      { event_type: 'sending', email_status: 'SENDING' },
      { event_type: 'sending', email_status: 'SENDING' },
    ]);
  });

  it('claim: keeps a Message-ID the email has; a row another claim holds is not claimed twice while its lease holds', async () => {
    const seq = await accept('c2', ['a@x.test'], { message_id: 'given@client.test' });
    const due = await dueOf(seq);
    const [mine] = await d().claim(due, T0, LEASE, stampOf(seq));
    expect((await emailOf(seq)).message_id).toBe('given@client.test');
    expect(await dueOf(seq, T0 + LEASE - 1)).toEqual([]);
    expect(await d().claim(due, T0 + LEASE - 1, LEASE, stampOf(seq))).toEqual([]);
    expect(await recipients(seq)).toMatchObject([{ attempts: 1, lease_until: iso(T0 + LEASE) }]);
    expect(await events(seq)).toHaveLength(1);
    expect(mine!.lease).not.toBe('');
  });

  it('findDue: a row whose lease ran out and ready rows, earliest due first, within one limit', async () => {
    await s.exec(`UPDATE recipients SET next_attempt_at = NULL`);
    const leased = await accept('fx1', ['a@x.test']);
    const ready = await accept('fx2', ['b@x.test', 'c@x.test']);
    await s.exec(`UPDATE recipients SET next_attempt_at = '${iso(T0 - 2_000)}' WHERE email_seq = ${leased}`);
    await s.exec(`UPDATE recipients SET next_attempt_at = '${iso(T0 - 1_000)}' WHERE email_seq = ${ready}`);
    const [held] = await claimOf(leased);
    // While the lease holds, only the ready rows are due.
    expect((await d().findDue(T0, 10)).map((r) => r.email_seq)).toEqual([ready, ready]);
    // Once it ran out, the leased row is due again, first, as it was due first; the limit
    // counts it with the ready ones.
    const later = T0 + LEASE;
    expect((await d().findDue(later, 2)).map((r) => [r.email_seq, r.attempts])).toEqual([
      [leased, 1],
      [ready, 0],
    ]);
    expect((await d().findDue(later, 10)).map((r) => r.id)).toContain(held!.id);
  });

  it('claim: a lease that ran out is claimable by another claim, under a new token', async () => {
    const seq = await accept('c3', ['a@x.test']);
    const [first] = await claimOf(seq);
    const later = T0 + LEASE;
    const due = await dueOf(seq, later);
    expect(due.map((r) => [r.id, r.attempts])).toEqual([[first!.id, 1]]);
    const [second] = await d().claim(due, later, LEASE, stampOf(seq));
    expect(second!.lease).not.toBe(first!.lease);
    expect(await recipients(seq)).toMatchObject([{ status: 'SENDING', attempts: 2, lease_until: iso(later + LEASE) }]);
    expect((await events(seq)).map((e) => e.attempt)).toEqual([1, 2]);
  });

  it('record: a delivery writes the recipient, the email, SPF, then its events and outbox rows with the new status', async () => {
    const seq = await accept('r1', ['a@x.test']);
    const [row] = await claimOf(seq);
    const spf = { spf_aligned: true, spf_authorized_ip: true };
    expect(await d().record(seq, 'p1', 'r1', CONN, [delivered(row!)], T0 + 5, row!.lease, spf)).toBe(1);
    expect(await recipients(seq)).toEqual([
      {
        address: 'a@x.test',
        status: 'DELIVERED',
        attempts: 1,
        next_attempt_at: null,
        lease_until: null,
        mx_host: 'mx.x.test',
        last_error: '250 ok',
      },
    ]);
    expect(await emailOf(seq)).toMatchObject({ status: 'DELIVERED', spf_aligned: 1, spf_authorized_ip: 1 });
    expect((await events(seq)).map((e) => e.type)).toEqual(['sending', 'smtp_connected', 'sent', 'delivered']);
    expect(await outbox(seq)).toEqual([
      { event_type: 'sending', email_status: 'SENDING' },
      { event_type: 'sent', email_status: 'DELIVERED' },
      { event_type: 'delivered', email_status: 'DELIVERED' },
    ]);
  });

  it('record: a hard bounce suppresses the address, and its event tells the status it left (BOUNCED)', async () => {
    const seq = await accept('r2', ['Dead@X.test']);
    const [row] = await claimOf(seq);
    expect(await d().record(seq, 'p1', 'r2', null, [outcome(row!, bounce(row!.address))], T0 + 5, row!.lease)).toBe(1);
    expect(await recipients(seq)).toMatchObject([{ status: 'BOUNCED', next_attempt_at: null, lease_until: null }]);
    expect(await suppressed('dead@x.test')).toEqual([{ email: 'dead@x.test', reason: 'HARD_BOUNCE' }]);
    expect(await outbox(seq)).toEqual([
      { event_type: 'sending', email_status: 'SENDING' },
      { event_type: 'bounced', email_status: 'BOUNCED' },
    ]);
  });

  it('record: a recipient suppressed since acceptance is CANCELED; the email is what the others made it, CANCELED when none is left', async () => {
    const seq = await accept('rs1', ['gone@x.test', 'ok@x.test']);
    const [gone, ok] = await claimOf(seq);
    const dropped: Decision = { kind: 'suppressed', suppression_reason: 'UNSUBSCRIBE', since: AT, reply: null };
    expect(await d().record(seq, 'p1', 'rs1', null, [outcome(gone!, dropped, 'not sent')], T0 + 5, gone!.lease)).toBe(
      1,
    );
    expect((await emailOf(seq)).status).toBe('SENDING');
    expect(await d().record(seq, 'p1', 'rs1', CONN, [delivered(ok!)], T0 + 6, ok!.lease)).toBe(1);
    expect(await recipients(seq)).toMatchObject([
      { status: 'CANCELED', next_attempt_at: null, lease_until: null, last_error: 'not sent' },
      { status: 'DELIVERED' },
    ]);
    expect((await emailOf(seq)).status).toBe('DELIVERED');
    expect((await events(seq)).filter((e) => e.type === 'canceled')).toEqual([
      {
        type: 'canceled',
        recipient: 'gone@x.test',
        reason: 'suppressed',
        suppression_reason: 'UNSUBSCRIBE',
        suppressed_at: AT,
      },
    ]);
    const alone = await accept('rs2', ['gone@x.test']);
    const [row] = await claimOf(alone);
    await d().record(alone, 'p1', 'rs2', null, [outcome(row!, dropped)], T0 + 5, row!.lease);
    expect((await emailOf(alone)).status).toBe('CANCELED');
    expect((await outbox(alone)).at(-1)).toEqual({ event_type: 'canceled', email_status: 'CANCELED' });
  });

  it('record: a retry is due again at its time, unleased, and its next claim says why it waited', async () => {
    const seq = await accept('r3', ['grey@x.test']);
    const [row] = await claimOf(seq);
    const retry = decision(row!.address, 451, '4.7.1 Greylisted, try again later');
    if (retry.kind !== 'retry') throw new Error(`a greylisting is a retry, not ${retry.kind}`);
    expect(await d().record(seq, 'p1', 'r3', null, [outcome(row!, retry, '451 greylisted')], T0, row!.lease)).toBe(1);
    expect(await recipients(seq)).toMatchObject([
      { status: 'QUEUED', next_attempt_at: iso(retry.at), lease_until: null, last_error: '451 greylisted' },
    ]);
    expect(await dueOf(seq, retry.at - 1)).toEqual([]);
    const [again] = await claimOf(seq, retry.at);
    expect(again).toMatchObject({ attempts: 1, last_error: '451 greylisted' });
    expect((await events(seq)).at(-1)).toEqual({
      type: 'sending',
      recipient: 'grey@x.test',
      attempt: 2,
      previous_attempt: '451 greylisted',
    });
  });

  it('record: an outcome whose lease ran out and was retaken writes nothing', async () => {
    const seq = await accept('r4', ['a@x.test']);
    const [stale] = await claimOf(seq);
    const [fresh] = await claimOf(seq, T0 + LEASE);
    const before = { rows: await recipients(seq), events: await events(seq), email: await emailOf(seq) };
    const spf = { spf_aligned: true, spf_authorized_ip: true };
    expect(await d().record(seq, 'p1', 'r4', CONN, [delivered(stale!)], T0 + LEASE + 1, stale!.lease, spf)).toBe(0);
    expect({ rows: await recipients(seq), events: await events(seq), email: await emailOf(seq) }).toEqual(before);
    expect(await d().record(seq, 'p1', 'r4', CONN, [delivered(fresh!)], T0 + LEASE + 2, fresh!.lease)).toBe(1);
  });

  it("record: an outcome about another email's recipient writes nothing, even under the same claim", async () => {
    const one = await accept('r5', ['a@x.test']);
    const other = await accept('r6', ['b@x.test']);
    const due = [...(await dueOf(one)), ...(await dueOf(other))];
    const [mine, theirs] = await d().claim(due, T0, LEASE, new Map([...stampOf(one), ...stampOf(other)]));
    expect(mine!.lease).toBe(theirs!.lease);
    const before = { rows: await recipients(other), events: await events(one), email: await emailOf(one) };
    expect(await d().record(one, 'p1', 'r5', CONN, [delivered(theirs!)], T0 + 1, theirs!.lease)).toBe(0);
    expect({ rows: await recipients(other), events: await events(one), email: await emailOf(one) }).toEqual(before);
  });

  it('renew: moves the lease of the rows this claim holds, and of no other claim', async () => {
    const seq = await accept('n1', ['a@x.test', 'b@x.test']);
    const [a, b] = await claimOf(seq);
    await d().renew([a!.id, b!.id], 'another-claim', T0 + 5 * LEASE);
    expect((await recipients(seq)).map((r) => r.lease_until)).toEqual([iso(T0 + LEASE), iso(T0 + LEASE)]);
    await d().renew([a!.id], a!.lease, T0 + 2 * LEASE);
    expect((await recipients(seq)).map((r) => r.lease_until)).toEqual([iso(T0 + 2 * LEASE), iso(T0 + LEASE)]);
    expect((await dueOf(seq, T0 + LEASE)).map((r) => r.address)).toEqual(['b@x.test']);
  });

  it("release: puts this claim's rows back, due as before, the attempt not counted; its events stay", async () => {
    const seq = await accept('l1', ['a@x.test']);
    const [row] = await claimOf(seq);
    await d().release([row!.id], 'another-claim');
    expect(await recipients(seq)).toMatchObject([{ status: 'SENDING', attempts: 1 }]);
    await d().release([row!.id], row!.lease);
    expect(await recipients(seq)).toMatchObject([
      { status: 'QUEUED', attempts: 0, lease_until: null, next_attempt_at: AT },
    ]);
    expect(await dueOf(seq)).toHaveLength(1);
    expect((await events(seq)).map((e) => e.type)).toEqual(['sending']);
    expect(await d().record(seq, 'p1', 'l1', CONN, [delivered(row!)], T0, row!.lease)).toBe(0);
  });

  it('queueStats: recipients waiting or being tried, and the oldest email among them', async () => {
    const before = await d().queueStats();
    const seq = await accept('q1', ['a@x.test', 'b@x.test'], { created_at: iso(T0 - 3_600_000) });
    expect(await d().queueStats()).toEqual({ recipients: before.recipients + 2, oldest: iso(T0 - 3_600_000) });
    const got = await claimOf(seq);
    expect((await d().queueStats()).recipients).toBe(before.recipients + 2);
    await d().record(seq, 'p1', 'q1', CONN, [delivered(got[0]!)], T0, got[0]!.lease);
    expect(await d().queueStats()).toEqual({ recipients: before.recipients + 1, oldest: iso(T0 - 3_600_000) });
  });

  it('saveThrottle and throttledNow: one row per slowed destination, in byte order, gone once it recovers', async () => {
    await collateNotByBytes(s, kind, 'destination_throttles', 'domain');
    const state = (concurrency: number) => ({ concurrency, paused_until: null, reason: '421 slow down' });
    for (const domain of ['ab.test', 'a.test', 'a-b.test', 'B.test']) await d().saveThrottle(domain, state(2), T0);
    await d().saveThrottle('a.test', { concurrency: 1, paused_until: iso(T0 + LEASE), reason: '421 busy' }, T0 + 1);
    await d().saveThrottle('ab.test', null, T0 + 2);
    expect(await d().throttledNow()).toEqual([
      { domain: 'B.test', concurrency: 2, paused_until: null, updated_at: AT },
      { domain: 'a-b.test', concurrency: 2, paused_until: null, updated_at: AT },
      { domain: 'a.test', concurrency: 1, paused_until: iso(T0 + LEASE), updated_at: iso(T0 + 1) },
    ]);
    for (const domain of ['a.test', 'a-b.test', 'B.test']) await d().saveThrottle(domain, null, T0 + 3);
    expect(await d().throttledNow()).toEqual([]);
  });

  it('saveStsPolicy and stsPolicies: one row per domain, replaced by a new fetch, only the unexpired, in byte order', async () => {
    await collateNotByBytes(s, kind, 'mta_sts_policies', 'domain');
    const policy = (domain: string, id: string, expires: number) => ({
      domain,
      policy_id: id,
      mode: 'enforce' as const,
      mx: ['mx1.' + domain.toLowerCase(), '*.mail.' + domain.toLowerCase()],
      max_age: 86400,
      fetched_at: AT,
      expires_at: iso(expires),
    });
    for (const domain of ['ab.test', 'a.test', 'B.test']) await d().saveStsPolicy(policy(domain, 'v1', T0 + 1000));
    await d().saveStsPolicy({ ...policy('a.test', 'v2', T0 + 5000), mode: 'testing', mx: ['mx.a.test'] });
    await d().saveStsPolicy(policy('old.test', 'v1', T0 - 1));
    expect(await d().stsPolicies(T0)).toEqual([
      policy('B.test', 'v1', T0 + 1000),
      { ...policy('a.test', 'v2', T0 + 5000), mode: 'testing', mx: ['mx.a.test'] },
      policy('ab.test', 'v1', T0 + 1000),
    ]);
    expect((await d().stsPolicies(T0 + 1000)).map((p) => p.domain)).toEqual(['a.test']);
  });

  it("explain: each recipient's place in the queue with its destination's throttle; empty for no email", async () => {
    await accept('x1', ['a@slow.test', 'b@x.test']);
    await d().saveThrottle('slow.test', { concurrency: 1, paused_until: null, reason: '421 slow' }, T0);
    expect(await d().explain('x1')).toEqual([
      {
        address: 'a@slow.test',
        kind: 'to',
        status: 'QUEUED',
        attempts: 0,
        next_attempt_at: AT,
        last_attempt_at: null,
        last_error: null,
        domain: 'slow.test',
        mx_host: null,
        smtp_code: null,
        smtp_enhanced: null,
        smtp_text: null,
        bounce_type: null,
        bounce_category: null,
        bounce_rule: null,
        sent_at: null,
        delivered_at: null,
        throttle_concurrency: 1,
        throttle_paused_until: null,
        throttle_reason: '421 slow',
        sts_mode: null,
        sts_policy_id: null,
        sts_expires_at: null,
      },
      expect.objectContaining({ address: 'b@x.test', domain: 'x.test', throttle_concurrency: null }),
    ]);
    // The destination's MTA-STS policy as last fetched.
    await d().saveStsPolicy({
      domain: 'slow.test',
      policy_id: 'p7',
      mode: 'enforce',
      mx: ['mx.slow.test'],
      max_age: 60,
      fetched_at: AT,
      expires_at: iso(T0 + 60_000),
    });
    expect((await d().explain('x1'))[0]).toMatchObject({
      sts_mode: 'enforce',
      sts_policy_id: 'p7',
      sts_expires_at: iso(T0 + 60_000),
    });
    await d().saveThrottle('slow.test', null, T0);
    expect(await d().explain('missing')).toEqual([]);
  });

  it('explain: a recipient after its attempt, with the reply that decided it, the MX host and the rule', async () => {
    const seq = await accept('x2', ['gone@x.test', 'ok@x.test']);
    const [gone, ok] = (await claimOf(seq)) as [LeasedRow, LeasedRow];
    const at = T0 + 5;
    await d().record(
      seq,
      'p1',
      'x2',
      CONN,
      [outcome(gone, bounce(gone.address), '550 User unknown'), delivered(ok)],
      at,
      gone.lease,
    );
    const [q1, q2] = await d().explain('x2');
    expect(q1).toEqual({
      address: 'gone@x.test',
      kind: 'to',
      status: 'BOUNCED',
      attempts: 1,
      next_attempt_at: null,
      // The claim's time: an attempt starts when it is claimed.
      last_attempt_at: AT,
      last_error: '550 User unknown',
      domain: 'x.test',
      mx_host: 'mx.x.test',
      smtp_code: 550,
      smtp_enhanced: null,
      smtp_text: '5.1.1 User unknown',
      bounce_type: 'hard',
      bounce_category: bounce(gone.address).category,
      bounce_rule: describeRule(bounce(gone.address).rule),
      sent_at: null,
      delivered_at: null,
      throttle_concurrency: null,
      throttle_paused_until: null,
      throttle_reason: null,
      sts_mode: null,
      sts_policy_id: null,
      sts_expires_at: null,
    });
    expect(q2).toMatchObject({
      status: 'DELIVERED',
      smtp_code: 250,
      mx_host: 'mx.x.test',
      sent_at: iso(at),
      delivered_at: iso(at),
    });
  });

  it('findRecipient: the recipient of the email for an address in any case; undefined when none', async () => {
    const seq = await accept('f1', ['Ann@X.test']);
    const [row] = await dueOf(seq);
    expect(await d().findRecipient(seq, 'ANN@x.TEST')).toEqual({
      id: row!.id,
      address: 'Ann@X.test',
      status: 'QUEUED',
    });
    expect(await d().findRecipient(seq, 'bob@x.test')).toBeUndefined();
  });

  it('recordLateBounce: a delivered recipient becomes BOUNCED with its event and suppression; false, nothing written, again', async () => {
    const { seq, rows } = await deliveredEmail('lb1', ['late@x.test', 'ok@x.test']);
    const ref = refOf(seq, 'lb1', rows[0]!);
    const sentAt = (
      await s.query<{ sent_at: string }>(`SELECT sent_at FROM recipients WHERE id = ${ref.recipientId}`)
    )[0];
    expect(await d().recordLateBounce(ref, bounce(ref.address), 'dsn', T0 + 10)).toBe(true);
    expect(
      await s.query(
        `SELECT status, mx_host, sent_at, delivered_at, last_error FROM recipients WHERE id = ${ref.recipientId}`,
      ),
    ).toEqual([
      { status: 'BOUNCED', mx_host: 'mx.x.test', ...sentAt, delivered_at: null, last_error: 'dsn: 5.1.1 User unknown' },
    ]);
    expect((await emailOf(seq)).status).toBe('BOUNCED');
    expect((await events(seq)).at(-1)).toMatchObject({ type: 'bounced', recipient: 'late@x.test', source: 'dsn' });
    expect((await outbox(seq)).at(-1)).toEqual({ event_type: 'bounced', email_status: 'BOUNCED' });
    expect(await suppressed('late@x.test')).toEqual([{ email: 'late@x.test', reason: 'HARD_BOUNCE' }]);
    const written = (await events(seq)).length;
    expect(await d().recordLateBounce(ref, bounce(ref.address), 'dsn', T0 + 11)).toBe(false);
    expect(await events(seq)).toHaveLength(written);
  });

  it('recordComplaint: a delivered recipient becomes COMPLAINED with its event and suppression; false otherwise', async () => {
    const { seq, rows } = await deliveredEmail('cp1', ['spam@x.test']);
    const ref = refOf(seq, 'cp1', rows[0]!);
    expect(await d().recordComplaint(ref, 'abuse', 'arf', T0 + 10)).toBe(true);
    expect(await recipients(seq)).toMatchObject([{ status: 'COMPLAINED' }]);
    expect((await emailOf(seq)).status).toBe('COMPLAINED');
    expect((await events(seq)).at(-1)).toEqual({
      type: 'complained',
      recipient: 'spam@x.test',
      feedback_type: 'abuse',
      source: 'arf',
    });
    expect((await outbox(seq)).at(-1)).toEqual({ event_type: 'complained', email_status: 'COMPLAINED' });
    expect(await suppressed('spam@x.test')).toEqual([{ email: 'spam@x.test', reason: 'COMPLAINT' }]);
    const written = (await events(seq)).length;
    expect(await d().recordComplaint(ref, 'abuse', 'arf', T0 + 11)).toBe(false);
    expect(await events(seq)).toHaveLength(written);
  });

  // Last: on SQLite it voids every lease in the store.
  it('releaseStaleLeases: SQLite voids the leases a dead process left; PostgreSQL voids none (a live node may hold them)', async () => {
    const seq = await accept('sl1', ['a@x.test']);
    await claimOf(seq);
    const voided = await d().releaseStaleLeases();
    if (kind === 'sqlite') {
      expect(voided).toBeGreaterThanOrEqual(1);
      expect(await recipients(seq)).toMatchObject([{ lease_until: null }]);
      expect(await dueOf(seq)).toHaveLength(1);
    } else {
      expect(voided).toBe(0);
      expect(await recipients(seq)).toMatchObject([{ lease_until: iso(T0 + LEASE) }]);
      expect(await dueOf(seq)).toEqual([]);
    }
  });
});
