import { readFileSync } from 'node:fs';
import { configSchema, type Config } from './schema.ts';
import { ConfigError } from './error.ts';
import { SETTINGS, envOf, fileKeyOf, flagOf, keyOfFileKey } from './settings.ts';

export { ConfigError };

export interface ConfigSources {
  flags?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  /** Path of a JSON config file (`--config` or SVC_CONFIG). */
  file?: string | undefined;
}

/** Where a merged value came from, to name the setting as its author wrote it. */
type Origin = { kind: 'flag' } | { kind: 'env' } | { kind: 'file'; path: string; as: string };

/**
 * Merges the config file, the environment and the flags (in that order of
 * precedence, flags last) and validates the result. A bad setting throws a
 * ConfigError whose message is one line naming the setting.
 */
export function loadConfig(sources: ConfigSources = {}): Config {
  const env = sources.env ?? {};
  const merged: Record<string, unknown> = {};
  const origin = new Map<string, Origin>();
  const file = sources.file ?? env.SVC_CONFIG;
  if (file) {
    for (const [as, { key, value }] of readConfigFile(file)) {
      merged[key] = value;
      origin.set(key, { kind: 'file', path: file, as });
    }
  }
  for (const { key } of SETTINGS) {
    const v = env[envOf(key)];
    if (v !== undefined && v !== '') {
      merged[key] = v;
      origin.set(key, { kind: 'env' });
    }
  }
  for (const [key, v] of Object.entries(sources.flags ?? {})) {
    if (v === undefined) continue;
    merged[key] = v;
    origin.set(key, { kind: 'flag' });
  }
  // Parsed once per process: zod's compiled fast path would cost more to build than it saves.
  const parsed = configSchema.safeParse(merged, { jitless: true });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = String(issue.path[0] ?? (issue.code === 'unrecognized_keys' ? issue.keys[0] : ''));
    throw new ConfigError(`invalid setting ${describeSetting(key, origin.get(key))}: ${issue.message}`);
  }
  if (Boolean(parsed.data.tlsCert) !== Boolean(parsed.data.tlsKey)) {
    throw new ConfigError('invalid setting --tls-cert/--tls-key: give both or neither');
  }
  const { bodyRetention, emailRetention } = parsed.data;
  if (emailRetention !== 0 && emailRetention < bodyRetention) {
    throw new ConfigError('invalid setting --email-retention: shorter than --body-retention; make it longer, or off');
  }
  return parsed.data;
}

/** `--http-port (SVC_HTTP_PORT)`, or `"http-port" in config file svc.json` for a value from the file. */
function describeSetting(key: string, from: Origin | undefined): string {
  if (!key) return 'config';
  if (from?.kind === 'file') return `"${from.as}" in config file ${from.path}`;
  return `${flagOf(key)} (${envOf(key)})`;
}

/**
 * Reads a config file: a JSON object whose keys are settings in any of their
 * spellings (`http-port`, `http_port`, `httpPort`). An unknown key, or one
 * setting given twice, is refused naming the key and the file.
 */
function readConfigFile(path: string): Map<string, { key: string; value: unknown }> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(`cannot read config file ${path}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  let object: unknown;
  try {
    object = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`config file ${path} is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof object !== 'object' || object === null || Array.isArray(object)) {
    throw new ConfigError(`config file ${path} must hold one JSON object of settings`);
  }
  const out = new Map<string, { key: string; value: unknown }>();
  const seen = new Map<string, string>();
  for (const [as, value] of Object.entries(object)) {
    const key = keyOfFileKey(as);
    if (!key) {
      throw new ConfigError(
        `unknown key "${as}" in config file ${path}: the keys are svc serve's settings, such as "http-port" (README, "Configure")`,
      );
    }
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      throw new ConfigError(`config file ${path} gives "${fileKeyOf(key)}" twice, as "${earlier}" and "${as}"`);
    }
    seen.set(key, as);
    out.set(as, { key, value });
  }
  return out;
}
