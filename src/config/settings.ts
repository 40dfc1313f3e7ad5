import type { ConfigInput } from './schema.ts';

/** What a person reads about one setting; the schema (schema.ts) holds its check and default. */
export interface SettingDoc {
  /** The key in the Config object; in a config file also `kebab-case` and `snake_case`. */
  key: keyof ConfigInput;
  /** Placeholder of the flag's value; absent for an on/off switch. */
  value?: string;
  description: string;
  /** The default as a person writes it; absent when there is none. */
  default?: string;
  /** A value shown in the README's complete config file. */
  example: string | number | boolean;
}

/**
 * Every setting of `svc serve` (cli.md, "Server"), in the order `svc serve --help`
 * and the README show them. Flags, environment variables and config-file keys
 * are all derived from `key`, so a setting is named the same way everywhere.
 */
export const SETTINGS: readonly SettingDoc[] = [
  { key: 'dataDir', value: 'dir', description: 'data directory', default: './svc-data', example: '/var/lib/svc' },
  {
    key: 'database',
    value: 'url',
    description: "PostgreSQL in place of the data dir's SQLite file: several nodes share one database",
    example: 'postgres://svc:secret@db.internal:5432/svc',
  },
  { key: 'httpHost', value: 'host', description: 'HTTP listen address', default: '127.0.0.1', example: '0.0.0.0' },
  { key: 'httpPort', value: 'port', description: 'HTTP port', default: '8080', example: 8080 },
  {
    key: 'smtpHost',
    value: 'host',
    description: 'SMTP relay listen address',
    default: '127.0.0.1',
    example: '0.0.0.0',
  },
  { key: 'smtpPort', value: 'port', description: 'SMTP relay port, 0 = off', default: '2587', example: 2587 },
  {
    key: 'smtpMaxSessions',
    value: 'n',
    description: 'SMTP relay sessions at once, the next gets 421',
    default: '100',
    example: 100,
  },
  {
    key: 'smtpIdleTimeout',
    value: 'duration',
    description: 'an idle SMTP relay session is closed',
    default: '5m',
    example: '5m',
  },
  {
    key: 'inFlightBytes',
    value: 'size',
    description:
      'request bodies, relayed and inbound messages held in memory at once, at least 40MiB (the largest request); over it the API answers 503, SMTP 452',
    default: '256MiB',
    example: '256MiB',
  },
  {
    key: 'inboundHost',
    value: 'host',
    description: "inbound MX (bounces to return paths, receiving domains' routes) listen address",
    default: '0.0.0.0',
    example: '0.0.0.0',
  },
  {
    key: 'inboundPort',
    value: 'port',
    description: 'inbound MX port (25 on a server), 0 = off',
    default: '0',
    example: 25,
  },
  {
    key: 'inboundRatePerIp',
    value: 'n',
    description: 'received messages a minute one client IP may hand the routes, per node; past it 451 4.7.1',
    default: '120',
    example: 120,
  },
  {
    key: 'inboundRatePerSender',
    value: 'n',
    description: 'received messages a minute one envelope sender may hand the routes, per node; past it 451 4.7.1',
    default: '60',
    example: 60,
  },
  {
    key: 'tlsCert',
    value: 'file',
    description: 'TLS certificate (PEM) for HTTPS and STARTTLS',
    example: '/etc/svc/tls/cert.pem',
  },
  { key: 'tlsKey', value: 'file', description: 'TLS private key (PEM)', example: '/etc/svc/tls/key.pem' },
  {
    key: 'publicUrl',
    value: 'url',
    description: 'public base URL of tracked links and the open pixel',
    default: 'http://host:port',
    example: 'https://mail.example.com',
  },
  {
    key: 'hostname',
    value: 'name',
    description: 'fully qualified host name: EHLO, Message-ID, SPF and return-path records',
    default: 'the OS host name',
    example: 'mta.example.com',
  },
  {
    key: 'dnsServers',
    value: 'list',
    description: 'host:port,... resolvers for MX lookups and domain checks',
    default: "the system's",
    example: '127.0.0.1:53',
  },
  { key: 'mxPort', value: 'port', description: 'port of recipient MX hosts', default: '25', example: 25 },
  {
    key: 'relay',
    value: 'url',
    description: 'smtp[s]://user:pass@host:port smarthost for all LIVE mail',
    default: 'none: direct to MX',
    example: 'smtps://user:pass@smtp.example.net:465',
  },
  {
    key: 'workers',
    value: 'n',
    description: 'delivery and template worker threads',
    default: 'delivery CPU count − 1 (at least 1), templates CPU count',
    example: 2,
  },
  {
    key: 'allowInsecureWebhooks',
    description: 'allow http:// and private webhook targets (development only)',
    default: 'off',
    example: false,
  },
  {
    key: 'smtpTlsInsecure',
    description: 'accept self-signed certificates of MX hosts and relays',
    default: 'off',
    example: false,
  },
  {
    key: 'outboundCa',
    value: 'file',
    description: 'PEM file of extra certificate authorities trusted for MX hosts and MTA-STS policy hosts',
    default: "node's CAs only",
    example: '/etc/svc/private-ca.pem',
  },
  {
    key: 'daneResolver',
    value: 'host:port',
    description: 'DNSSEC-validating resolver trusted for DANE TLSA records; without it DANE is off',
    default: 'none: DANE off',
    example: '127.0.0.1:53',
  },
  {
    key: 'tlsReports',
    description: "send daily TLS reports (RFC 8460) to recipient domains' _smtp._tls rua",
    default: 'off',
    example: false,
  },
  {
    key: 'tlsReportsFrom',
    value: 'address',
    description: 'sender of TLS reports by mail, on a verified domain; without it only https rua get reports',
    default: 'none',
    example: 'tls-reports@example.com',
  },
  {
    key: 'webhookRetrySchedule',
    value: 'list',
    description: 'waits between webhook attempts',
    default: '1m,5m,30m,2h',
    example: '1m,5m,30m,2h',
  },
  {
    key: 'deliveryRetrySchedule',
    value: 'list',
    description: 'waits between delivery attempts',
    default: '1m,5m,15m,30m,1h,2h,4h',
    example: '1m,5m,15m,30m,1h,2h,4h',
  },
  {
    key: 'deliveryMaxAge',
    value: 'duration',
    description: 'a recipient still undelivered after this fails',
    default: '72h',
    example: '72h',
  },
  {
    key: 'deliveryConcurrency',
    value: 'n',
    description: 'SMTP transactions at once per destination domain',
    default: '20',
    example: 20,
  },
  {
    key: 'deliveryConnectTimeout',
    value: 'duration',
    description: 'connect and greeting limit per MX host',
    default: '30s',
    example: '30s',
  },
  {
    key: 'deliveryTimeout',
    value: 'duration',
    description: 'SMTP session inactivity limit',
    default: '2m',
    example: '2m',
  },
  {
    key: 'deliveryLease',
    value: 'duration',
    description: "how long a node holds the recipients it sends to; others send a dead node's after this",
    default: '10m',
    example: '10m',
  },
  {
    key: 'bodyRetention',
    value: 'duration',
    description: 'bodies and attachments of older emails are dropped (metadata and events stay)',
    default: '30d',
    example: '30d',
  },
  {
    key: 'emailRetention',
    value: 'duration',
    description: 'older final emails are deleted with their events (hourly stats stay); off keeps them',
    default: '90d',
    example: '90d',
  },
  {
    key: 'logLevel',
    value: 'level',
    description: 'trace|debug|info|warn|error|fatal|silent',
    default: 'info',
    example: 'info',
  },
  {
    key: 'logFormat',
    value: 'format',
    description: 'json|pretty',
    default: 'pretty on a TTY, else json',
    example: 'json',
  },
  {
    key: 'defaultPlan',
    value: 'plan',
    description: 'plan of new organizations: FREE|PAID|PREMIUM|UNLIMITED',
    default: 'FREE',
    example: 'FREE',
  },
  {
    key: 'rateLimitPerSecond',
    value: 'n',
    description: "per-key request rate for every key, instead of the plan's",
    default: "the plan's",
    example: 10,
  },
  {
    key: 'sandboxDomain',
    value: 'domain',
    description: 'onboarding trial: one LIVE email per project from this domain to the key creator',
    default: 'none',
    example: 'sandbox.example.com',
  },
  {
    key: 'templateTimeout',
    value: 'duration',
    description: 'template render time limit',
    default: '1s',
    example: '1s',
  },
  {
    key: 'domainCheckInterval',
    value: 'duration',
    description: "time between the server's checks of every domain",
    default: '1h',
    example: '1h',
  },
  {
    key: 'domainGracePeriod',
    value: 'duration',
    description: 'failing DKIM or SPF records unverify a domain after',
    default: '72h',
    example: '72h',
  },
  {
    key: 'dkimRotationGrace',
    value: 'duration',
    description: "a replaced DKIM key's record stays listed after the switch for",
    default: '7d',
    example: '7d',
  },
  {
    key: 'dkimRotateMonths',
    value: 'n',
    description: 'rotate DKIM keys once they have signed this many months; off never',
    default: 'off',
    example: '6',
  },
];

const words = (key: string) => key.replace(/[A-Z]/g, (c) => ' ' + c.toLowerCase()).split(' ');

/** `httpPort` -> `--http-port`. */
export const flagOf = (key: string): string => '--' + words(key).join('-');
/** `httpPort` -> `SVC_HTTP_PORT`. */
/** Settings whose variable is named the way such settings usually are, not after the key. */
const ENV_NAMES: Record<string, string> = { database: 'SVC_DATABASE_URL' };
export const envOf = (key: string): string => ENV_NAMES[key] ?? 'SVC_' + words(key).join('_').toUpperCase();
/** `httpPort` -> `http-port`, the spelling a config file shows first. */
export const fileKeyOf = (key: string): string => words(key).join('-');

/** The Config key a config-file key names, in any of its three spellings, or undefined. */
export function keyOfFileKey(fileKey: string): SettingDoc['key'] | undefined {
  const camel = fileKey.replace(/[-_]([a-z])/g, (_m, c: string) => c.toUpperCase());
  return SETTINGS.find((s) => s.key === camel)?.key;
}
