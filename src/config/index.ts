export { loadConfig, type ConfigSources } from './load.ts';
export { ConfigError } from './error.ts';
export type { Config } from './schema.ts';
export { effectiveSettings, type ServerSettings } from './server-settings.ts';
