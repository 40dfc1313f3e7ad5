export { createSessionsRepo } from './repo.ts';
export type * from './store.ts';
export { createSessionsService, type SessionsService, type SessionTokens, type SessionPrincipal } from './service.ts';
export { createLoginThrottle, LOGIN_LIMITS, type LoginThrottle } from './throttle.ts';
export { ACCESS_TTL_MS, REFRESH_TTL_MS, REFRESH_PREFIX } from './schema.ts';
