import { hostname as osHostname } from 'node:os';
import type { Db } from '../store/db.ts';
import type { Committer } from '../store/committer.ts';
import { normalizeHostname } from '../domains/records.ts';

/** Settings `svc serve` records in the database so admin commands on the same data dir agree with it. */
export function createServerSettings(db: Db, tx: Committer) {
  const get = db.prepare<[string], { value: string }>('SELECT value FROM server_settings WHERE name = ?');
  const put = db.prepare(
    `INSERT INTO server_settings (name, value, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
     WHERE value <> excluded.value`,
  );
  return {
    /** The host name the server last ran with, if it ever ran on this data dir. */
    storedHostname: (): string | undefined => get.get('hostname')?.value,
    recordHostname: (name: string, at: string) => tx.write(() => void put.run('hostname', name, at)),
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
