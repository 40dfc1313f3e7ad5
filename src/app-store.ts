import { statSync, type fdatasync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from './lib/clock.ts';
import { iso } from './lib/clock.ts';
import { createAccountsRepo } from './accounts/repo.ts';
import type { AccountsStore } from './accounts/store.ts';
import { createPgAccountsRepo } from './accounts/repo-pg.ts';
import { createAuditRepo, createAuditWriter } from './audit/repo.ts';
import type { AuditStore } from './audit/store.ts';
import { createPgAuditRepo, createPgAuditWriter } from './audit/repo-pg.ts';
import { createServerSettings } from './config/server-settings.ts';
import { createPgServerSettings } from './config/server-settings-pg.ts';
import type { ServerSettings } from './config/server-settings.ts';
import { createDeliveryRepo } from './delivery/repo.ts';
import type { DeliveryStore } from './delivery/store.ts';
import { createPgDeliveryRepo } from './delivery/repo-pg.ts';
import { createDomainsRepo } from './domains/repo.ts';
import type { DomainsStore } from './domains/store.ts';
import { createDmarcRepo } from './inbound/dmarc-repo.ts';
import { createPgDmarcRepo } from './inbound/dmarc-repo-pg.ts';
import type { DmarcStore } from './inbound/dmarc-store.ts';
import { createPgDomainsRepo } from './domains/repo-pg.ts';
import { createEmailsRepo } from './emails/repo.ts';
import type { EmailsStore } from './emails/store.ts';
import { createPgEmailsRepo } from './emails/repo-pg.ts';
import { createIdempotencySql } from './idempotency/repo.ts';
import { createPgIdempotency } from './idempotency/repo-pg.ts';
import { createKeysRepo } from './keys/repo.ts';
import type { KeysStore } from './keys/store.ts';
import { createPgKeysRepo } from './keys/repo-pg.ts';
import { createUsageSql } from './limits/usage.ts';
import { createRateLimiter, type RateResult } from './limits/rate.ts';
import { createPgRateLimiter } from './limits/rate-pg.ts';
import { createPgFailureWindows } from './limits/failure-windows-pg.ts';
import { createFailureWindows, type FailureWindows } from './lib/failure-windows.ts';
import { createPgUsage } from './limits/usage-pg.ts';
import { createNodesRepo } from './nodes/repo.ts';
import type { NodesStore } from './nodes/store.ts';
import { createPgNodesRepo } from './nodes/repo-pg.ts';
import { createSessionsRepo } from './sessions/repo.ts';
import type { SessionsStore } from './sessions/store.ts';
import { createPgSessionsRepo } from './sessions/repo-pg.ts';
import { createStatsRepo } from './stats/repo.ts';
import type { StatsStore } from './stats/store.ts';
import { createPgStatsRepo } from './stats/repo-pg.ts';
import { createSuppressionsRepo } from './suppressions/repo.ts';
import type { SuppressionsStore } from './suppressions/store.ts';
import { createPgSuppressionsRepo } from './suppressions/repo-pg.ts';
import { createTemplatesRepo } from './templates/repo.ts';
import type { TemplatesStore } from './templates/store.ts';
import { createPgTemplatesRepo } from './templates/repo-pg.ts';
import { createTopReader } from './top/repo.ts';
import type { TopStore } from './top/store.ts';
import { createPgTopReader } from './top/repo-pg.ts';
import { createReceivingRepo } from './receiving/repo.ts';
import { createPgReceivingRepo } from './receiving/repo-pg.ts';
import type { ReceivingStore } from './receiving/store.ts';
import { createTlsrptRepo } from './tlsrpt/repo.ts';
import { createPgTlsrptRepo } from './tlsrpt/repo-pg.ts';
import type { TlsrptStore } from './tlsrpt/store.ts';
import { createTrackingRepo } from './tracking/repo.ts';
import type { TrackingStore } from './tracking/store.ts';
import { createPgTrackingRepo } from './tracking/repo-pg.ts';
import { createWebhooksRepo } from './webhooks/repo.ts';
import type { WebhooksStore } from './webhooks/store.ts';
import { createPgWebhooksRepo } from './webhooks/repo-pg.ts';
import type { Logger } from './lib/logger.ts';
import { silentLogger } from './lib/silent-logger.ts';
import { createCommitter } from './store/committer.ts';
import { createDiskGuard, createStorageFlag, type StorageState, type StorageWatch } from './store/disk.ts';
import { DATABASE_FILE } from './store/data-dir.ts';
import { openDatabase, openReadOnly, type Db } from './store/db.ts';
import { createPgJobs } from './store/jobs-pg.ts';
import type { PgPool } from './store/pg.ts';
import { createPgCommitter } from './store/pg-committer.ts';
import { createSecrets } from './store/secrets.ts';
import { createPgSecrets } from './store/secrets-pg.ts';

/**
 * Every repository of one store, behind the seam (architecture rule 4): the composition
 * root (app.ts) wires the same services over either, and never learns which runs.
 */
export interface Store {
  kind: 'sqlite' | 'postgres';
  accounts: AccountsStore;
  keys: KeysStore;
  suppressions: SuppressionsStore;
  templates: TemplatesStore;
  domains: DomainsStore;
  dmarc: DmarcStore;
  emails: EmailsStore;
  delivery: DeliveryStore;
  tracking: TrackingStore;
  tlsrpt: TlsrptStore;
  receiving: ReceivingStore;
  webhooks: WebhooksStore;
  sessions: SessionsStore;
  stats: StatsStore;
  nodes: NodesStore;
  audit: AuditStore;
  settings: {
    stored(): Promise<Partial<ServerSettings>>;
    record(s: ServerSettings, at: string): Promise<void>;
  };
  secrets: { get(name: string): Promise<Buffer> };
  /** An organization's counted recipients in a period (`YYYY-MM` or `YYYY-MM-DD`). */
  usage: { used(orgId: string, period: string): Promise<number> };
  /** Deletes Idempotency-Key records expired at `now`; returns how many. */
  purgeIdempotency(now: string): Promise<number>;
  /**
   * The per-key request rate: one SQLite server counts in its memory; PostgreSQL's nodes count
   * in the database, so that a key gets its rate once, not once per node.
   */
  rateLimiter(): { hit(key: string, limit: number): Promise<RateResult> };
  /**
   * Failures per key in windows of `windowMs` (failed logins, failed SMTP AUTH), for the counter
   * `name`: in one SQLite server's memory; in the database on PostgreSQL, for all nodes.
   */
  failureWindows(name: string, windowMs: number): FailureWindows;
  /** svc top's reader of this store, for one project or the whole server. */
  topReader(opts: { clock?: Clock; projectId?: string }): TopStore;
  /**
   * Runs `fn` unless another node runs the job `name` now (true when it ran): retention and
   * purges run on one node at a time. A single SQLite server always runs it.
   */
  runExclusive(name: string, fn: () => Promise<void>): Promise<boolean>;
  /** True when the database answers a write and writes are not failing for lack of space (/readyz). */
  ready(): Promise<boolean>;
  /** Whether writes fail for lack of space, and the data dir's free space (/readyz, /metrics). */
  storage(): StorageState;
  /** Sizes of the database file and its WAL (SQLite); the database's size on PostgreSQL. */
  sizeBytes(): Promise<{ database: number; wal: number }>;
  /** Where the data lives, for logs: the data dir, or the database URL without its password. */
  where: string;
  /** The SQLite connection, for tests that look inside; undefined on PostgreSQL. */
  sqlite: Db | undefined;
  /** Commits what is queued and closes the connections. */
  close(): Promise<void>;
}

export interface StoreOptions {
  /** The server runs WAL checkpoints in a worker; short CLI runs do not need to. */
  checkpointWorker?: boolean;
  /** Create a missing data dir and database (`svc init`, `svc serve`); other commands refuse one. */
  createDataDir?: boolean;
  /** Told of each committed group: the COMMIT's seconds (/metrics). */
  onCommit?: (seconds: number) => void;
  clock: Clock;
  /** Where the server says that the disk is full, and full no more. */
  logger?: Logger;
  /** The WAL's sync (store/wal-sync.ts): node's fdatasync, or a test's that holds one. */
  fdatasync?: typeof fdatasync;
}

/** The SQLite store of a data dir: one connection, one group-commit writer. */
export function openSqliteStore(dataDir: string, opts: StoreOptions): Store {
  const store = openDatabase(dataDir, {
    checkpointWorker: opts.checkpointWorker ?? false,
    create: opts.createDataDir ?? false,
  });
  const db = store.db;
  // The server watches the data dir's disk and keeps its reserve; a short CLI run only maps the error.
  const storage = store.truncateWal
    ? createDiskGuard({ dir: dataDir, logger: opts.logger ?? silentLogger, truncateWal: store.truncateWal })
    : createStorageFlag(opts.clock);
  const tx = createCommitter(db, {
    windowMs: 2,
    maxBatch: 500,
    onCommit: (s) => opts.onCommit?.(s),
    onStorageFull: () => storage.noteFull(),
    refusing: () => storage.refusing(),
    // The WAL is synced off the event loop (store/wal-sync.ts). If a sync fails, nothing written
    // since can be acknowledged, and the page cache may already have dropped it: the process
    // stops (SIGTERM, a clean stop that refuses every write) and SQLite recovers what is on disk.
    walSync: {
      ...(opts.fdatasync ? { fdatasync: opts.fdatasync } : {}),
      onFailure: (e) => {
        (opts.logger ?? silentLogger).fatal({ err: e }, 'syncing the database failed: stopping');
        process.kill(process.pid, 'SIGTERM');
      },
    },
  });
  const settings = createServerSettings(db, tx);
  // Every management write commits with its audit row (issue 11).
  const audit = createAuditWriter(db);
  const suppressions = createSuppressionsRepo(db, tx, audit);
  const idempotency = createIdempotencySql(db);
  const usage = createUsageSql(db);
  const webhooks = createWebhooksRepo(db, tx, audit);
  const file = join(dataDir, DATABASE_FILE);
  const size = (f: string) => {
    try {
      return statSync(f).size;
    } catch {
      return 0;
    }
  };
  return {
    kind: 'sqlite',
    accounts: createAccountsRepo(db, tx, audit),
    keys: createKeysRepo(db, tx, audit),
    suppressions,
    templates: createTemplatesRepo(db, tx, audit),
    domains: createDomainsRepo(db, tx, audit),
    dmarc: createDmarcRepo(db, tx),
    emails: createEmailsRepo(db, tx, { suppressions, usage, idempotency, audit }),
    delivery: createDeliveryRepo(db, tx, {
      suppress: (projectId, email, emailId, at, reason) => suppressions.addSync(projectId, email, reason, at, emailId),
    }),
    tracking: createTrackingRepo(db, tx),
    tlsrpt: createTlsrptRepo(db, tx),
    receiving: createReceivingRepo(db, tx, audit),
    webhooks,
    sessions: createSessionsRepo(db, tx),
    stats: createStatsRepo(db),
    nodes: createNodesRepo(db, tx),
    audit: createAuditRepo(db),
    settings: { stored: () => Promise.resolve(settings.stored()), record: settings.record },
    secrets: createSecrets(db, tx, () => iso(opts.clock.now())),
    usage: { used: (orgId, period) => Promise.resolve(usage.used(orgId, period)) },
    purgeIdempotency: (now) => tx.write(() => idempotency.purgeExpired(now)),
    topReader: (o) => createTopReader(db, o),
    failureWindows: (_name, windowMs) => createFailureWindows(opts.clock, windowMs),
    rateLimiter: () => {
      const memory = createRateLimiter(opts.clock);
      return { hit: (key, limit) => Promise.resolve(memory.hit(key, limit)) };
    },
    runExclusive: async (_name, fn) => {
      await fn();
      return true;
    },
    ready: () => readyUnlessFull(storage, () => tx.write((d) => d.prepare('SELECT 1').get())),
    storage: () => storage.state(),
    sizeBytes: () => Promise.resolve({ database: size(file), wal: size(`${file}-wal`) }),
    where: dataDir,
    sqlite: db,
    async close() {
      storage.stop();
      tx.close();
      await store.close();
    },
  };
}

/**
 * The PostgreSQL store of `url`: a pool, migrated to this binary's schema (under an advisory
 * lock, so nodes started together migrate once), with group commit over several connections.
 */
export async function openPgStore(url: string, where: string, opts: StoreOptions): Promise<Store> {
  // pg loads here, not at the top: a run on the SQLite file never needs it.
  const { migratePostgres, openPostgres } = await import('./store/pg.ts');
  const pool = await openPostgres(url, { max: 16 });
  try {
    await migratePostgres(pool);
  } catch (e) {
    await pool.end().catch(() => {});
    throw e;
  }
  return pgStore(pool, where, opts);
}

function pgStore(pool: PgPool, where: string, opts: StoreOptions): Store {
  const storage = createStorageFlag(opts.clock);
  const tx = createPgCommitter(pool, {
    windowMs: 1,
    maxBatch: 200,
    // Two groups in flight, not four: on 2 cores shared with PostgreSQL, each group costs a
    // BEGIN, a COMMIT and the counters' upserts, and four made groups half as large for no
    // more throughput (bench:nodes, 3 alternated pairs: 206–214 against 193–205 emails/s, 13 %
    // less PostgreSQL CPU an email; bench:commit the same or better). docs/performance.md.
    parallel: 2,
    onCommit: (s) => opts.onCommit?.(s),
    onStorageFull: () => storage.noteFull(),
  });
  const settings = createPgServerSettings(pool, tx);
  const audit = createPgAuditWriter();
  const suppressions = createPgSuppressionsRepo(pool, tx, audit);
  const idempotency = createPgIdempotency(pool);
  const usage = createPgUsage(pool);
  const jobs = createPgJobs(pool);
  return {
    kind: 'postgres',
    accounts: createPgAccountsRepo(pool, tx, audit),
    keys: createPgKeysRepo(pool, tx, audit),
    suppressions,
    templates: createPgTemplatesRepo(pool, tx, audit),
    domains: createPgDomainsRepo(pool, tx, audit),
    dmarc: createPgDmarcRepo(pool, tx),
    emails: createPgEmailsRepo(pool, tx, { usage, idempotency, audit, suppressions }),
    delivery: createPgDeliveryRepo(pool, tx, {
      suppress: (t, projectId, email, emailId, at, reason) =>
        suppressions.add(t, projectId, email, reason, at, emailId),
    }),
    tracking: createPgTrackingRepo(tx),
    tlsrpt: createPgTlsrptRepo(pool, tx),
    receiving: createPgReceivingRepo(pool, tx, audit),
    webhooks: createPgWebhooksRepo(pool, tx, audit),
    sessions: createPgSessionsRepo(pool, tx),
    stats: createPgStatsRepo(pool),
    nodes: createPgNodesRepo(pool, tx),
    audit: createPgAuditRepo(pool),
    settings,
    secrets: createPgSecrets(tx, () => iso(opts.clock.now())),
    usage: { used: (orgId, period) => usage.used(orgId, period) },
    purgeIdempotency: (now) => idempotency.purgeExpired(now),
    topReader: (o) => createPgTopReader(pool, o),
    rateLimiter: () => createPgRateLimiter(pool, opts.clock),
    failureWindows: (name, windowMs) => createPgFailureWindows(pool, opts.clock, name, windowMs),
    runExclusive: (name, fn) => jobs.runExclusive(name, fn),
    ready: () => readyUnlessFull(storage, () => tx.write((t) => t.query('SELECT 1'))),
    storage: () => storage.state(),
    async sizeBytes() {
      const r = await pool.query<{ n: string }>('SELECT pg_database_size(current_database())::text AS n');
      return { database: Number(r.rows[0]!.n), wal: 0 };
    },
    where,
    sqlite: undefined,
    async close() {
      await tx.close();
      await pool.end();
    },
  };
}

/** Ready: writes are not failing for lack of space, and the store answers `probe`. */
async function readyUnlessFull(storage: StorageWatch, probe: () => Promise<unknown>): Promise<boolean> {
  if (storage.state().full) return false;
  try {
    await probe();
    return true;
  } catch {
    return false;
  }
}

/**
 * svc top's reader without a running server: the data dir over a read-only connection (the
 * whole server), or with `database` a PostgreSQL database (every node; its reads write nothing).
 */
export async function openTopReader(where: {
  dataDir: string;
  database?: string | undefined;
}): Promise<{ reader: TopStore; label: string; close: () => void }> {
  if (where.database) {
    const { openPostgres, redactUrl } = await import('./store/pg.ts');
    const pool = await openPostgres(where.database, { max: 2 });
    return { reader: createPgTopReader(pool), label: redactUrl(where.database), close: () => void pool.end() };
  }
  const db = openReadOnly(where.dataDir);
  return { reader: createTopReader(db), label: where.dataDir, close: () => db.close() };
}

/**
 * Opens the store the configuration names: PostgreSQL with `--database` (SVC_DATABASE_URL),
 * else the data dir's SQLite file.
 */
export async function openStore(
  config: { dataDir: string; database?: string | undefined },
  opts: StoreOptions,
): Promise<Store> {
  if (config.database) {
    const { redactUrl } = await import('./store/pg.ts');
    return openPgStore(config.database, redactUrl(config.database), opts);
  }
  return openSqliteStore(config.dataDir, opts);
}
