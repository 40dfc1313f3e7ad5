import { createHash } from 'node:crypto';
import { AppError } from '../errors.ts';
import type { Db } from '../store/db.ts';

export interface StoredResponse {
  request_hash: string;
  response: string;
}

/** A stable fingerprint of a request body: same body, same hash, whatever the key order. */
export function requestHash(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/**
 * Idempotency-Key records (decisions.md, "Idempotency"): scoped to the project,
 * kept 24 h, only for accepted sends. In-flight keys live in memory: this
 * process is the only writer (several nodes would use a pending row instead).
 */
export function createIdempotencySql(db: Db) {
  const find = db.prepare<[string, string, string], StoredResponse>(
    'SELECT request_hash, response FROM idempotency_keys WHERE project_id = ? AND key = ? AND expires_at > ?',
  );
  const put = db.prepare(
    `INSERT INTO idempotency_keys (project_id, key, request_hash, response, email_id, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (project_id, key) DO UPDATE SET request_hash = excluded.request_hash, response = excluded.response,
       email_id = excluded.email_id, created_at = excluded.created_at, expires_at = excluded.expires_at`,
  );
  const purge = db.prepare('DELETE FROM idempotency_keys WHERE expires_at <= ?');
  return {
    find: (projectId: string, key: string, nowIso: string) => find.get(projectId, key, nowIso),
    save: (
      projectId: string,
      key: string,
      hash: string,
      response: unknown,
      emailId: string,
      nowIso: string,
      expiresIso: string,
    ) => put.run(projectId, key, hash, JSON.stringify(response), emailId, nowIso, expiresIso),
    purgeExpired: (nowIso: string) => purge.run(nowIso).changes,
  };
}

/**
 * The keys in flight in this process: a second request with one while the first runs is
 * answered 409 idempotency_in_progress at once. Across nodes (PostgreSQL) the pending row
 * that the send transaction inserts first does the same (src/idempotency/pg.ts).
 */
export function createIdempotencyGate() {
  const inFlight = new Set<string>();
  return {
    /** Marks a key in flight, or throws 409 idempotency_in_progress if it already is. */
    begin(projectId: string, key: string): () => void {
      const id = `${projectId}\u0000${key}`;
      if (inFlight.has(id)) throw new AppError('idempotency_in_progress');
      inFlight.add(id);
      return () => inFlight.delete(id);
    },
  };
}

export type IdempotencySql = ReturnType<typeof createIdempotencySql>;
export type IdempotencyGate = ReturnType<typeof createIdempotencyGate>;
export type { PgIdempotency } from './pg.ts';
