import { AppError } from '../errors.ts';

/**
 * True for a UNIQUE or PRIMARY KEY violation, on either store: better-sqlite3's SqliteError
 * codes, or PostgreSQL's SQLSTATE 23505 (unique_violation, primary keys included).
 */
export function isUniqueViolation(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

/** Runs a write; a uniqueness violation becomes 409 conflict with `message`. */
export async function uniqueOrConflict<T>(
  p: Promise<T>,
  message: string,
  details?: Record<string, unknown>,
): Promise<T> {
  try {
    return await p;
  } catch (e) {
    if (isUniqueViolation(e)) throw new AppError('conflict', message, details ?? null);
    throw e;
  }
}

/** Seconds a client is told to wait after a write refused for lack of space (Retry-After). */
export const STORAGE_FULL_RETRY_AFTER_S = 30;

/**
 * True when a write failed because the disk is full, on either store: better-sqlite3's
 * SQLITE_FULL (SQLite maps ENOSPC to it), a bare ENOSPC from the filesystem, or
 * PostgreSQL's SQLSTATE 53100 (disk_full).
 */
export function isStorageFull(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'SQLITE_FULL' || code === 'ENOSPC' || code === '53100';
}

/** 503 `storage_full` with a Retry-After: what every door answers while the disk is full. */
export function storageFullError(): AppError {
  return new AppError('storage_full', undefined, null, STORAGE_FULL_RETRY_AFTER_S);
}

/** `e`, or `storage_full` when it is a full disk (then `onFull` is told): each committer's one mapping. */
export function storageFailureOf(e: unknown, onFull?: () => void): unknown {
  if (!isStorageFull(e)) return e;
  onFull?.();
  return storageFullError();
}
