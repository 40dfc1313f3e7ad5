import type { PoolClient, QueryResult, QueryResultRow } from 'pg';
import { ioTimeout, type Timer } from '../lib/clock.ts';
import type { PgPool } from './pg.ts';
import { prepared } from './pg-prepared.ts';
import { storageFailureOf } from './errors.ts';

/** What a write's work may do: run statements inside its group's transaction. */
export interface PgTx {
  query<R extends QueryResultRow = QueryResultRow>(sql: string, params?: unknown[]): Promise<QueryResult<R>>;
  /**
   * Adds `units` to a counter row that many writes update (an organization's monthly volume),
   * written once per group instead of once per write, just before COMMIT: `write(tx, total)`
   * adds the group's total and says whether the row took it (false: a ceiling would be
   * passed). A group whose total is refused runs again item by item, where each write's
   * `write` runs at once and its answer is this call's. A row that every write updates holds
   * its lock until COMMIT; taken at the end, it is held for a moment instead of a whole group
   * (bench:commit: groups on the same row otherwise run one at a time).
   */
  addAtCommit(key: string, units: number, write: CounterWrite): Promise<boolean>;
}

/** Adds `total` to a counter row; false when it would pass a ceiling (nothing written then). */
export type CounterWrite = (tx: PgTx, total: number) => Promise<boolean>;

interface Counter {
  total: number;
  write: CounterWrite;
}

export interface PgCommitter {
  /**
   * Runs `work` inside the next group transaction and resolves once that transaction is
   * committed. An exception in `work` undoes only its own writes and rejects only its own
   * promise.
   *
   * `work` may run more than once: when another item of its group fails after writing (or
   * its statement fails: PostgreSQL then refuses the rest of the transaction), the group is
   * rolled back and run again with a savepoint per item; a deadlock runs the whole group
   * again. So it must read and write only the database.
   */
  write<T>(work: (tx: PgTx) => Promise<T>): Promise<T>;
  /**
   * As `write` for each of `works`, kept in one group and run in their order: their rows get
   * their keys (seq) in that order, as one SQLite group gives them. A batch request's emails are
   * listed and claimed in the order they were sent, not in the order parallel groups committed.
   * Each promise settles on its own, as `write`'s.
   */
  writeTogether<T>(works: ((tx: PgTx) => Promise<T>)[]): Promise<T>[];
  /** Commits whatever is queued now. */
  flush(): void;
  /** Commits what is queued, waits for the groups in flight, and refuses writes after. */
  close(): Promise<void>;
}

export interface PgCommitterOptions {
  /** How long the first queued write waits for company. */
  windowMs: number;
  /** A group this large commits at once. */
  maxBatch: number;
  /**
   * Groups in flight at once, each on its own connection (default 2, as svc runs: app-store.ts).
   * One connection runs one statement at a time, so a single group in flight would leave the
   * database idle between round trips.
   */
  parallel?: number;
  /** Times a group is run again after a deadlock or a serialization failure (default 5). */
  retries?: number;
  /** Told of each committed group: the COMMIT's seconds and its writes (/metrics). */
  onCommit?: (seconds: number, writes: number) => void;
  /** Told of each group run again after a deadlock or serialization failure. */
  onRetry?: (error: unknown) => void;
  /** Told when a write failed for lack of disk space (SQLSTATE 53100; answered `storage_full`). */
  onStorageFull?: () => void;
}

interface Pending {
  work: (tx: PgTx) => Promise<unknown>;
  /** Set on the writes of one `writeTogether`: a group never splits them. */
  together?: object | undefined;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

type Result = { ok: boolean; value: unknown };

/** SQLSTATEs after which the same transaction may succeed when run again. */
const RETRYABLE = new Set(['40P01', '40001']);
const isRetryable = (e: unknown) => RETRYABLE.has(String((e as { code?: unknown })?.code));
/** An error PostgreSQL raised (it carries a SQLSTATE): the transaction is now aborted. */
const isServerError = (e: unknown) => /^[0-9A-Z]{5}$/.test(String((e as { code?: unknown })?.code));

const WRITES = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);

