import type { PgPool } from '../store/pg.ts';
import type { PgCommitter } from '../store/pg-committer.ts';
import type { ServerSettings } from './server-settings.ts';

/** The settings `svc serve` records (server-settings.ts), on PostgreSQL: every node and admin command agree. */
export function createPgServerSettings(pool: PgPool, tx: PgCommitter) {
  const put = `INSERT INTO server_settings (name, value, updated_at) VALUES ($1, $2, $3)
               ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
               WHERE server_settings.value <> excluded.value`;
  return {
    /** What a server last ran with. */
    async stored(): Promise<Partial<ServerSettings>> {
      const rows = await pool.query<{ name: string; value: string }>(
        "SELECT name, value FROM server_settings WHERE name IN ('hostname', 'dns_servers')",
      );
      const by = new Map(rows.rows.map((r) => [r.name, r.value]));
      const hostname = by.get('hostname');
      const dns = by.get('dns_servers');
      return {
        ...(hostname === undefined ? {} : { hostname }),
        ...(dns === undefined ? {} : { dnsServers: JSON.parse(dns) as string[] }),
      };
    },
    record: (s: ServerSettings, at: string) =>
      tx.write(async (t) => {
        await t.query(put, ['hostname', s.hostname, at]);
        await t.query(put, ['dns_servers', JSON.stringify(s.dnsServers), at]);
      }),
  };
}
