import { z } from 'zod';
import { LIMITS } from '../limits/index.ts';

const duration = z
  .string()
  .regex(/^\d+(ms|s|m|h|d)$/, 'a duration such as 30s, 5m, 2h or 3d')
  .transform((s) => parseDuration(s));

const schedule = z
  .string()
  .transform((s) => s.split(',').map((p) => p.trim()))
  .pipe(z.array(duration).min(1));

const port = z.coerce.number().int().min(0).max(65535);
/** A number of bytes, or one with a binary unit: 256MiB, 1GiB, 512KiB. */
const BYTE_SIZE = /^(\d+)(KiB|MiB|GiB)?$/;
const byteSize = z
  .union([z.number().int(), z.string().regex(BYTE_SIZE, 'a size such as 256MiB, 1GiB or a number of bytes')])
  .transform((v) => (typeof v === 'number' ? v : parseByteSize(v)));
const bool = z.union([z.boolean(), z.enum(['1', '0', 'true', 'false']).transform((v) => v === '1' || v === 'true')]);

/**
 * The least budget of bytes in flight: the largest request, the HTTP body limit or the
 * message size limit, must fit beside others, or under steady load it never gets in.
 */
const MIN_IN_FLIGHT_BYTES = Math.max(LIMITS.httpBodyBytes, LIMITS.messageBytes);

