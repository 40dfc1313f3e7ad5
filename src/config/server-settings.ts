import { hostname as osHostname } from 'node:os';
import type { Db } from '../store/db.ts';
import type { Committer } from '../store/committer.ts';
import { normalizeHostname } from '../domains/records.ts';

/** What `svc serve` runs with that an admin command on the same data dir must agree with. */
export interface ServerSettings {
  /** EHLO name and the host that SPF and return-path records name. */
  hostname: string;
  /** The resolver of domain checks and MX lookups: host:port entries, or none for the system's. */
  dnsServers: string[];
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
    stored(): Partial<ServerSettings> {
      const hostname = get.get('hostname')?.value;
      const dns = get.get('dns_servers')?.value;
      return {
        ...(hostname === undefined ? {} : { hostname }),
        ...(dns === undefined ? {} : { dnsServers: JSON.parse(dns) as string[] }),
      };
    },
    record: (s: ServerSettings, at: string) =>
      tx.write(() => {
        put.run('hostname', s.hostname, at);
        put.run('dns_servers', JSON.stringify(s.dnsServers), at);
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
