import { AppError } from '../errors.ts';
import { iso, type Clock } from '../lib/clock.ts';
import { isUuid, newId, randomToken, sha256Hex } from '../lib/ids.ts';
import { operator, type Actor } from '../audit/index.ts';
import { uniqueOrConflict } from '../store/errors.ts';
import { parseInput } from '../validation.ts';
import type { AuthCheck } from './epoch.ts';
import type { KeyPrincipal, KeyRow, KeysStore } from './store.ts';
import { KEY_PREFIX, createKeySchema, type CreateKeyInput, type KeyEnv } from './schema.ts';

export interface ApiKey {
  id: string;
  project_id: string;
  name: string;
  prefix: string;
  permissions: string;
  env: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
  key?: string | undefined;
}

/** Characters of the random part shown in `prefix` (decisions.md: "the first 12 characters"). */
const SHOWN = 12;
/** last_used_at is written at most this often per key, to keep reads off the write path. */
const TOUCH_EVERY_MS = 60_000;

export function toApiKey(k: KeyRow): ApiKey {
  const { key_hash: _h, created_by: _c, ...rest } = k;
  return rest;
}

export interface KeysDeps {
  repo: KeysStore;
  clock: Clock;
}

/** API keys: random, stored as SHA-256, shown once; checked on every request. */
export function createKeysService({ repo, clock }: KeysDeps) {
  const touched = new Map<string, number>();
  return {
    /**
     * Creates a key; the plain token is in the result and nowhere else, ever.
     * `createdBy` is the user the key sends for (the onboarding trial's address);
     * `actor` is who did it, for the audit log (by default the operator at the server).
     */
    async createKey(
      projectId: string,
      input: CreateKeyInput,
      createdBy: string | null = null,
      actor: Actor = operator(),
    ): Promise<ApiKey> {
      const data = parseInput(createKeySchema, input);
      const secret = randomToken(32);
      const key = KEY_PREFIX[data.env] + secret;
      const row = {
        id: newId(clock.now()),
        project_id: projectId,
        name: data.name,
        prefix: KEY_PREFIX[data.env] + secret.slice(0, SHOWN),
        key_hash: sha256Hex(key),
        permissions: data.permissions,
        env: data.env,
        created_by: createdBy,
        expires_at: data.expires_at === null ? null : iso(Date.parse(data.expires_at)),
        created_at: iso(clock.now()),
      };
      const shown = toApiKey({ ...row, last_used_at: null, revoked_at: null });
      const entry = { action: 'api_key.create', project_id: projectId, target_type: 'api_key', target_id: row.id };
      await uniqueOrConflict(
        repo.createKey(row, { actor, atMs: clock.now(), entry: { ...entry, before: null, after: shown } }),
        `an active key named ${data.name} exists in this project`,
      );
      return { ...shown, key };
    },

    async listKeys(projectId: string, includeRevoked = false): Promise<ApiKey[]> {
      return (await repo.listKeys(projectId, includeRevoked)).map(toApiKey);
    },

    /**
     * Revokes a key (of `projectId` when given: another project's is not found);
     * a running server refuses it on its next request. Revoking it again changes nothing.
     */
    async revokeKey(keyId: string, actor: Actor = operator(), projectId?: string): Promise<ApiKey> {
      const key = isUuid(keyId) ? await repo.findKeyById(keyId) : undefined;
      if (!key || (projectId !== undefined && key.project_id !== projectId)) {
        throw new AppError('not_found', `no API key ${keyId}`);
      }
      const now = clock.now();
      const after = toApiKey({ ...key, revoked_at: key.revoked_at ?? iso(now) });
      const entry = { action: 'api_key.revoke', project_id: key.project_id, target_type: 'api_key', target_id: key.id };
      await repo.revokeKey(keyId, iso(now), { actor, atMs: now, entry: { ...entry, before: toApiKey(key), after } });
      return toApiKey((await repo.findKeyById(keyId))!);
    },

    /**
     * Resolves a bearer token to its key, project and organization, or throws
     * 401 for a missing, malformed, unknown, revoked or expired key.
     */
    async authenticate(token: string | undefined): Promise<KeyPrincipal> {
      // Checked against the store's auth epoch on every request: a key revoked through one
      // node is refused by every node at its next request (issue 17).
      return accepted(await repo.findPrincipalByHash(hashOf(token)), token);
    },

    /**
     * As `authenticate`, from memory when the store keeps the key (SQLite), reading nothing:
     * then `check` holds the auth epoch the answer stands on, and the caller confirms it before
     * its answer takes effect (epoch.ts). A key memory would refuse is looked up afresh instead,
     * so a refusal is never given on memory alone. `check` is null when the key was read now.
     */
    async authenticateKept(token: string | undefined): Promise<{ principal: KeyPrincipal; check: AuthCheck | null }> {
      const hash = hashOf(token);
      const kept = repo.findKept?.(hash);
      if (kept && refusalOf(kept.principal, token) === null)
        return { principal: used(kept.principal), check: kept.check };
      return { principal: accepted(await repo.findPrincipalByHash(hash), token), check: null };
    },
  };

  /** The hash a token is stored under; 401 for a missing token or one of no environment. */
  function hashOf(token: string | undefined): string {
    if (!token || !envOf(token)) throw new AppError('unauthorized', 'Missing or invalid API key');
    return sha256Hex(token);
  }

  /** The principal, its use noted; else the 401 refusing it. */
  function accepted(principal: KeyPrincipal | undefined, token: string | undefined): KeyPrincipal {
    const refusal = refusalOf(principal, token);
    if (refusal !== null) throw new AppError('unauthorized', refusal);
    return used(principal!);
  }

  /** Notes the key's use: its last_used_at is written at most once a minute. */
  function used(principal: KeyPrincipal): KeyPrincipal {
    const now = clock.now();
    const last = touched.get(principal.id) ?? 0;
    if (now - last >= TOUCH_EVERY_MS) {
      touched.set(principal.id, now);
      void repo.touchKeys([principal.id], iso(now)).catch(() => touched.delete(principal.id));
    }
    return principal;
  }

  /** Why this key may not be used now, or null when it may. */
  function refusalOf(principal: KeyPrincipal | undefined, token: string | undefined): string | null {
    if (!principal || principal.env !== envOf(token)) return 'Invalid API key';
    if (principal.revoked_at) return 'This API key was revoked';
    if (principal.expires_at && Date.parse(principal.expires_at) <= clock.now()) return 'This API key has expired';
    return null;
  }
}

function envOf(token: string | undefined): KeyEnv | undefined {
  if (token?.startsWith(KEY_PREFIX.LIVE)) return 'LIVE';
  if (token?.startsWith(KEY_PREFIX.TEST)) return 'TEST';
  return undefined;
}

export type KeysService = ReturnType<typeof createKeysService>;
