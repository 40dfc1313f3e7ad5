import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import type { Db } from '../src/store/db.ts';

export interface SigningDomain {
  organizationId: string;
  projectId: string;
  name: string;
  selector: string;
  /** Defaults to a fresh RSA-2048 pair. */
  key?: { privateKey: KeyObject; publicKey: KeyObject };
  /** verified_at / created_at; defaults to now. */
  at?: string;
}

/**
 * Stores `name` as a VERIFIED domain of the organization with its DKIM key and
 * binds it to the project, as `svc domains add/verify/bind` would leave it.
 * Returns the public key (base64 DER) to publish at `<selector>._domainkey.<name>`.
 */
export function insertSigningDomain(db: Db, d: SigningDomain): string {
  const { publicKey, statements } = signingDomainRows(d);
  for (const [sql, params] of statements) db.prepare(sql).run(...params);
  return publicKey;
}

/**
 * The statements (with `?` placeholders) that store a signing domain, and its public key:
 * for either store (test/harness.ts's `env.query` runs them on PostgreSQL).
 */
export function signingDomainRows(d: SigningDomain): { publicKey: string; statements: [string, unknown[]][] } {
  const { privateKey, publicKey } = d.key ?? generateKeyPairSync('rsa', { modulusLength: 2048 });
  const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  const at = d.at ?? new Date().toISOString();
  const id = randomUUID();
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return {
    publicKey: p,
    statements: [
      [
        `INSERT INTO domains (id, organization_id, name, status, dkim_selector, dkim_private_key, dkim_public_key, verified_at, created_at)
         VALUES (?, ?, ?, 'VERIFIED', ?, ?, ?, ?, ?)`,
        [id, d.organizationId, d.name, d.selector, pem, p, at, at],
      ],
      ['INSERT INTO project_domains (project_id, domain_id, created_at) VALUES (?, ?, ?)', [d.projectId, id, at]],
    ],
  };
}
