// A key served from memory without reading the auth epoch, and how its answer is confirmed.
//
// Every change to a key (but its last_used_at), a project or an organization adds 1 to the auth
// epoch, from whichever process or node writes it (migration 0013), and nothing ever lowers it.
// A kept principal was read after its epoch was, so it is as new as that epoch at least. When
// the epoch is found unchanged at a later moment, nothing that decides whether the key may send
// changed between the key's reading and that moment: an answer given under the kept principal
// is the answer fresh data would have given then. So a request may be answered from memory
// alone as long as the epoch is confirmed before the answer takes effect: inside the write
// transaction of what it writes (the accept plan's first step), or by one read before an answer
// that writes nothing. That keeps "revocation applies immediately" (contract, "State
// machines") while a send reads nothing of the keys.

/** What a principal from memory stands on; `verified` once the epoch was seen unchanged. */
export interface AuthCheck {
  /** The auth epoch the principal was kept under. */
  readonly epoch: number;
  /** Set when the epoch was read and found still at `epoch`. */
  verified: boolean;
  /** Reads the auth epoch now, synchronously: inside the caller's transaction when there is one. */
  readonly read: () => number;
}

/**
 * The auth epoch moved since the principal was kept: whatever the request did with it is
 * undone (the accept throws this before writing anything), and the request runs again on a
 * fresh principal. Never an answer to a client.
 */
export class AuthEpochMoved extends Error {
  constructor() {
    super('the auth epoch moved since the key was kept');
    this.name = 'AuthEpochMoved';
  }
}

/** True when the epoch is (or was found) still the check's; reads it at most once. */
export function confirmed(check: AuthCheck): boolean {
  if (!check.verified) check.verified = check.read() === check.epoch;
  return check.verified;
}

/**
 * Reads the epoch whatever was found before: inside a write transaction, which the group
 * commit may roll back and run again in a later one (store/committer.ts), a revocation
 * committed in between must be seen by the second run.
 */
export function confirmedNow(check: AuthCheck): boolean {
  check.verified = check.read() === check.epoch;
  return check.verified;
}
