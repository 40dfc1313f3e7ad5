// The delivery store's contract tests (delivery.test.ts, delivery-queue.test.ts): the store of
// each kind opened for a file with a webhook on every event, what the tests read of it, and the
// outcomes they record.
import { afterAll, beforeAll } from 'vitest';
import type { Recipient } from '../../src/emails/store.ts';
import type { ConnectionInfo } from '../../src/delivery/job.ts';
import { decide, type Decision } from '../../src/delivery/outcome.ts';
import type { LeasedRow, RecipientOutcome, RecipientRef, Stamp } from '../../src/delivery/store.ts';
import { newEmail } from '../postgres/email-fixture.ts';
import { AT, openStore, type OpenedStore, type StoreKind } from './stores.ts';

export const T0 = Date.parse(AT);
export const LEASE = 60_000;
export const CONN: ConnectionInfo = {
  mx_host: 'mx.x.test',
  ip: '192.0.2.25',
  tls: true,
  tls_version: 'TLSv1.3',
  local_ip: null,
};
const POLICY = { schedule: [600_000], maxAgeMs: 86_400_000 };

/** What the classifier decides of `code text` for `address` on its first attempt at T0. */
export const decision = (address: string, code: number, text: string): Decision =>
  decide(
    { recipient: address, stage: 'rcpt', reply: { code, enhanced: null, text }, failure: null },
    1,
    T0,
    T0,
    POLICY,
  );
export const bounce = (address: string): Extract<Decision, { kind: 'bounced' }> => {
  const d = decision(address, 550, '5.1.1 User unknown');
  if (d.kind !== 'bounced') throw new Error(`a dead address is a bounce, not ${d.kind}`);
  return d;
};
export const outcome = (r: LeasedRow, d: Decision, detail = 'detail'): RecipientOutcome => ({
  recipient_id: r.id,
  address: r.address,
  attempts: r.attempts + 1,
  decision: d,
  detail,
  delay_notified: r.delay_notified,
  waited_ms: 0,
});
export const delivered = (r: LeasedRow) => outcome(r, decision(r.address, 250, '2.0.0 ok'), '250 ok');
export const stampOf = (seq: number): Map<number, Stamp> =>
  new Map([
    [
      seq,
      { message_id: `m${seq}@x.test`, dkim: { d: 'x.test', s: 'sel' }, spf_domain: 'b.x.test', from_domain: 'x.test' },
    ],
  ]);

/** The delivery store of `kind` for one file's tests (opened before them, closed after), and its readers. */
export function deliveryStore(kind: StoreKind) {
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
  return {
    store: () => s,
    d,
    accept,
    dueOf,
    claimOf,
    recipients,
    events,
    outbox,
    emailOf,
    suppressed,
    refOf,
    deliveredEmail,
  };
}
