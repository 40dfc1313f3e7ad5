// The scheduler's bookkeeping around claims that run ahead of the slots, with
// the database and the worker pool replaced by in-memory stand-ins so that a
// claim can be held mid-commit and each transaction answered at will. The same
// behaviour end to end, with SQLite and a real SMTP peer: test/delivery-modes.test.ts.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../lib/clock.ts';
import { silentLogger } from '../lib/logger.ts';
import { createDeliveryEngine, envelopesFor } from './engine.ts';
import type { DeliveryJob, JobResult } from './job.ts';
import type { DueRow } from './repo.ts';

interface Running {
  job: DeliveryJob;
  answer: (r: JobResult) => void;
}
const pool = vi.hoisted(() => ({ running: [] as Running[] }));
vi.mock('piscina', () => ({
  Piscina: class {
    run(job: DeliveryJob) {
      return new Promise((answer) => pool.running.push({ job, answer }));
    }
    async destroy() {}
  },
}));

/** Lets every promise and immediate settle. */
const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

/** A recipient row as the queue holds it: what a pick reads, and its schedule, lease and status. */
interface Row extends DueRow {
  next: number | null;
  lease: number | null;
  /** The token of the claim that holds it. */
  token?: string;
  status: string;
}

/** The queue's rows in memory, with the repo operations the engine uses. A claim can be held open. */
function memoryQueue(clock: FakeClock) {
  const rows = new Map<number, Row>();
  let gate: { promise: Promise<void>; open: () => void } | undefined;
  let claims = 0;
  const repo = {
    findDue: (now: number, limit: number) =>
      Promise.resolve(
        [...rows.values()]
          .filter((r) => r.next !== null && r.next <= now && (r.lease === null || r.lease <= now))
          .sort((a, b) => a.next! - b.next! || a.email_seq - b.email_seq)
          .slice(0, limit)
          .map(({ id, email_seq, address, domain, attempts, last_error }) => ({
            id,
            email_seq,
            address,
            domain,
            attempts,
            last_error,
          })),
      ),
    findEmails: (seqs: number[]) =>
      Promise.resolve(
        seqs.map((seq) => ({
          seq,
          row: {
            id: `email-${seq}`,
            project_id: 'project',
            from_email: 'news@sender.test',
            from_name: null,
            to_emails: '[]',
            subject: 'Hello',
            text_body: 'Hi',
            html_body: null,
            headers: null,
            created_at: new Date(clock.now()).toISOString(),
          },
          attachments: [],
        })),
      ),
    async claim<T extends { id: number }>(due: T[], now: number, leaseMs: number) {
      if (gate) await gate.promise;
      const token = `claim-${++claims}`;
      return due
        .filter((d) => {
          const r = rows.get(d.id)!;
          if (r.lease !== null && r.lease > now) return false;
          Object.assign(r, { lease: now + leaseMs, token, status: 'SENDING', attempts: r.attempts + 1 });
          return true;
        })
        .map((d) => ({ ...d, lease: token }));
    },
    record: (
      _seq: number,
      _project: string,
      _email: string,
      _conn: unknown,
      outcomes: { recipient_id: number; decision: { kind: string; at?: number } }[],
    ) => {
      for (const o of outcomes) {
        const r = rows.get(o.recipient_id)!;
        const retry = o.decision.kind === 'retry';
        Object.assign(r, {
          lease: null,
          status: retry ? 'QUEUED' : o.decision.kind.toUpperCase(),
          next: retry ? (o.decision.at ?? null) : null,
        });
      }
      return Promise.resolve();
    },
    release: (ids: number[], token: string) => {
      for (const id of ids) {
        const r = rows.get(id)!;
        if (r.status === 'SENDING' && r.token === token)
          Object.assign(r, { lease: null, status: 'QUEUED', attempts: r.attempts - 1 });
      }
      return Promise.resolve();
    },
    renew: (ids: number[], token: string, until: number) => {
      for (const id of ids) {
        const r = rows.get(id)!;
        if (r.token === token) r.lease = until;
      }
      return Promise.resolve();
    },
    saveThrottle: () => Promise.resolve(),
    releaseStaleLeases: () => Promise.resolve(0),
  };
  return {
    rows,
    repo,
    add(id: number, address: string) {
      rows.set(id, {
        id,
        email_seq: id,
        address,
        domain: address.slice(address.indexOf('@') + 1),
        attempts: 0,
        last_error: null,
        delay_notified: 0,
        next: clock.now(),
        lease: null,
        status: 'QUEUED',
      });
    },
    /** Holds every claim in its commit until `open()`. */
    hold() {
      let open = () => {};
      const promise = new Promise<void>((r) => (open = r));
      gate = { promise, open: () => ((gate = undefined), open()) };
      return gate.open;
    },
  };
}

