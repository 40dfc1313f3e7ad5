import { hostname as osHostname } from 'node:os';
import type { Db } from '../store/db.ts';
import type { Committer } from '../store/committer.ts';
import { normalizeHostname } from '../lib/dns.ts';
import type { Config } from './schema.ts';

/** What `svc serve` runs with that an admin command on the same store must agree with. */
export interface ServerSettings {
  /** EHLO name and the host that SPF and return-path records name. */
  hostname: string;
  /** The resolver of domain checks, MX lookups and webhook targets: host:port entries, or none for the system's. */
  dnsServers: string[];
  /** Webhook targets may use http:// and private or loopback addresses (`--allow-insecure-webhooks`). */
  allowInsecureWebhooks: boolean;
  /** The port of recipients' MX hosts (--mx-port): svc doctor's outbound check connects there. */
  mxPort: number;
  /** The host of the smarthost mail leaves through (--relay, never its credentials); null when sent direct. */
  relayHost: string | null;
}

/** The names of the rows, in the order settingRows writes them. */
export const SETTING_NAMES = ['hostname', 'dns_servers', 'allow_insecure_webhooks', 'mx_port', 'relay_host'] as const;

/** The `server_settings` rows of the settings (both stores): name and text value. */
export function settingRows(s: ServerSettings): [name: string, value: string][] {
  return [
    ['hostname', s.hostname],
    ['dns_servers', JSON.stringify(s.dnsServers)],
    ['allow_insecure_webhooks', String(s.allowInsecureWebhooks)],
    ['mx_port', String(s.mxPort)],
    ['relay_host', s.relayHost ?? ''],
  ];
}

/** The settings a server recorded, from the rows `value(name)` reads (both stores); absent when never recorded. */
export function settingsFromRows(value: (name: string) => string | undefined): Partial<ServerSettings> {
  const hostname = value('hostname');
  const dns = value('dns_servers');
  const insecure = value('allow_insecure_webhooks');
  const mxPort = value('mx_port');
  const relayHost = value('relay_host');
  return {
    ...(hostname === undefined ? {} : { hostname }),
    ...(dns === undefined ? {} : { dnsServers: JSON.parse(dns) as string[] }),
    ...(insecure === undefined ? {} : { allowInsecureWebhooks: insecure === 'true' }),
    ...(mxPort === undefined ? {} : { mxPort: Number(mxPort) }),
    ...(relayHost === undefined ? {} : { relayHost: relayHost === '' ? null : relayHost }),
  };
}

/** Settings `svc serve` records in the database so admin commands on the same data dir agree with it. */
export function createServerSettings(db: Db, tx: Committer) {
  const get = db.prepare<[string], { value: string }>('SELECT value FROM server_settings WHERE name = ?');
  const put = db.prepare(
    `INSERT INTO server_settings (name, value, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
     WHERE value <> excluded.value`,
  );
  return {
    /** What the server last ran with, as far as it ever ran on this data dir. */
    stored: (): Partial<ServerSettings> => settingsFromRows((name) => get.get(name)?.value),
    record: (s: ServerSettings, at: string) =>
      tx.write(() => {
        for (const [name, value] of settingRows(s)) put.run(name, value, at);
      }),
  };
}

/**
 * The host name a command works with: the one configured (flag, env, config
 * file); else, for admin commands, the one the server last ran with; else the
 * OS host name (cli.md: `--hostname`, default os hostname).
 */
export function resolveHostname(configured: string | undefined, stored: string | undefined): string {
  return normalizeHostname(configured ?? stored ?? osHostname());
}

/**
 * The settings an app works with (decisions.md, "Admin commands work as the server does").
 * `svc serve` runs with its own configuration, its host name and resolver filled in (so
 * nothing an earlier run recorded leaks in), and records it at start. An admin command
 * (`admin`) works as the server on the same store does, with no flag to repeat: the server's
 * webhook URL guard as recorded (a command can neither loosen nor tighten what the server
 * delivers to), and its host name and resolver unless the command is given its own (a
 * diagnostic, `svc domains verify --dns-servers`). Before any server ran, its own configuration.
 */
export function effectiveSettings(
  config: Pick<Config, 'hostname' | 'dnsServers' | 'allowInsecureWebhooks' | 'mxPort' | 'relay'>,
  stored: Partial<ServerSettings>,
  admin: boolean,
): ServerSettings {
  const own = <T>(value: T | undefined) => (admin ? value : undefined);
  return {
    hostname: resolveHostname(config.hostname, stored.hostname),
    dnsServers: config.dnsServers ?? stored.dnsServers ?? [],
    allowInsecureWebhooks: own(stored.allowInsecureWebhooks) ?? config.allowInsecureWebhooks,
    // svc doctor run beside the server checks the port and the path its mail takes, unless given its own.
    mxPort: config.mxPort ?? own(stored.mxPort) ?? DEFAULT_MX_PORT,
    relayHost: config.relay !== undefined ? new URL(config.relay).hostname : (own(stored.relayHost) ?? null),
  };
}

/** Recipients' MX hosts listen on port 25 (RFC 5321 §4.5.4.2 names no other). */
export const DEFAULT_MX_PORT = 25;
