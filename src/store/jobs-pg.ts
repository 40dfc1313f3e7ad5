import { createHash } from 'node:crypto';
import type { PgPool } from './pg.ts';

/** A job's advisory lock key: 64 bits of its name's hash, as PostgreSQL's bigint takes it. */
function lockKey(name: string): bigint {
  return createHash('sha256').update(`svc job ${name}`).digest().readBigInt64BE(0);
}

/**
 * Work that one node at a time should do on a shared database (retention passes, domain
 * checks, purges): every node schedules it, and the one that gets the job's advisory lock
 * runs it while the others skip this turn. The lock is a session lock on a connection held
 * for the run, so it goes away with the node if the node dies. On SQLite there is one server,
 * which always runs it.
 */
export function createPgJobs(pool: PgPool) {
  return {
    /** Runs `fn` unless another node is running the job `name` now; true when it ran. */
    async runExclusive(name: string, fn: () => Promise<void>): Promise<boolean> {
      const client = await pool.connect();
      const key = lockKey(name).toString();
      try {
        const got = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS ok', [key]);
        if (!got.rows[0]!.ok) return false;
        try {
          await fn();
          return true;
        } finally {
          await client.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
        }
      } finally {
        client.release();
      }
    },
  };
}

export type PgJobs = ReturnType<typeof createPgJobs>;
