// The delivery store (src/delivery/store.ts) on both stores: the queue's stats and explanations,
// the throttles, MTA-STS policies, the late reports and the leases a dead process left. The
// claim and the outcomes: delivery.test.ts.
import { beforeAll, describe, expect, it } from 'vitest';
import { iso } from '../../src/lib/clock.ts';
import { describeRule } from '../../src/delivery/classify.ts';
import type { LeasedRow } from '../../src/delivery/store.ts';
import { collateNotByBytes } from './collation.ts';
import { bounce, CONN, delivered, deliveryStore, LEASE, outcome, T0 } from './delivery-helpers.ts';
import { AT, STORE_KINDS, type OpenedStore } from './stores.ts';

describe.each(STORE_KINDS)('DeliveryStore on %s', (kind) => {
  const t = deliveryStore(kind);
  const { d, accept, dueOf, claimOf, recipients, events, outbox, emailOf, suppressed, refOf, deliveredEmail } = t;
  let s: OpenedStore;
  beforeAll(() => {
    s = t.store();
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
