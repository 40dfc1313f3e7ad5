import { pino } from 'pino';
import type { Domain } from '../src/domains/index.ts';
import type { Logger } from '../src/lib/logger.ts';
import { createTestEnv, type TestEnv } from './harness.ts';
import { startDnsServer, type DnsServer } from './peers/dns.ts';

/** The server host name the tests configure: SPF and the return-path MX name it. */
export const HOST = 'mx.svc.test';
export const HOST_IPV4 = '192.0.2.7';

export interface DomainsEnv {
  env: TestEnv;
  dns: DnsServer;
  close(): Promise<void>;
}

/** A test env whose resolver is a loopback DNS server that knows our host's address. */
export async function createDomainsEnv(
  plan: 'FREE' | 'PAID' | 'PREMIUM' | 'UNLIMITED' = 'FREE',
  settings: Record<string, string> = {},
  logger?: Logger,
): Promise<DomainsEnv> {
  const dns = await startDnsServer();
  dns.set(HOST, { A: [HOST_IPV4] });
  const env = await createTestEnv(
    { dnsServers: dns.server, hostname: HOST, ...settings },
    plan,
    logger ? { logger } : {},
  );
  return {
    env,
    dns,
    async close() {
      await env.close();
      await dns.close();
    },
  };
}

const record = (d: Domain, purpose: string) => d.records.find((r) => r.purpose === purpose)!;

/** Publishes every record `add` asked for, as the domain's owner would. */
export function publish(dns: DnsServer, d: Domain): void {
  dns.merge(record(d, 'spf').name, { TXT: [record(d, 'spf').value] });
  dns.set(record(d, 'dkim').name, { TXT: [record(d, 'dkim').value] });
  const [priority, exchange] = record(d, 'return-path').value.split(' ');
  dns.merge(record(d, 'return-path').name, { MX: [{ priority: Number(priority), exchange: exchange! }] });
  dns.set(record(d, 'dmarc').name, { TXT: [record(d, 'dmarc').value] });
}

export const checkOf = (d: Domain, purpose: string) => d.checks.find((c) => c.purpose === purpose)!;

/** A logger whose entries land in `lines` ({level, msg, ...fields}). */
export function captureLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'debug', base: null }, { write: (s: string) => lines.push(JSON.parse(s)) });
  return { logger, lines };
}
