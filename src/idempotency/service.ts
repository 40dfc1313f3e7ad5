import { createHash } from 'node:crypto';
import { AppError } from '../errors.ts';

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
 * The keys in flight in this process: a second request with one while the first runs is
 * answered 409 idempotency_in_progress at once. Across nodes (PostgreSQL) the pending row
 * that the send transaction inserts first does the same (repo-pg.ts).
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

export type IdempotencyGate = ReturnType<typeof createIdempotencyGate>;
