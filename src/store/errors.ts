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
