import { generateKeyPairSync } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import type { DnsPeer } from './peers/dns.ts';
import { count, type TestEnv } from './harness.ts';
import { sleep } from '../src/lib/sleep.ts';

export const SELECTOR = 'svc202603';

/** A verified sending domain with a DKIM key, bound to the env's project, its key published in `dns`. */
export function addSigningDomain(env: TestEnv, dns: DnsPeer, domain: string): void {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  const now = new Date(env.clock.now()).toISOString();
  const id = crypto.randomUUID();
  env.app.db
    .prepare(
      `INSERT INTO domains (id, organization_id, name, status, dkim_selector, dkim_private_key, dkim_public_key, verified_at, created_at)
       VALUES (?, ?, ?, 'VERIFIED', ?, ?, ?, ?, ?)`,
    )
    .run(id, env.init.organization_id, domain, SELECTOR, pem, p, now, now);
  env.app.db.prepare('INSERT INTO project_domains (project_id, domain_id, created_at) VALUES (?, ?, ?)').run(env.init.project_id, id, now);
  dns.set(`${SELECTOR}._domainkey.${domain}`, { TXT: [`v=DKIM1; k=rsa; p=${p}`] });
}

/** Verifies the DKIM signature of a delivered message with an independent verifier (mailauth) against `dns`. */
export async function verifyDkim(raw: Buffer, dns: DnsPeer): Promise<{ status: string; domain: string; selector: string }> {
  const r = new Resolver();
  r.setServers([dns.server]);
  const result = await dkimVerify(raw, { resolver: (name: string, rr: string) => r.resolve(name, rr as 'TXT') });
  const s = result.results[0];
  return { status: s?.status?.result ?? 'none', domain: s?.signingDomain ?? '', selector: s?.selector ?? '' };
}

const PENDING = "status IN ('QUEUED', 'SENDING') AND (lease_until IS NOT NULL OR next_attempt_at <= ?)";

/**
 * Lets the engine work through everything due now: pokes it and waits (real
 * sockets, bounded) until no recipient is leased or due.
 */
export async function settle(env: TestEnv): Promise<void> {
  const engine = env.app.delivery();
  for (let i = 0; i < 400; i++) {
    await engine.poke();
    const now = new Date(env.clock.now()).toISOString();
    if (engine.inflightCount() === 0 && count(env, 'recipients', PENDING, now) === 0) return;
    await sleep(25);
  }
  throw new Error('delivery did not settle within 10 s');
}