/**
 * A `WITH` statement with an INSERT, UPDATE, DELETE or MERGE among its parts (the accept's
 * statement; an outcome's status with its events): PostgreSQL tags it by its main part (SELECT,
 * UPDATE) with that part's row count, so the other parts' writes do not show in the result. It
 * counts as a write whatever it returned (a `FOR UPDATE` read counts too: the item's failure
 * then costs a run with savepoints, never a wrong commit).
 */
const writesInWith = (sql: string) => /^\s*WITH\b/i.test(sql) && /\b(INSERT|UPDATE|DELETE|MERGE)\b/i.test(sql);

/** The transaction as one item sees it: it notes whether the item wrote, or broke the transaction. */
class ItemTx implements PgTx {
  wrote = false;
  aborted = false;
  /** The item's additions to counters, kept for the group's COMMIT; null: written at once. */
  readonly counters: Map<string, Counter> | null;
  private readonly client: PoolClient;
  constructor(client: PoolClient, deferCounters: boolean) {
    this.client = client;
    this.counters = deferCounters ? new Map() : null;
  }
  async addAtCommit(key: string, units: number, write: CounterWrite): Promise<boolean> {
    if (!this.counters) return write(this, units);
    const c = this.counters.get(key);
    if (c) c.total += units;
    else this.counters.set(key, { total: units, write });
    return true;
  }
  async query<R extends QueryResultRow = QueryResultRow>(sql: string, params?: unknown[]): Promise<QueryResult<R>> {
    try {
      const r = await this.client.query<R>(prepared(sql, params));
      // A DML statement that changed no row wrote nothing; any other but a plain SELECT may have,
      // and so may one with a data-modifying WITH, whatever its own rows (an UPDATE of none).
      if (writesInWith(sql) || (WRITES.has(r.command) ? (r.rowCount ?? 0) > 0 : r.command !== 'SELECT')) {
        this.wrote = true;
      }
      return r;
    } catch (e) {
      if (isServerError(e)) this.aborted = true;
      throw e;
    }
  }
}

/**
 * Group commit on PostgreSQL (architecture rule 5, issue 17 item 3): concurrent writes share
 * one transaction, each answered only after that transaction commits, so a 202 is durable
 * and costs a fraction of a commit. As the SQLite Committer (committer.ts), with what
 * PostgreSQL changes: work is async, statements fail the whole transaction, groups run on
 * several connections at once, and groups that deadlock with each other are run again.
 */
