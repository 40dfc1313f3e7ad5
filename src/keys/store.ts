// The keys store: what API keys ask of a database, whichever runs. repo.ts (SQLite) and
// repo-pg.ts (PostgreSQL) implement it; test/contract/keys.test.ts holds both to it.
import type { Audited } from '../audit/index.ts';
import type { Plan } from '../limits/index.ts';
import type { AuthCheck } from './epoch.ts';
import type { KeyEnv, Permission } from './schema.ts';

/** An API key as stored: its token only as a SHA-256 hash. */
export interface KeyRow {
  id: string;
  project_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  permissions: Permission;
  env: KeyEnv;
  created_by: string | null;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
}

/** A key with what a request needs to know about its project and organization. */
export interface KeyPrincipal extends KeyRow {
  organization_id: string;
  project_settings: string;
  plan: Plan;
  daily_limit: number | null;
  rate_limit_per_second: number | null;
  dpa_accepted_at: string | null;
}

/** A principal from memory, and the auth epoch its answers must be confirmed under (epoch.ts). */
export interface KeptPrincipal {
  principal: KeyPrincipal;
  check: AuthCheck;
}

/** A key as it is created: never used, not revoked. */
export type NewKey = Omit<KeyRow, 'last_used_at' | 'revoked_at'>;

export interface KeysStore {
  /**
   * The key whose token hashes to `hash`, with its project's organization and settings and its
   * organization's plan, limits and DPA acceptance; undefined when none. Revoked and expired
   * keys are found too (the service refuses them). The answer may be kept in memory, frozen,
   * but never across a change to any key (but its last_used_at), project or organization made
   * by any process or node (the auth epoch, migration 0013): a key revoked or a plan changed
   * elsewhere is seen at the next call. Its last_used_at may be older than the row's.
   */
  findPrincipalByHash(hash: string): Promise<KeyPrincipal | undefined>;
  /**
   * The key findPrincipalByHash last found for `hash`, from memory, without reading anything;
   * undefined when it keeps none. Its `check` holds the auth epoch it was kept under and reads
   * the epoch synchronously on the store's connection, so that inside the store's write
   * transaction it reads that transaction's view (epoch.ts says why that is sound). Only a store
   * whose reads are synchronous has it (SQLite): on PostgreSQL that read would be one more round
   * trip inside the accept's transaction, and every request reads the epoch instead.
   */
  findKept?(hash: string): KeptPrincipal | undefined;
  /** The key, of any project, revoked or not; undefined when absent. */
  findKeyById(id: string): Promise<KeyRow | undefined>;
  /**
   * The project's keys, newest first (created_at, then id in byte order, both descending);
   * revoked ones only with `includeRevoked`.
   */
  listKeys(projectId: string, includeRevoked: boolean): Promise<KeyRow[]>;
  /**
   * Inserts the key and its audit row, in one transaction. A name held by an active key of the
   * project (revoking frees it), or a token hash taken, rejects as a UNIQUE violation
   * (isUniqueViolation: the service answers 409) and writes nothing.
   */
  createKey(k: NewKey, a: Audited): Promise<void>;
  /**
   * Sets the key's revoked_at to `at` and writes its audit row, in one transaction: true.
   * False, and nothing written (no audit row), when the key is absent or already revoked (its
   * first revoked_at stays).
   */
  revokeKey(id: string, at: string, a: Audited): Promise<boolean>;
  /**
   * Sets last_used_at to `at` on each key of `ids` (unknown and revoked ones are skipped: a key
   * kept in memory is noted used before its request learns of a revocation made elsewhere), in
   * one transaction; no audit row, and the auth epoch stays: keys kept in memory are kept.
   */
  touchKeys(ids: string[], at: string): Promise<void>;
}