function engineOn(clock: FakeClock, q: ReturnType<typeof memoryQueue>, o: { perThread: number; concurrency: number }) {
  return createDeliveryEngine(
    {
      repo: q.repo as never,
      suppressions: { findMany: () => Promise.resolve([]) },
      clock,
      logger: silentLogger,
      keys: { getSigningKey: (d) => Promise.resolve({ domain: d, selector: 's', privateKeyPem: 'unused' }) },
      returnPathKey: () => Promise.resolve(Buffer.alloc(32)),
    },
    {
      worker: {} as never,
      threads: 1,
      perThread: o.perThread,
      leaseMs: 10 * 60_000,
      tickMs: 250,
      policy: { schedule: [60_000], maxAgeMs: 3_600_000 },
      throttle: { maxConcurrency: o.concurrency, basePauseMs: 30_000, maxPauseMs: 900_000, recoverAfter: 20 },
    },
  );
}

const answered = (job: DeliveryJob, code: number, enhanced: string, text: string): JobResult => ({
  email_id: job.email_id,
  destination: job.destination,
  connection: null,
  dkim_signed: true,
  internal_error: null,
  results: job.recipients.map((recipient) => ({
    recipient,
    stage: code < 300 ? 'data' : 'rcpt',
    reply: { code, enhanced, text },
    failure: null,
  })),
});
const accept = (r: Running) => r.answer(answered(r.job, 250, '2.0.0', 'queued'));
const slowDown = (r: Running) => r.answer(answered(r.job, 421, '4.7.0', 'Too many connections, slow down'));

afterEach(() => void (pool.running.length = 0));

/** An engine on a fresh in-memory queue, with one row queued and its transaction started. */
async function oneRunning(address: string, concurrency: number) {
  const clock = new FakeClock();
  const q = memoryQueue(clock);
  const engine = engineOn(clock, q, { perThread: 4, concurrency });
  q.add(1, address);
  await engine.poke();
  await settle();
  return { clock, q, engine };
}

describe('delivery engine: claims ahead of the slots', () => {
  it('gives back a claim that lands after its destination was paused, and starts nothing there until the pause ends', async () => {
    const { clock, q, engine } = await oneRunning('one@x.test', 1);
    expect(pool.running.map((r) => r.job.recipients)).toEqual([['one@x.test']]);
    // A second transaction is being claimed when the first one is answered 421.
    q.add(2, 'two@x.test');
    const open = q.hold();
    const claiming = engine.poke();
    await settle();
    slowDown(pool.running.shift()!);
    await settle();
    open();
    await claiming;
    await settle();
    expect(q.rows.get(2)).toMatchObject({ status: 'QUEUED', lease: null, attempts: 0 });
    expect(engine.inflightCount()).toBe(0);
    await engine.poke();
    expect(pool.running).toHaveLength(0);
    // After the pause (30 s) the second goes out; the first at its retry, a minute after its 421.
    clock.advance(31_000);
    await engine.poke();
    await settle();
    expect(pool.running.map((r) => r.job.recipients)).toEqual([['two@x.test']]);
    accept(pool.running.shift()!);
    await settle();
    clock.advance(30_000);
    await engine.poke();
    await settle();
    expect(pool.running.map((r) => r.job.recipients)).toEqual([['one@x.test']]);
  });

  it('lets a claim in progress land before it stops, then gives it back at once', async () => {
    const { q, engine } = await oneRunning('first@y.test', 5);
    expect(pool.running).toHaveLength(1);
    q.add(2, 'second@y.test');
    const open = q.hold();
    void engine.poke();
    await settle();
    const stopped = engine.stop(60_000);
    await settle();
    open();
    await settle();
    // The claimed-but-never-started one is back in the queue while the running one finishes.
    expect(q.rows.get(2)).toMatchObject({ status: 'QUEUED', lease: null, attempts: 0 });
    expect(q.rows.get(1)).toMatchObject({ status: 'SENDING' });
    accept(pool.running.shift()!);
    await stopped;
    expect(q.rows.get(1)).toMatchObject({ status: 'DELIVERED' });
    expect(pool.running).toHaveLength(0);
    expect(engine.inflightCount()).toBe(0);
  });

  it('renews the leases it holds, so a long transaction or a long wait for a slot never lets them run out', async () => {
    const clock = new FakeClock();
    const q = memoryQueue(clock);
    const engine = engineOn(clock, q, { perThread: 1, concurrency: 1 });
    // One slot: the first is sent, the second claimed and waiting for the slot.
    q.add(1, 'one@z.test');
    q.add(2, 'two@z.test');
    await engine.start();
    await settle();
    expect(pool.running.map((r) => r.job.recipients)).toEqual([['one@z.test']]);
    expect(q.rows.get(2)).toMatchObject({ status: 'SENDING' });
    // Two and a half leases (10 min each) later, both are still this engine's: no other node
    // could have taken them and sent them again.
    for (let i = 0; i < 25; i++) {
      clock.advance(60_000);
      await settle();
    }
    for (const id of [1, 2]) expect(q.rows.get(id)!.lease!).toBeGreaterThan(clock.now());
    accept(pool.running.shift()!);
    await settle();
    expect(q.rows.get(1)).toMatchObject({ status: 'DELIVERED', lease: null });
    await engine.stop(0);
  });

  it('takes destinations in turn when the workers are full, so a busy one cannot starve another', async () => {
    const clock = new FakeClock();
    const q = memoryQueue(clock);
    const engine = engineOn(clock, q, { perThread: 4, concurrency: 20 });
    // a.test's backlog is older than b.test's one email, and a.test alone could fill the workers.
    let id = 1;
    for (let i = 0; i < 3; i++) q.add(id++, `a${i}@a.test`);
    q.add(id++, 'b@b.test');
    for (let i = 3; i < 60; i++) q.add(id++, `a${i}@a.test`);
    await engine.poke();
    await settle();
    expect(pool.running).toHaveLength(4);
    const order: string[] = [];
    for (let i = 0; i < 12 && !order.includes('b.test'); i++) {
      const r = pool.running.shift()!;
      accept(r);
      await settle();
      await engine.poke();
      await settle();
      order.push(...pool.running.map((x) => x.job.destination));
    }
    expect(order).toContain('b.test');
  });
});

