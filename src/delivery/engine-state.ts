import type { Piscina } from 'piscina';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import type { Decision, RetryPolicy } from './outcome.ts';
import type { DkimKey, JobSts, TlsOutcome, WorkerSettings } from './job.ts';
import type { DeliveryStore, DueRow } from './store.ts';
import type { SuppressionsStore } from '../suppressions/index.ts';
import { createThrottle, type Throttle, type ThrottleOptions } from './throttle.ts';
import type { BuiltJob, HtmlTracking } from './build-job.ts';
import { createSpfEvaluator, type SpfEvaluator } from './spf-verdict.ts';

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
  repo: DeliveryStore;
  /** The suppression list, read for a scheduled email's recipients as it goes out (engine-claim.ts). */
  suppressions: Pick<SuppressionsStore, 'findMany'>;
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
   * The destination's MTA-STS policy (RFC 8461), looked up on the main thread so every worker
   * shares one cache (and it outlives a restart); never throws. Absent: no policy applies.
   */
  stsPolicy?: (domain: string) => Promise<JobSts | null>;
  /** Whether DANE is on (a validating resolver answered at start); never throws. */
  daneOn?: () => Promise<boolean>;
  /** Told of every attempt's TLS outcomes, per MX host tried (TLS reporting, /metrics). */
  observeTls?: (outcomes: TlsOutcome[]) => void;
  /**
   * Servers sending from this store now (the fresh rows of `nodes`): on PostgreSQL each takes
   * an equal share of every destination's limit. One when absent (a single SQLite server).
   */
  liveNodes?: () => Promise<number>;
}

/** Due rows of one email to one destination domain: one SMTP transaction once claimed. */
export interface Group {
  seq: number;
  domain: string;
  rows: DueRow[];
}

/** A claimed transaction: its rows are leased under one claim's token and its job is built. */
export interface Claimed {
  j: BuiltJob;
  rows: DueRow[];
  lease: string;
}

/**
 * What the parts of the engine share (claim, hand-off, record): its dependencies and the
 * claimed work it holds, from the claim that leased it until its outcome is recorded or it
 * is given back. Only the main thread touches it (the single writer).
 */
export interface EngineState {
  readonly deps: EngineDeps;
  readonly opts: EngineOptions;
  readonly throttle: Throttle;
  readonly evaluateSpf: SpfEvaluator;
  /** Transactions the workers run at once. */
  readonly capacity: number;
  /** Claimed transactions, running or waiting: claims run up to one round of the workers ahead. */
  readonly claimLimit: number;
  /** Claimed and not yet recorded: waiting for a slot, or running. */
  readonly inflight: Set<Claimed>;
  /** The row ids in `inflight`. A pick skips them even once their lease has run out: they are still ours. */
  readonly held: Set<number>;
  /** Claimed transactions waiting for a slot, per destination, oldest first. */
  readonly ready: Map<string, Claimed[]>;
  /** Destinations whose slow-down is saved in the store, to clear once they recover. */
  readonly throttled: Set<string>;
  /** Transactions handed to the workers and not yet answered (at most `capacity`). */
  running: number;
  pool: Piscina | undefined;
  stopping: boolean;
}

export function createEngineState(deps: EngineDeps, opts: EngineOptions): EngineState {
  const capacity = opts.threads * opts.perThread;
  return {
    deps,
    opts,
    throttle: createThrottle(opts.throttle),
    evaluateSpf: deps.spf ?? createSpfEvaluator(opts.worker.dnsServers ?? undefined, deps.clock, opts.worker.hostname),
    capacity,
    claimLimit: 2 * capacity,
    inflight: new Set(),
    held: new Set(),
    ready: new Map(),
    throttled: new Set(),
    running: 0,
    pool: undefined,
    stopping: false,
  };
}

/** Takes a claimed transaction into the engine's keeping. */
export function hold(s: EngineState, c: Claimed): void {
  s.inflight.add(c);
  for (const r of c.rows) s.held.add(r.id);
}

/** Lets go of a claimed transaction: recorded, or given back to the queue. */
export function drop(s: EngineState, c: Claimed): void {
  for (const r of c.rows) s.held.delete(r.id);
  s.inflight.delete(c);
}

/** Rows of claimed transactions, by the token of the claim that leased them. */
export function byLease(list: Claimed[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const c of list) {
    const ids = out.get(c.lease) ?? [];
    ids.push(...c.rows.map((r) => r.id));
    out.set(c.lease, ids);
  }
  return out;
}
