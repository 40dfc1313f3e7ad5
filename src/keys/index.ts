export { createKeysRepo } from './repo.ts';
export type { KeptPrincipal, KeyPrincipal, KeyRow, KeysStore, NewKey } from './store.ts';
export { AuthEpochMoved, confirmed, confirmedNow, type AuthCheck } from './epoch.ts';
export { createKeysService, toApiKey, type ApiKey, type KeysService } from './service.ts';
export { PERMISSIONS, ENVS, KEY_PREFIX, listKeysQuerySchema, type Permission, type KeyEnv } from './schema.ts';
export { allows, assertAllowed, type Access } from './permissions.ts';
