import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';

/**
 * A new, empty database on the run's PostgreSQL server (test/postgres/global-setup.ts), for one
 * test file or one test: its URL, and a drop that ends the connections left to it.
 */
export async function freshPgDatabase(label = 't'): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = inject('pgAdminUrl');
  const name = `${label.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name} STRATEGY file_copy`);
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
