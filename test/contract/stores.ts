// The stores a repository contract test runs against: the SQLite store of a fresh data dir and
// the PostgreSQL store of a fresh database, each opened as `svc serve` opens it (app-store.ts),
// so a contract test also checks the wiring. Each test file describes one domain's store
// interface (src/<domain>/store.ts) and calls every one of its methods on both stores
// (test/contract/coverage.test.ts fails when a method has no call here).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPgStore, openSqliteStore, type Store } from '../../src/app-store.ts';
import { FakeClock } from '../../src/lib/clock.ts';
import { migratedPgDatabase } from '../postgres/db.ts';

export type StoreKind = 'sqlite' | 'postgres';
export const STORE_KINDS: [StoreKind][] = [['sqlite'], ['postgres']];

export const AT = '2026-11-26T12:00:00.000Z';

/** One organization 'o1' (FREE) owned by 'u1', with project 'p1'. */
export const SEED = `INSERT INTO users (id, email, password_hash, created_at) VALUES ('u1', 'owner@example.com', 'h', '${AT}');
  INSERT INTO organizations (id, name, plan, created_at) VALUES ('o1', 'Org', 'FREE', '${AT}');
  INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p1', 'o1', 'P', '${AT}')`;

export interface OpenedStore {
  store: Store;
  /** Raw SQL for a test's setup and for looking behind the interface (same SQL on both). */
  exec(sql: string): Promise<void>;
  query<T = Record<string, unknown>>(sql: string): Promise<T[]>;
  close(): Promise<void>;
}

/** A fresh store of `kind`, seeded with SEED. */
export async function openStore(kind: StoreKind): Promise<OpenedStore> {
  const clock = new FakeClock(Date.parse(AT));
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'svc-contract-'));
    const store = openSqliteStore(join(dir, 'data'), { clock, createDataDir: true });
    const db = store.sqlite!;
    db.exec(SEED);
    return {
      store,
      exec: (sql) => Promise.resolve(void db.exec(sql)),
      query: <T>(sql: string) => Promise.resolve(db.prepare(sql).all() as T[]),
      async close() {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const { url, drop } = await migratedPgDatabase('contract');
  const store = await openPgStore(url, url, { clock });
  const pg = await import('pg');
  const raw = new pg.default.Pool({ connectionString: url, max: 1 });
  // pg's Pool.end() resolves before its clients' sockets close; the drop that follows ends them
  // (57P01), which is expected at close and must not surface as an uncaught error.
  raw.on('error', () => {});
  raw.on('connect', (client) => client.on('error', () => {}));
  await raw.query(SEED);
  return {
    store,
    exec: async (sql) => void (await raw.query(sql)),
    query: async <T>(sql: string) => (await raw.query(sql)).rows as T[],
    async close() {
      await raw.end();
      await store.close();
      await drop();
    },
  };
}
