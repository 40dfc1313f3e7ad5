export { createKeysRepo, type KeyPrincipal, type KeysRepo } from './repo.ts';
export { createKeysService, toApiKey, type ApiKey, type KeysService } from './service.ts';
export { PERMISSIONS, ENVS, KEY_PREFIX, listKeysQuerySchema, type Permission, type KeyEnv } from './schema.ts';
export { assertAllowed, type Access } from './permissions.ts';
