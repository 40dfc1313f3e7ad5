// What the app's parts are built with, derived from the configuration and the server's
// settings: the template render pool, the base URL of links, the delivery engine's options.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { ConfigError, type Config, type ServerSettings } from './config/index.ts';
import { LIMITS } from './limits/index.ts';
import { createLazyRenderer, type Renderer } from './templates/index.ts';

/** The template render pool: started on first use, so admin commands never spawn threads. */
export function makeRenderer(config: Config): Renderer {
  return createLazyRenderer({
    timeoutMs: config.templateTimeout,
    maxOutputBytes: LIMITS.renderOutputBytes,
    maxThreads: config.workers ?? Math.max(1, cpus().length),
  });
}

/** Base URL of links in emails (cli.md `--public-url`); by default the server's own listen address. */
export function publicUrlOf(config: Config): string {
  if (config.publicUrl) return config.publicUrl;
  const host = config.httpHost.includes(':') ? `[${config.httpHost}]` : config.httpHost;
  return `${config.tlsCert && config.tlsKey ? 'https' : 'http'}://${host}:${config.httpPort}`;
}

/** The PEM certificate authorities of `--outbound-ca`, read once; a file that is not one is refused. */
export function outboundCaOf(config: Pick<Config, 'outboundCa'>): string[] | undefined {
  if (!config.outboundCa) return undefined;
  let pem: string;
  try {
    pem = readFileSync(config.outboundCa, 'utf8');
  } catch (e) {
    throw new ConfigError(`invalid setting --outbound-ca: cannot read ${config.outboundCa} (${(e as Error).message})`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----'))
    throw new ConfigError(`invalid setting --outbound-ca: ${config.outboundCa} holds no PEM certificate`);
  return [pem];
}

/**
 * Delivery worker threads when `--workers` is not given: one core is left to the main thread,
 * which accepts and records every outcome. On 2 cores, 1 worker delivered as fast as 2 or
 * faster (482–582 against 452–536 emails/s), took ~50 MB less RSS (283–285 against 333–338)
 * and let the API accept the same burst in 8–11 s instead of 14–17 (docs/performance.md,
 * "Hot paths again"). The transactions in flight stay 16 per CPU, spread over the threads:
 * a remote MX's latency, not the CPU, bounds them.
 */
export function deliveryThreads(config: Pick<Config, 'workers'>, cpuCount = cpus().length) {
  const cores = Math.max(1, cpuCount);
  if (config.workers) return { threads: config.workers, perThread: 16 };
  const threads = Math.max(1, cores - 1);
  return { threads, perThread: Math.ceil((16 * cores) / threads) };
}

/** The delivery engine's options: its workers' settings, threads, retry policy and throttle. */
export function deliveryOptions(config: Config, { hostname, mxPort }: ServerSettings) {
  const { threads, perThread } = deliveryThreads(config);
  return {
    worker: {
      hostname,
      mxPort,
      dnsServers: config.dnsServers ?? null,
      relay: config.relay ?? null,
      tlsInsecure: config.smtpTlsInsecure,
      ca: outboundCaOf(config) ?? [],
      daneResolver: config.relay ? null : (config.daneResolver ?? null),
      connectTimeoutMs: config.deliveryConnectTimeout,
      socketTimeoutMs: config.deliveryTimeout,
    },
    threads,
    perThread,
    leaseMs: config.deliveryLease,
    tickMs: 250,
    policy: { schedule: config.deliveryRetrySchedule, maxAgeMs: config.deliveryMaxAge },
    throttle: {
      maxConcurrency: config.deliveryConcurrency,
      basePauseMs: 30_000,
      maxPauseMs: 15 * 60_000,
      recoverAfter: 20,
    },
  };
}