describe('delivery engine: wake (an accepted LIVE email)', () => {
  it('claims at once, before any tick; a burst of wakes makes a few claim passes, not one per email', async () => {
    const clock = new FakeClock();
    const q = memoryQueue(clock);
    const findDue = vi.spyOn(q.repo, 'findDue');
    const engine = engineOn(clock, q, { perThread: 4, concurrency: 4 });
    engine.wake(); // before start: nothing
    await settle();
    expect(findDue).not.toHaveBeenCalled();
    await engine.start();
    await settle();
    const atStart = findDue.mock.calls.length;
    q.add(1, 'first@dest.test');
    engine.wake();
    await settle();
    expect(pool.running.map((r) => r.job.recipients)).toEqual([['first@dest.test']]);
    expect(findDue.mock.calls.length - atStart).toBe(1);
    for (let i = 2; i <= 1001; i++) {
      q.add(i, `r${i}@d${i}.test`);
      engine.wake();
    }
    // The wakes that came during the gap after a pass make one more pass when it ends (real
    // time, a few ms): wait for it however slow the machine, then count the passes.
    await vi.waitFor(() => expect(pool.running.length).toBe(4), { timeout: 10_000 });
    await settle();
    expect(findDue.mock.calls.length - atStart).toBeLessThanOrEqual(3);
    expect(pool.running.length).toBe(4);
    await engine.stop(0);
  });
});

describe('envelopesFor', () => {
  const row = (id: number, address: string) => ({
    id,
    email_seq: 1,
    address,
    domain: 'dest.test',
    attempts: 0,
    last_error: null,
    delay_notified: 0,
  });
  const built = (paths: string[] | null) =>
    ({
      group: {
        seq: 1,
        domain: 'dest.test',
        rows: [row(1, 'a@dest.test'), row(2, 'b@dest.test'), row(3, 'c@dest.test')],
      },
      job: { envelope_from: paths?.[0] ?? 'rp-all', return_paths: paths },
    }) as unknown as Parameters<typeof envelopesFor>[0];

  it('keeps each leased recipient with its own return path when a claim got only some of the group', () => {
    const j = built(['rp-a', 'rp-b', 'rp-c']);
    expect(envelopesFor(j, [row(1, 'a@dest.test'), row(3, 'c@dest.test')])).toEqual({
      recipients: ['a@dest.test', 'c@dest.test'],
      return_paths: ['rp-a', 'rp-c'],
      envelope_from: 'rp-a',
      recipient_headers: null,
    });
    expect(envelopesFor(j, [row(2, 'b@dest.test')])).toEqual({
      recipients: ['b@dest.test'],
      return_paths: null,
      envelope_from: 'rp-b',
      recipient_headers: null,
    });
  });

  it('leaves a one-recipient group as it was built', () => {
    const j = built(null);
    expect(envelopesFor(j, [row(1, 'a@dest.test')])).toEqual({
      recipients: ['a@dest.test'],
      return_paths: null,
      envelope_from: 'rp-all',
      recipient_headers: null,
    });
  });

  it("keeps each leased recipient's own headers", () => {
    const j = built(['rp-a', 'rp-b', 'rp-c']);
    j.job.recipient_headers = [{ 'X-For': 'a' }, { 'X-For': 'b' }, { 'X-For': 'c' }];
    expect(envelopesFor(j, [row(3, 'c@dest.test'), row(1, 'a@dest.test')]).recipient_headers).toEqual([
      { 'X-For': 'c' },
      { 'X-For': 'a' },
    ]);
  });
});
