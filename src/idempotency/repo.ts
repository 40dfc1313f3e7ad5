import type { Db } from '../store/db.ts';

export interface StoredResponse {
  request_hash: string;
  response: string;
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

export type IdempotencySql = ReturnType<typeof createIdempotencySql>;
