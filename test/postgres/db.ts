import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { openPostgres } from '../../src/store/pg.ts';
import { createPgCommitter, type PgCommitter } from '../../src/store/pg-committer.ts';

/**
 * A new, empty database on the run's PostgreSQL server (test/global-setup.ts), for one
 * test file or one test: its URL, and a drop that ends the connections left to it.
 */
export async function freshPgDatabase(
  label = 't',
  { template }: { template?: string } = {},
): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = inject('pgAdminUrl');
  const name = `${label.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''} STRATEGY file_copy`);
  } finally {
    await client.end();
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** One node's connection to a database: its pool and its group commit, as `svc serve` would hold them. */
export interface PgNode {
  pool: pg.Pool;
  tx: PgCommitter;
  close(): Promise<void>;
}

export async function pgNode(url: string): Promise<PgNode> {
  const pool = await openPostgres(url);
  const tx = createPgCommitter(pool, { windowMs: 1, maxBatch: 100 });
  return {
    pool,
    tx,
    async close() {
      await tx.close();
      await pool.end();
    },
  };
}

/** A fresh database at the latest schema: a copy of the run's migrated template (global-setup.ts). */
export function migratedPgDatabase(label: string): Promise<{ url: string; drop: () => Promise<void> }> {
  return freshPgDatabase(label, { template: inject('pgMigratedTemplate') });
}

/** Two nodes on one fresh, migrated database, and a close that ends both and drops it. */
export async function twoPgNodes(label: string): Promise<{ a: PgNode; b: PgNode; close: () => Promise<void> }> {
  const db = await migratedPgDatabase(label);
  const [a, b] = [await pgNode(db.url), await pgNode(db.url)];
  return {
    a,
    b,
    close: async () => {
      await a.close();
      await b.close();
      await db.drop();
    },
  };
}
