import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { WORKER_YOUNG_GENERATION_MB } from '../lib/server-flags.ts';
import type { DeliveryJob, JobResult, WorkerSettings } from './job.ts';
import type { DueRow } from './repo.ts';
import type { BuiltJob } from './build-job.ts';
import { record } from './engine-record.ts';
import { drop, type Claimed, type EngineState } from './engine-state.ts';

/**
 * The recipients this claim leased (a subset of the group when some were taken
 * elsewhere) and each one's own return path, in the same order.
 */
export function envelopesFor(
  j: BuiltJob,
  rows: DueRow[],
): Pick<DeliveryJob, 'recipients' | 'return_paths' | 'envelope_from' | 'recipient_headers'> {
  const recipients = rows.map((r) => r.address);
  const own = j.job.recipient_headers;
  const headersOf = new Map(own ? j.group.rows.map((r, i) => [r.address, own[i]!]) : []);
  const recipient_headers = own ? recipients.map((a) => headersOf.get(a)!) : null;
  const paths = j.job.return_paths;
  if (!paths) return { recipients, return_paths: null, envelope_from: j.job.envelope_from, recipient_headers };
  const byAddress = new Map(j.group.rows.map((r, i) => [r.address, paths[i]!]));
  const mine = recipients.map((a) => byAddress.get(a)!);
  return { recipients, return_paths: mine.length > 1 ? mine : null, envelope_from: mine[0]!, recipient_headers };
}

/**
 * Starts waiting transactions while the workers have room and their
 * destinations free slots; a transaction waits here, never in the pool's
 * queue holding a slot. Destinations take turns, one transaction each per
 * round, and one that started something moves to the back: a busy
 * destination cannot keep the workers from another one. `next` is the
 * claim pass a finished transaction asks for.
 */
export function pumpAll(s: EngineState, next: () => void): void {
  const now = s.deps.clock.now();
  for (let started = true; started && s.running < s.capacity && !s.stopping;) {
    started = false;
    for (const [domain, list] of [...s.ready]) {
      if (s.running >= s.capacity) return;
      if (!s.throttle.tryStart(domain, now)) continue;
      dispatch(s, list.shift()!, next);
      started = true;
      s.ready.delete(domain);
      if (list.length) s.ready.set(domain, list);
    }
  }
}

/** Runs one claimed transaction in a slot of its destination (taken by `pumpAll`). */
function dispatch(s: EngineState, c: Claimed, next: () => void): void {
  const { logger } = s.deps;
  s.running++;
  const job: DeliveryJob = { ...c.j.job, ...envelopesFor(c.j, c.rows) };
  // The destination's slot is given back as soon as its transaction is over, not once the
  // outcome is committed: the slot bounds SMTP transactions, and the commit takes a few ms.
  let slot = true;
  const freeSlot = () => {
    if (!slot) return;
    slot = false;
    s.running--;
    s.throttle.finished(c.j.group.domain);
    pumpAll(s, next);
  };
  run(s, c.j, job)
    .then((result) => {
      for (const w of result.warnings ?? []) logger.warn({ email_id: job.email_id, domain: job.dkim?.domain }, w);
      // record() adapts the throttle to the reply (a 421 pauses the destination) before it awaits.
      const recorded = record(s, c, result, job);
      freeSlot();
      if (!s.stopping) next();
      return recorded;
    })
    .catch((e: unknown) => logger.error({ err: e, email_id: job.email_id }, 'delivery attempt failed'))
    .finally(() => {
      drop(s, c);
      freeSlot();
      if (!s.stopping) next();
    });
}

/** The transaction's result: from a worker, or at once when its job could not be built. */
function run(s: EngineState, j: BuiltJob, job: DeliveryJob): Promise<JobResult> {
  if (j.failure) {
    return Promise.resolve({
      email_id: job.email_id,
      destination: job.destination,
      connection: null,
      dkim_signed: false,
      results: [],
      internal_error: j.failure,
    });
  }
  const pool = (s.pool ??= startPool(s.opts.worker, s.opts.threads, s.opts.perThread));
  const { stsPolicy, daneOn, clock } = s.deps;
  if (!stsPolicy && !daneOn) return pool.run(job) as Promise<JobResult>;
  return Promise.all([stsPolicy?.(job.destination) ?? null, daneOn?.() ?? false]).then(
    ([sts, dane]) => pool.run({ ...job, sts, dane: dane ? { at: clock.now() } : null }) as Promise<JobResult>,
  );
}

function workerFile(): string {
  return fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? './worker.ts' : './worker.js', import.meta.url));
}

function startPool(worker: WorkerSettings, threads: number, perThread: number): Piscina {
  return new Piscina({
    filename: workerFile(),
    workerData: worker,
    maxThreads: threads,
    minThreads: 1,
    concurrentTasksPerWorker: perThread,
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
