import type { PgPool } from '../store/pg.ts';
import type { PgCommitter } from '../store/pg-committer.ts';
import { SETTING_NAMES, settingRows, settingsFromRows, type ServerSettings } from './server-settings.ts';

/** The settings `svc serve` records (server-settings.ts), on PostgreSQL: every node and admin command agree. */
export function createPgServerSettings(pool: PgPool, tx: PgCommitter) {
  const put = `INSERT INTO server_settings (name, value, updated_at) VALUES ($1, $2, $3)
               ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
               WHERE server_settings.value <> excluded.value`;
  return {
    /** What a server last ran with. */
    async stored(): Promise<Partial<ServerSettings>> {
      const rows = await pool.query<{ name: string; value: string }>(
        'SELECT name, value FROM server_settings WHERE name = ANY($1)',
        [SETTING_NAMES],
      );
      const by = new Map(rows.rows.map((r) => [r.name, r.value]));
      return settingsFromRows((name) => by.get(name));
    },
    record: (s: ServerSettings, at: string) =>
      tx.write(async (t) => {
        for (const [name, value] of settingRows(s)) await t.query(put, [name, value, at]);
      }),
  };
}