// Its timer is I/O batching, not domain time, so it always runs on the real clock.
export function createPgCommitter(pool: PgPool, opts: PgCommitterOptions): PgCommitter {
  const parallel = opts.parallel ?? 2;
  const retries = opts.retries ?? 5;
  let queue: Pending[] = [];
  let timer: Timer | undefined;
  let inFlight = 0;
  let closed = false;
  let idle: (() => void) | undefined;

  /** Each item without a savepoint; null when the group must be run again item by item. */
  async function runOptimistic(client: PoolClient, batch: Pending[]): Promise<Result[] | null> {
    const results: Result[] = [];
    const counters = new Map<string, Counter>();
    for (const p of batch) {
      const tx = new ItemTx(client, true);
      try {
        results.push({ ok: true, value: await p.work(tx) });
      } catch (e) {
        if (isRetryable(e)) throw e;
        if (tx.aborted || tx.wrote) return null;
        // A refused item's counts are dropped with it.
        results.push({ ok: false, value: e });
        continue;
      }
      for (const [key, c] of tx.counters!) {
        const sum = counters.get(key);
        if (sum) sum.total += c.total;
        else counters.set(key, { ...c });
      }
    }
    // In key order, so that two groups taking the same rows take them in the same order.
    const tx = new ItemTx(client, false);
    for (const key of [...counters.keys()].sort()) {
      const c = counters.get(key)!;
      if (!(await c.write(tx, c.total))) return null;
    }
    return results;
  }

  async function runIsolated(client: PoolClient, batch: Pending[]): Promise<Result[]> {
    const results: Result[] = [];
    for (const p of batch) {
      await client.query('SAVEPOINT item');
      try {
        results.push({ ok: true, value: await p.work(new ItemTx(client, false)) });
        await client.query('RELEASE item');
      } catch (e) {
        if (isRetryable(e)) throw e;
        await client.query('ROLLBACK TO item');
        await client.query('RELEASE item');
        results.push({ ok: false, value: e });
      }
    }
    return results;
  }

  async function runGroup(batch: Pending[]): Promise<void> {
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (e) {
      for (const p of batch) p.reject(e);
      return;
    }
    let broken: Error | undefined;
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          await client.query('BEGIN');
          let results = await runOptimistic(client, batch);
          if (!results) {
            await client.query('ROLLBACK');
            await client.query('BEGIN');
            results = await runIsolated(client, batch);
          }
          const t0 = performance.now();
          await client.query('COMMIT');
          const seconds = (performance.now() - t0) / 1000;
          // After the commit: an observer's failure must not look like a failed write.
          try {
            opts.onCommit?.(seconds, batch.length);
          } catch {
            /* metrics only */
          }
          batch.forEach((p, i) => {
            const r = results[i]!;
            if (r.ok) p.resolve(r.value);
            else p.reject(storageFailureOf(r.value, opts.onStorageFull));
          });
          return;
        } catch (e) {
          await client.query('ROLLBACK').catch((rb: Error) => (broken = rb));
          if (!broken && isRetryable(e) && attempt < retries) {
            opts.onRetry?.(e);
            // A little apart, so that the groups that deadlocked do not meet again at once.
            await new Promise<void>((r) => ioTimeout(r, Math.random() * 5 * (attempt + 1)));
            continue;
          }
          if (!isServerError(e)) broken ??= e as Error;
          const err = storageFailureOf(e, opts.onStorageFull);
          for (const p of batch) p.reject(err);
          return;
        }
      }
    } finally {
      // A connection that failed outside SQL (reset, timeout) is closed rather than reused.
      client.release(broken);
    }
  }

  function flush(): void {
    timer?.cancel();
    timer = undefined;
    while (queue.length > 0 && inFlight < parallel) {
      // Spread what is queued over the free connections: PostgreSQL flushes the WAL of
      // concurrent commits together, so small groups in parallel cost no more fsyncs than one
      // large group, and run their statements side by side instead of one after another.
      let size = Math.min(opts.maxBatch, Math.ceil(queue.length / (parallel - inFlight)));
      const last = queue[size - 1]!.together;
      while (last && queue[size]?.together === last) size++;
      const batch = queue.slice(0, size);
      queue = queue.slice(batch.length);
      inFlight++;
      void runGroup(batch).finally(() => {
        inFlight--;
        // Writes that queued while every connection was busy go now.
        if (queue.length > 0) flush();
        else if (inFlight === 0) idle?.();
      });
    }
  }

  function enqueue<T>(work: (tx: PgTx) => Promise<T>, together?: object): Promise<T> {
    if (closed) return Promise.reject(new Error('store is closed'));
    return new Promise<T>((resolve, reject) => {
      queue.push({ work, together, resolve: resolve as (v: unknown) => void, reject });
    });
  }
  function schedule(): void {
    if (queue.length >= opts.maxBatch) flush();
    else timer ??= ioTimeout(flush, opts.windowMs);
  }

  return {
    write<T>(work: (tx: PgTx) => Promise<T>): Promise<T> {
      const p = enqueue(work);
      schedule();
      return p;
    },
    writeTogether<T>(works: ((tx: PgTx) => Promise<T>)[]): Promise<T>[] {
      const together = {};
      const all = works.map((w) => enqueue(w, together));
      schedule();
      return all;
    },
    flush,
    async close() {
      flush();
      closed = true;
      while (inFlight > 0 || queue.length > 0) {
        await new Promise<void>((r) => (idle = r));
        idle = undefined;
      }
    },
  };
}
