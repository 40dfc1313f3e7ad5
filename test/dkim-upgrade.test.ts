import Database from 'better-sqlite3';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config/load.ts';
import { FakeClock } from '../src/lib/clock.ts';
import { loadMigrations } from '../src/store/db.ts';

/**
 * Migration 0020 (issue 28 item 5): a data dir made before DKIM keys rotate keeps signing
 * with the key it had, which becomes the domain's active RSA key.
 */
const dir = mkdtempSync(join(tmpdir(), 'svc-dkim-upgrade-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('upgrading a version 19 data dir', () => {
  it('makes each domain key the active RSA key of domain_dkim_keys, and signs with it', async () => {
    const v19 = new Database(join(dir, 'svc.sqlite'));
    v19.pragma('journal_mode = WAL');
    for (const m of loadMigrations().filter((m) => m.version <= 19)) v19.exec(m.sql);
    v19.pragma('user_version = 19');
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    const at = '2026-01-10T00:00:00.000Z';
    v19.prepare(`INSERT INTO organizations (id, name, plan, created_at) VALUES ('o1', 'Old', 'UNLIMITED', ?)`).run(at);
    const domain = v19.prepare(
      `INSERT INTO domains (id, organization_id, name, status, dkim_selector, dkim_private_key, dkim_public_key,
         verified_at, created_at) VALUES (?, 'o1', ?, ?, ?, ?, ?, ?, ?)`,
    );
    domain.run('d1', 'old.test', 'VERIFIED', 'svc202601', pem, p, at, at);
    domain.run('d2', 'nokey.test', 'PENDING', null, null, null, null, at);
    v19.close();

    const app = await createApp(loadConfig({ flags: { dataDir: dir } }), { clock: new FakeClock(at) });
    try {
      expect(app.db.prepare('SELECT * FROM domain_dkim_keys').all()).toEqual([
        {
          id: 'd1',
          domain_id: 'd1',
          selector: 'svc202601',
          algorithm: 'rsa',
          private_key: pem,
          public_key: p,
          state: 'active',
          created_at: at,
          activated_at: at,
          retire_after: null,
        },
      ]);
      expect(await app.domains.getSigningKey('old.test')).toEqual({
        domain: 'old.test',
        selector: 'svc202601',
        privateKeyPem: pem,
      });
      const shown = await app.domains.getDomain('old.test');
      expect(shown.records[0]).toMatchObject({ name: 'svc202601._domainkey.old.test', purpose: 'dkim' });
      expect(shown.records[0]!.value).toContain(p);
    } finally {
      await app.close();
    }
  });
});