/** Every server setting, its default and its check. Flags beat env, env beats the config file. */
export const configSchema = z.strictObject({
  dataDir: z.string().min(1).default('./svc-data'),
  /** PostgreSQL in place of the data dir's SQLite file, for several nodes (architecture.md, "Scale"). */
  database: z.url({ protocol: /^postgres(ql)?$/, error: 'a postgres:// URL' }).optional(),
  httpHost: z.string().min(1).default('127.0.0.1'),
  httpPort: port.default(8080),
  smtpHost: z.string().min(1).default('127.0.0.1'),
  smtpPort: port.default(2587),
  /** SMTP relay sessions at once; the next client is answered 421. */
  smtpMaxSessions: z.coerce.number().int().min(1).max(100_000).default(100),
  /** An SMTP relay session idle this long is closed (RFC 5321 §4.5.3.2.7: 5 minutes). */
  smtpIdleTimeout: duration.default(parseDuration('5m')),
  /** Bytes of request bodies and relayed messages held in memory at once; over it 503 and 452 4.3.1. */
  inFlightBytes: byteSize
    .pipe(
      z
        .number()
        .min(
          MIN_IN_FLIGHT_BYTES,
          `at least ${MIN_IN_FLIGHT_BYTES / 1024 ** 2}MiB, the largest request body: below it a large request would wait for ever under load`,
        ),
    )
    .default(256 * 1024 * 1024),
  /** The inbound MX of the return-path domains (bounces) and of receiving domains' routes; 0 = off. */
  inboundHost: z.string().min(1).default('0.0.0.0'),
  inboundPort: port.default(0),
  /** Messages a minute one client IP may hand the routes (decisions.md, "Receiving mail"). */
  inboundRatePerIp: z.coerce.number().int().min(1).max(1_000_000).default(120),
  /** Messages a minute one envelope sender may hand the routes. */
  inboundRatePerSender: z.coerce.number().int().min(1).max(1_000_000).default(60),
  tlsCert: z.string().optional(),
  tlsKey: z.string().optional(),
  publicUrl: z.url({ protocol: /^https?$/ }).optional(),
  hostname: z.string().min(1).optional(),
  dnsServers: z
    .string()
    .transform((s) =>
      s
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(/^(\[[0-9a-fA-F:]+\]|[0-9.]+|[0-9a-fA-F:]+)(:\d{1,5})?$/, 'host:port')))
    .optional(),
  // No default here: an admin command takes the port `svc serve` recorded (server-settings.ts).
  mxPort: port.optional(),
  relay: z.url({ protocol: /^smtps?$/ }).optional(),
  workers: z.coerce.number().int().min(1).max(256).optional(),
  allowInsecureWebhooks: bool.default(false),
  smtpTlsInsecure: bool.default(false),
  /** A PEM file of extra certificate authorities trusted for outbound TLS (MX hosts, MTA-STS policy hosts). */
  outboundCa: z.string().min(1).optional(),
  /**
   * A DNSSEC-validating resolver (host:port) whose AD bit svc trusts for DANE (RFC 7672).
   * Without it DANE is off, and svc says so once at start.
   */
  daneResolver: z
    .string()
    .regex(/^(\[[0-9a-fA-F:]+\]|[0-9.]+|[0-9a-fA-F:]+)(:\d{1,5})?$/, 'host:port')
    .optional(),
  /** Daily TLS reports (RFC 8460) to the `rua` of recipient domains' `_smtp._tls` records. */
  tlsReports: bool.default(false),
  /** The sender of TLS reports sent by mail: an address on a verified domain (its DKIM key signs them). */
  tlsReportsFrom: z.email().optional(),
  webhookRetrySchedule: schedule.default(['1m', '5m', '30m', '2h'].map(parseDuration)),
  deliveryRetrySchedule: schedule.default(['1m', '5m', '15m', '30m', '1h', '2h', '4h'].map(parseDuration)),
  deliveryMaxAge: duration.default(parseDuration('72h')),
  logLevel: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  logFormat: z.enum(['json', 'pretty']).optional(),
  /** Plan of organizations created without one. */
  defaultPlan: z.enum(['FREE', 'PAID', 'PREMIUM', 'UNLIMITED']).default('FREE'),
  /** Server-wide per-key request rate (requests/s), overriding the plan's. */
  rateLimitPerSecond: z.coerce.number().int().min(1).optional(),
  /** Onboarding trial domain (decisions.md, "Onboarding trial"). */
  sandboxDomain: z.string().min(1).optional(),
  /** Template render time limit. */
  templateTimeout: duration.default(parseDuration('1s')),
  /** How long a verified domain's DKIM or SPF record may fail before it becomes unverified. */
  domainGracePeriod: duration.default(parseDuration('72h')),
  /** How long a replaced DKIM key's record stays listed after svc switched to the new key. */
  dkimRotationGrace: duration.default(parseDuration('7d')),
  /** Rotate a domain's DKIM keys once its RSA key has signed this many months; `off` (0) never. */
  dkimRotateMonths: z.union([z.literal('off').transform(() => 0), z.coerce.number().int().min(0).max(120)]).default(0),
  /** Bodies and attachments of emails older than this are dropped; metadata and events stay. */
  bodyRetention: duration.pipe(z.number().min(600_000, 'at least 10m')).default(parseDuration('30d')),
  /**
   * Final emails older than this are deleted with their recipients and events, and webhook
   * attempt records with them; the hourly stats stay. `off` (0) keeps them forever.
   */
  emailRetention: z
    .union([z.literal('off').transform(() => 0), duration.pipe(z.number().min(600_000, 'at least 10m, or off'))])
    .default(parseDuration('90d')),
  /** Time between the server's checks of every domain's records. */
  domainCheckInterval: duration.pipe(z.number().min(1000, 'at least 1s')).default(parseDuration('1h')),
  /** SMTP transactions in flight at once per destination domain (Postfix's default_destination_concurrency_limit is 20). */
  deliveryConcurrency: z.coerce.number().int().min(1).max(1000).default(20),
  /** Time to connect to a recipient's MX host (or the relay) and get its greeting. */
  deliveryConnectTimeout: duration.default(parseDuration('30s')),
  /** Inactivity limit of an SMTP session once connected. */
  deliveryTimeout: duration.default(parseDuration('2m')),
  /**
   * How long a claim holds the recipients it sends to. Several nodes (PostgreSQL): those of a
   * node that died are sent by another once this has passed, so it must outlast a transaction.
   */
  deliveryLease: duration.pipe(z.number().min(1000, 'at least 1s')).default(parseDuration('10m')),
});

export type ConfigInput = z.input<typeof configSchema>;
export type Config = z.output<typeof configSchema>;

export function parseDuration(s: string): number {
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(s);
  if (!m) throw new Error(`not a duration: ${s}`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'ms' | 's' | 'm' | 'h' | 'd'];
  return Number(m[1]) * unit;
}

export function parseByteSize(s: string): number {
  const m = BYTE_SIZE.exec(s);
  if (!m) throw new Error(`not a size: ${s}`);
  return Number(m[1]) * (m[2] ? { KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 }[m[2] as 'KiB' | 'MiB' | 'GiB'] : 1);
}
