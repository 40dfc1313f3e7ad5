import { coalesced, notOverlapping } from '../lib/periodic.ts';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { Clock, Timer } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import { WORKER_YOUNG_GENERATION_MB } from '../lib/server-flags.ts';
import { sleep } from '../lib/sleep.ts';
import { classify, decide, describeAttempt, type Decision, type RetryPolicy } from './outcome.ts';
import type { DeliveryJob, DkimKey, JobResult, WorkerSettings } from './job.ts';
import type { DeliveryRepo, DueRow, RecipientOutcome, Stamp } from './repo.ts';
import { createThrottle, type ThrottleOptions } from './throttle.ts';
import { buildJob, type BuiltJob, type HtmlTracking } from './build-job.ts';
import { createSpfEvaluator, spfFields, type SpfEvaluator } from './spf-verdict.ts';

export interface SigningKeys {
  getSigningKey(domain: string): Promise<DkimKey | undefined>;
}

export interface EngineOptions {
  worker: WorkerSettings;
  threads: number;
  /** Transactions in flight per worker thread (they mostly wait on the network). */
  perThread: number;
  leaseMs: number;
  tickMs: number;
  policy: RetryPolicy;
  throttle: ThrottleOptions;
}

export interface EngineDeps {
  repo: DeliveryRepo;
  clock: Clock;
  logger: Logger;
  keys: SigningKeys;
  /** Click and open tracking of outgoing HTML; none sends bodies as stored. */
  tracking?: HtmlTracking;
  /** The key that signs return paths (the server secret RETURN_PATH_SECRET). */
  returnPathKey: () => Promise<Buffer>;
  /** Evaluates the published SPF of a MAIL FROM for the address a message left from (spf-verdict.ts). */
  spf?: SpfEvaluator;
  /** Told of every recorded recipient outcome (/metrics). */
  observe?: (decisions: Decision[]) => void;
  /**
   * Servers sending from this store now (the fresh rows of `nodes`): on PostgreSQL each takes
   * an equal share of every destination's limit. One when absent (a single SQLite server).
   */
  liveNodes?: () => Promise<number>;
}

/** How often a node looks again at the other nodes' count and slow-downs. */
const SHARE_EVERY_MS = 2_000;
/**
 * The least time between two claim passes started by accepts: a burst of accepts claims in
 * a few passes, not one per email, while an email after a quiet spell is claimed at once.
 */
const WAKE_GAP_MS = 10;

interface Group {
  seq: number;
  domain: string;
  rows: DueRow[];
}

/** A claimed transaction: its rows are leased under one claim's token and its job is built. */
interface Claimed {
  j: BuiltJob;
  rows: DueRow[];
  lease: string;
}

/** Rows of claimed transactions, by the token of the claim that leased them. */
function byLease(list: Claimed[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const c of list) {
    const ids = out.get(c.lease) ?? [];
    ids.push(...c.rows.map((r) => r.id));
    out.set(c.lease, ids);
  }
  return out;
}

function workerFile(): string {
  return fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? './worker.ts' : './worker.js', import.meta.url));
}

function groupRows(rows: DueRow[]): Group[] {
  const groups = new Map<string, Group>();
  for (const r of rows) {
    const k = `${r.email_seq}|${r.domain}`;
    const g = groups.get(k) ?? { seq: r.email_seq, domain: r.domain, rows: [] };
    g.rows.push(r);
    groups.set(k, g);
  }
  return [...groups.values()];
}

/**
 * The delivery scheduler: claims due recipients with a lease, hands one job
 * per (email, destination) to the worker pool, and records the results; the
 * main thread stays the single writer (architecture rule 6).
 *
 * Like Postfix's active queue, claiming runs ahead of sending: claimed
 * transactions wait in memory (`ready`) for a slot of their destination, so
 * a slot that frees up starts the next transaction at once instead of after a
 * query and a commit. A destination's slots bound its SMTP transactions only.
 */
/**
 * The recipients this claim leased (a subset of the group when some were taken
 * elsewhere) and each one's own return path, in the same order.
 */
export function envelopesFor(
  j: BuiltJob,
  rows: DueRow[],
): Pick<DeliveryJob, 'recipients' | 'return_paths' | 'envelope_from'> {
  const recipients = rows.map((r) => r.address);
  const paths = j.job.return_paths;
  if (!paths) return { recipients, return_paths: null, envelope_from: j.job.envelope_from };
  const byAddress = new Map(j.group.rows.map((r, i) => [r.address, paths[i]!]));
  const mine = recipients.map((a) => byAddress.get(a)!);
  return { recipients, return_paths: mine.length > 1 ? mine : null, envelope_from: mine[0]! };
}

