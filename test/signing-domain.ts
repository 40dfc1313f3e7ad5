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
  const { privateKey, publicKey } = d.key ?? generateKeyPairSync('rsa', { modulusLength: 2048 });
  const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  const at = d.at ?? new Date().toISOString();
  const id = randomUUID();
  db.prepare(
    `INSERT INTO domains (id, organization_id, name, status, dkim_selector, dkim_private_key, dkim_public_key, verified_at, created_at)
     VALUES (?, ?, ?, 'VERIFIED', ?, ?, ?, ?, ?)`,
  ).run(id, d.organizationId, d.name, d.selector, privateKey.export({ type: 'pkcs8', format: 'pem' }), p, at, at);
  db.prepare('INSERT INTO project_domains (project_id, domain_id, created_at) VALUES (?, ?, ?)').run(
    d.projectId,
    id,
    at,
  );
  return p;
}
