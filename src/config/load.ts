import { readFileSync } from 'node:fs';
import { configSchema, type Config } from './schema.ts';

import { ConfigError } from './error.ts';

export { ConfigError };

/** Environment variable of each setting (cli.md). */
const ENV: Record<string, string> = {
  dataDir: 'SVC_DATA_DIR',
  httpHost: 'SVC_HTTP_HOST',
  httpPort: 'SVC_HTTP_PORT',
  smtpHost: 'SVC_SMTP_HOST',
  smtpPort: 'SVC_SMTP_PORT',
  tlsCert: 'SVC_TLS_CERT',
  tlsKey: 'SVC_TLS_KEY',
  publicUrl: 'SVC_PUBLIC_URL',
  hostname: 'SVC_HOSTNAME',
  dnsServers: 'SVC_DNS_SERVERS',
  mxPort: 'SVC_MX_PORT',
  relay: 'SVC_RELAY',
  workers: 'SVC_WORKERS',
  allowInsecureWebhooks: 'SVC_ALLOW_INSECURE_WEBHOOKS',
  smtpTlsInsecure: 'SVC_SMTP_TLS_INSECURE',
  webhookRetrySchedule: 'SVC_WEBHOOK_RETRY_SCHEDULE',
  deliveryRetrySchedule: 'SVC_DELIVERY_RETRY_SCHEDULE',
  deliveryMaxAge: 'SVC_DELIVERY_MAX_AGE',
  logLevel: 'SVC_LOG_LEVEL',
  logFormat: 'SVC_LOG_FORMAT',
  defaultPlan: 'SVC_DEFAULT_PLAN',
  rateLimitPerSecond: 'SVC_RATE_LIMIT_PER_SECOND',
  sandboxDomain: 'SVC_SANDBOX_DOMAIN',
  templateTimeout: 'SVC_TEMPLATE_TIMEOUT',
  domainGracePeriod: 'SVC_DOMAIN_GRACE_PERIOD',
  domainCheckInterval: 'SVC_DOMAIN_CHECK_INTERVAL',
  deliveryConcurrency: 'SVC_DELIVERY_CONCURRENCY',
  deliveryConnectTimeout: 'SVC_DELIVERY_CONNECT_TIMEOUT',
  deliveryTimeout: 'SVC_DELIVERY_TIMEOUT',
};

export function settingName(key: string): string {
  return '--' + key.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
}

export interface ConfigSources {
  flags?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  /** Path of a JSON config file (`--config` or SVC_CONFIG). */
  file?: string | undefined;
}

/**
 * Merges the config file, the environment and the flags (in that order of
 * precedence, flags last) and validates the result. A bad setting throws a
 * ConfigError whose message is one line naming the setting.
 */
export function loadConfig(sources: ConfigSources = {}): Config {
  const env = sources.env ?? {};
  const merged: Record<string, unknown> = {};
  const file = sources.file ?? env.SVC_CONFIG;
  if (file) Object.assign(merged, readConfigFile(file));
  for (const [key, name] of Object.entries(ENV)) {
    const v = env[name];
    if (v !== undefined && v !== '') merged[key] = v;
  }
  for (const [key, v] of Object.entries(sources.flags ?? {})) if (v !== undefined) merged[key] = v;
  const parsed = configSchema.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = String(issue.path[0] ?? (issue.code === 'unrecognized_keys' ? issue.keys[0] : ''));
    const shown = key ? `${settingName(key)}${ENV[key] ? ` (${ENV[key]})` : ''}` : 'config';
    throw new ConfigError(`invalid setting ${shown}: ${issue.message}`);
  }
  if (Boolean(parsed.data.tlsCert) !== Boolean(parsed.data.tlsKey)) {
    throw new ConfigError('invalid setting --tls-cert/--tls-key: give both or neither');
  }
  return parsed.data;
}

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(`cannot read config file ${path}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('not an object');
    return v as Record<string, unknown>;
  } catch (e) {
    throw new ConfigError(`config file ${path} is not a JSON object: ${(e as Error).message}`);
  }
}