export function createDeliveryEngine(deps: EngineDeps, opts: EngineOptions) {
  const { repo, clock, logger } = deps;
  const evaluateSpf = deps.spf ?? createSpfEvaluator(opts.worker.dnsServers ?? undefined, clock, opts.worker.hostname);
  const throttle = createThrottle(opts.throttle);
  /** Transactions the workers run at once. */
  const capacity = opts.threads * opts.perThread;
  /** Claimed transactions, running or waiting: claims run up to one round of the workers ahead. */
  const claimLimit = 2 * capacity;
  /** Claimed and not yet recorded: waiting for a slot, or running. */
  const inflight = new Set<Claimed>();
  /** The row ids in `inflight`. A pick skips them even once their lease has run out: they are still ours. */
  const held = new Set<number>();
  const hold = (c: Claimed) => {
    inflight.add(c);
    for (const r of c.rows) held.add(r.id);
  };
  const drop = (c: Claimed) => {
    for (const r of c.rows) held.delete(r.id);
    inflight.delete(c);
  };
  /** Claimed transactions waiting for a slot, per destination, oldest first. */
  const ready = new Map<string, Claimed[]>();
  /** Transactions handed to the workers and not yet answered (at most `capacity`). */
  let running = 0;
  const throttled = new Set<string>();
  let pool: Piscina | undefined;
  let timer: Timer | undefined;
  let renewal: Timer | undefined;
  let sharing: Timer | undefined;
  /** The tick running now (`stop` waits for it: a claim in progress must land before it gives work back). */
  let ticking: Promise<void> | undefined;
  let again = false;
  let stopping = false;
  /** Claim passes started by accepts, one per WAKE_GAP_MS at most. */
  const wakes = coalesced(() => void tick(), WAKE_GAP_MS);
  /** A claim pass at once, unless `wake` started one less than WAKE_GAP_MS ago: then one when the gap ends. */
  function wake(): void {
    if (timer && !stopping) wakes.call();
  }

  function tick(): Promise<void> {
    if (ticking) {
      again = true;
      return ticking;
    }
    ticking = (async () => {
      try {
        do {
          again = false;
          await claimAndDispatch();
        } while (again && !stopping);
      } catch (e) {
        logger.error({ err: e }, 'delivery tick failed');
      } finally {
        ticking = undefined;
      }
    })();
    return ticking;
  }

  async function claimAndDispatch(): Promise<void> {
    // Waiting transactions whose destination's pause has ended start here too.
    pumpAll();
    const free = claimLimit - inflight.size;
    if (free <= 0 || stopping) return;
    const now = clock.now();
    const rows = await repo.findDue(now, free * 8);
    // Claims run at most one round of a destination's slots ahead of its transactions,
    // and none while it is paused.
    const groups: Group[] = [];
    const picked = new Map<string, number>();
    for (const g of groupRows(rows)) {
      if (groups.length === free) break;
      if (g.rows.some((r) => held.has(r.id))) continue;
      const waiting = (ready.get(g.domain)?.length ?? 0) + (picked.get(g.domain) ?? 0);
      if (!throttle.mayClaim(g.domain, now, waiting)) continue;
      picked.set(g.domain, (picked.get(g.domain) ?? 0) + 1);
      groups.push(g);
    }
    if (!groups.length) return;
    await claim(groups, now);
    pumpAll();
    if (rows.length >= free * 8 || groups.length === free) again = true;
  }

  /**
   * Extends the leases of every claim this engine still holds (waiting for a slot, or being
   * sent), every third of the lease: a lease then runs out only for a node that stopped
   * renewing it (killed, or cut off from the database), never under a slow destination or a
   * long queue. Another node would take such rows and send them again, and this node's
   * outcome would be recorded over nothing.
   */
  async function renew(): Promise<void> {
    if (inflight.size === 0) return;
    const until = clock.now() + opts.leaseMs;
    for (const [lease, ids] of byLease([...inflight])) {
      await repo
        .renew(ids, lease, until)
        .catch((err: unknown) => logger.error({ err }, 'renewing the leases of claimed deliveries failed'));
    }
  }

  /**
   * The limits held across nodes (issue 17): each destination's concurrency is shared out
   * among the live nodes, and a slow-down that any node recorded applies to all.
   */
  async function share(): Promise<void> {
    try {
      throttle.shareAmong(await deps.liveNodes!());
      for (const t of await repo.throttledNow()) throttle.adopt(t);
    } catch (err) {
      logger.error({ err }, 'reading the other nodes and their slow-downs failed');
    }
  }

  async function claim(groups: Group[], now: number): Promise<void> {
    const returnPathKey = await deps.returnPathKey();
    const jobs = await Promise.all(
      groups.map((g) =>
        repo
          .findEmail(g.seq)
          .then((email) => buildJob(email, g, deps.keys, opts.worker.hostname, returnPathKey, deps.tracking)),
      ),
    );
    const stamp = new Map<number, Stamp>(
      jobs.map((j) => [
        j.seq,
        {
          message_id: j.job.message_id,
          dkim: j.job.dkim && { d: j.job.dkim.domain, s: j.job.dkim.selector },
          spf_domain: j.job.envelope_from.slice(j.job.envelope_from.lastIndexOf('@') + 1),
          from_domain: j.job.from_email.slice(j.job.from_email.lastIndexOf('@') + 1).toLowerCase(),
        },
      ]),
    );
    const got = await repo.claim(
      groups.flatMap((g) => g.rows),
      now,
      opts.leaseMs,
      stamp,
    );
    // One claim, one token: every row it got carries the same.
    const lease = got[0]?.lease ?? '';
    const claimed = new Set(got.map((r) => r.id));
    const late: number[] = [];
    const at = clock.now();
    for (const j of jobs) {
      const rows = j.group.rows.filter((r) => claimed.has(r.id));
      if (!rows.length) continue;
      // The destination was paused (a 421) while this claim was being committed: it goes
      // straight back, as `unclaim` just gave back the rest of that destination's waiting work.
      if (throttle.paused(j.group.domain, at)) {
        late.push(...rows.map((r) => r.id));
        continue;
      }
      const c: Claimed = { j, rows, lease };
      hold(c);
      const list = ready.get(j.group.domain);
      if (list) list.push(c);
      else ready.set(j.group.domain, [c]);
    }
    if (late.length) await repo.release(late, lease);
  }

  /**
   * Starts waiting transactions while the workers have room and their
   * destinations free slots; a transaction waits here, never in the pool's
   * queue holding a slot. Destinations take turns, one transaction each per
   * round, and one that started something moves to the back: a busy
   * destination cannot keep the workers from another one.
   */
  function pumpAll(): void {
    const now = clock.now();
    for (let started = true; started && running < capacity && !stopping;) {
      started = false;
      for (const [domain, list] of [...ready]) {
        if (running >= capacity) return;
        if (!throttle.tryStart(domain, now)) continue;
        dispatch(list.shift()!);
        started = true;
        ready.delete(domain);
        if (list.length) ready.set(domain, list);
      }
    }
  }

  /**
   * Gives the destination's waiting transactions back to the queue (it was just
   * paused: they would outwait their lease). Their `sending` events stay, as for
   * work returned at shutdown; the next attempt writes its own.
   */
  function unclaim(domain: string): Promise<void> {
    const list = ready.get(domain);
    if (!list) return Promise.resolve();
    ready.delete(domain);
    for (const c of list) drop(c);
    return release(list).catch((e: unknown) =>
      logger.error({ err: e, domain }, 'returning claimed deliveries to the queue failed'),
    );
  }

  /** Gives claimed transactions' rows back to the queue, each under its claim's token. */
  async function release(list: Claimed[]): Promise<void> {
    for (const [lease, ids] of byLease(list)) await repo.release(ids, lease);
  }

  /** Runs one claimed transaction in a slot of its destination (taken by `pumpAll`). */
  function dispatch(c: Claimed): void {
    const { j, rows } = c;
    running++;
    const job: DeliveryJob = { ...j.job, ...envelopesFor(j, rows) };
    const run: Promise<JobResult> = j.failure
      ? Promise.resolve({
          email_id: job.email_id,
          destination: job.destination,
          connection: null,
          dkim_signed: false,
          results: [],
          internal_error: j.failure,
        })
      : ((pool ??= startPool()).run(job) as Promise<JobResult>);
    // The destination's slot is given back as soon as its transaction is over, not once the
    // outcome is committed: the slot bounds SMTP transactions, and the commit takes a few ms.
    let slot = true;
    const freeSlot = () => {
      if (!slot) return;
      slot = false;
      running--;
      throttle.finished(j.group.domain);
      pumpAll();
    };
    run
      .then((result) => {
        for (const w of result.warnings ?? []) logger.warn({ email_id: job.email_id, domain: job.dkim?.domain }, w);
        // record() adapts the throttle to the reply (a 421 pauses the destination) before it awaits.
        const recorded = record(j.seq, j.projectId, j.createdAt, rows, result, c.lease, job);
        freeSlot();
        if (!stopping) void tick();
        return recorded;
      })
      .catch((e: unknown) => logger.error({ err: e, email_id: job.email_id }, 'delivery attempt failed'))
      .finally(() => {
        drop(c);
        freeSlot();
        if (!stopping) void tick();
      });
  }

  async function record(
    seq: number,
    projectId: string,
    createdAt: number,
    rows: DueRow[],
    result: JobResult,
    lease: string,
    job: Pick<DeliveryJob, 'envelope_from' | 'from_email'>,
  ): Promise<void> {
    const now = clock.now();
    const outcomes: RecipientOutcome[] = rows.map((row) => {
      const attempts = row.attempts + 1;
      if (result.internal_error) {
        return {
          recipient_id: row.id,
          address: row.address,
          attempts,
          decision: { kind: 'failed', reason: result.internal_error, reply: null },
          detail: result.internal_error,
        };
      }
      const r = result.results.find((x) => x.recipient === row.address) ?? {
        recipient: row.address,
        stage: 'connect' as const,
        reply: null,
        failure: { kind: 'protocol' as const, message: 'no result for this recipient' },
      };
      return {
        recipient_id: row.id,
        address: row.address,
        attempts,
        decision: decide(r, attempts, createdAt, now, opts.policy, [job.envelope_from, job.from_email]),
        detail: describeAttempt(r, result.connection),
      };
    });
    adapt(rows[0]!.domain, result, now);
    const ip = result.connection?.local_ip;
    const spf = ip ? spfFields(await evaluateSpf(job.envelope_from, ip), job.envelope_from, job.from_email) : null;
    await repo.record(seq, projectId, result.email_id, result.connection, outcomes, now, lease, spf);
    deps.observe?.(outcomes.map((o) => o.decision));
  }

  /** 421 or 4.7.x "slow down" cuts the destination's rate; deliveries win it back. Changes are persisted. */
  function adapt(domain: string, result: JobResult, now: number): void {
    const slow = result.results.find(
      (r) => r.reply && (r.reply.code === 421 || classify(r).category === 'rate-limited'),
    );
    if (slow?.reply) {
      throttle.slowDown(domain, now);
      void unclaim(domain);
      const d = throttle.describe(domain, now);
      throttled.add(domain);
      const reason = `${slow.reply.code} ${slow.reply.enhanced ?? ''} ${slow.reply.text}`.replace(/\s+/g, ' ').trim();
      void repo.saveThrottle(domain, { concurrency: d.concurrency, paused_until: d.paused_until, reason }, now);
    } else if (result.results.some((r) => r.reply && r.reply.code < 300)) {
      throttle.succeeded(domain);
      if (throttled.has(domain) && !throttle.describe(domain, now).throttled) {
        throttled.delete(domain);
        void repo.saveThrottle(domain, null, now);
      }
    }
  }

  function startPool(): Piscina {
    return new Piscina({
      filename: workerFile(),
      workerData: opts.worker,
      maxThreads: opts.threads,
      minThreads: 1,
      concurrentTasksPerWorker: opts.perThread,
      idleTimeout: 60_000,
      // Piscina's default ('sync') parks an idle worker in Atomics.wait, which also stops its
      // event loop: pooled SMTP sessions, their RSET replies and idle timers would freeze until
      // the next task. Tasks here are I/O-bound, so workers wait on their event loop instead.
      atomics: 'disabled',
      // A worker's garbage is per-message buffers and streams; V8's default young generation
      // (tens of MB per thread) only costs memory here (docs/performance.md, bench:deliver).
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    });
  }

  return {
    throttle,
    /** Voids leases of a dead process and starts claiming. */
    async start(): Promise<void> {
      const released = await repo.releaseStaleLeases();
      if (released)
        logger.warn({ recipients: released }, 'returned deliveries leased by a stopped process to the queue');
      timer = clock.setInterval(() => void tick(), opts.tickMs);
      renewal = clock.setInterval(notOverlapping(renew), Math.max(1, Math.floor(opts.leaseMs / 3)));
      if (deps.liveNodes) {
        await share();
        sharing = clock.setInterval(notOverlapping(share), SHARE_EVERY_MS);
      }
      void tick();
    },
    /** Claims now (in tests, after moving the clock). */
    poke: () => tick(),
    /**
     * Told of an accepted LIVE email, once it is committed: delivery starts now rather than at
     * the next tick. Wakes coalesce: a burst of accepts makes one claim pass per WAKE_GAP_MS,
     * and one running pass picks up what the others accepted meanwhile. Ignored until started.
     */
    wake,
    /** In-flight transactions, for tests and metrics. */
    inflightCount: () => inflight.size,
    /** Stops claiming, lets work in flight finish until the deadline, returns the rest to the queue. */
    async stop(deadlineMs = 10_000): Promise<void> {
      stopping = true;
      timer?.cancel();
      wakes.cancel();
      renewal?.cancel();
      sharing?.cancel();
      // A claim being committed lands first; then transactions that never started go back
      // at once, and those running get until the deadline.
      await ticking;
      await Promise.all([...ready.keys()].map(unclaim));
      const until = performance.now() + deadlineMs;
      while (inflight.size && performance.now() < until) await sleep(20);
      const left = [...inflight];
      if (left.length) await release(left);
      for (const c of left) drop(c);
      await pool?.destroy();
    },
  };
}

export type DeliveryEngine = ReturnType<typeof createDeliveryEngine>;
