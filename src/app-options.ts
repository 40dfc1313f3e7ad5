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

/** The delivery engine's options: its workers' settings, threads, retry policy and throttle. */
export function deliveryOptions(config: Config, { hostname, mxPort }: ServerSettings) {
  const threads = config.workers ?? Math.max(1, cpus().length);
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
    perThread: 16,
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
