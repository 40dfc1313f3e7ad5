// The delivery store (src/delivery/store.ts) on both stores: the queue, the claim under a lease,
// and the outcomes with their events and webhook outbox rows. The queue's stats and explanations,
// the throttles, MTA-STS policies and late reports: delivery-queue.test.ts.
import { beforeAll, describe, expect, it } from 'vitest';
import { iso } from '../../src/lib/clock.ts';
import type { Decision } from '../../src/delivery/outcome.ts';
import { bounce, CONN, decision, delivered, deliveryStore, LEASE, outcome, stampOf, T0 } from './delivery-helpers.ts';
import { AT, STORE_KINDS, type OpenedStore } from './stores.ts';

describe.each(STORE_KINDS)('DeliveryStore on %s', (kind) => {
  const t = deliveryStore(kind);
  const { d, accept, dueOf, claimOf, recipients, events, outbox, emailOf, suppressed } = t;
  let s: OpenedStore;
  beforeAll(() => {
    s = t.store();
  });

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
});
