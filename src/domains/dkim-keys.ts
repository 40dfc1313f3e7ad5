import { iso } from '../lib/clock.ts';
import { selectorFor } from './records.ts';

/**
 * A domain's DKIM keys over time, and the one set of rules both stores follow: which
 * keys sign, when a rotation's new key takes over, when the old one retires. Pure:
 * the time comes in as `now`, and each store only saves the rows a plan returns.
 */

export type DkimAlgorithm = 'rsa' | 'ed25519';

/**
 * pending: made by a rotation (or Ed25519 turned on), its record not yet seen: it does not sign.
 * active: signs. retiring: replaced, its record still listed until `retire_after`.
 * retired: no longer listed as needed; its record may be removed.
 */
export type DkimKeyState = 'pending' | 'active' | 'retiring' | 'retired';

export interface DkimKeyRow {
  id: string;
  domain_id: string;
  selector: string;
  algorithm: DkimAlgorithm;
  /** PKCS#8 PEM. */
  private_key: string;
  /** The p= tag: base64 SPKI DER (RSA), base64 of the raw 32-byte key (Ed25519, RFC 8463). */
  public_key: string;
  state: DkimKeyState;
  created_at: string;
  activated_at: string | null;
  retire_after: string | null;
}

/** What a domain row says of its key: the dkim_* columns name its active RSA key. */
export interface DomainKeyColumns {
  id: string;
  dkim_selector: string | null;
  dkim_private_key: string | null;
  dkim_public_key: string | null;
  created_at: string;
  verified_at: string | null;
}

/** A new key before it is a row: what records.ts's generateDkimKey makes. */
export interface FreshKey {
  id: string;
  algorithm: DkimAlgorithm;
  privateKeyPem: string;
  publicKeyB64: string;
}

/** One audited and logged step of a plan. */
export interface KeyStep {
  action: 'dkim_rotation_started' | 'dkim_key_activated' | 'dkim_key_retiring' | 'dkim_key_retired';
  key: DkimKeyRow;
  /** The key an activated key replaces (now retiring), when there was one. */
  replaces?: DkimKeyRow;
}

/** What a store saves: rows to insert or update (by id), the steps to audit, and the domain's active RSA key. */
export interface KeyPlan {
  save: DkimKeyRow[];
  steps: KeyStep[];
  /** Set when the active RSA key changed: the domain's dkim_* columns follow it. */
  activeRsa?: DkimKeyRow;
}

const ORDER: Record<DkimAlgorithm, number> = { rsa: 0, ed25519: 1 };
const byAlgorithm = (a: DkimKeyRow, b: DkimKeyRow) => ORDER[a.algorithm] - ORDER[b.algorithm];

/**
 * A domain's keys: its stored rows and, for a domain whose signing key was never stored
 * (a row inserted directly), its dkim_* columns as its active RSA key under the domain's
 * id, as migration 0020 stores them. The columns stay its key while a first rotation's
 * key is pending: that key alone is no reason to stop signing.
 */
export function keysOf(domain: DomainKeyColumns, rows: DkimKeyRow[]): DkimKeyRow[] {
  const storedRsa = rows.some((k) => k.algorithm === 'rsa' && k.state === 'active');
  if (storedRsa || !domain.dkim_selector || !domain.dkim_private_key || !domain.dkim_public_key) return rows;
  const legacy: DkimKeyRow = {
    id: domain.id,
    domain_id: domain.id,
    selector: domain.dkim_selector,
    algorithm: 'rsa',
    private_key: domain.dkim_private_key,
    public_key: domain.dkim_public_key,
    state: 'active',
    created_at: domain.created_at,
    activated_at: domain.verified_at ?? domain.created_at,
    retire_after: null,
  };
  return [legacy, ...rows];
}

/** A key's place in its life, for keys made in the same millisecond. */
const LIFE: Record<DkimKeyState, number> = { retired: 0, retiring: 1, active: 2, pending: 3 };

/** Keys as a domain shows them: RSA's first, each algorithm's oldest first (then by their place in life). */
export const shownKeys = (keys: DkimKeyRow[]): DkimKeyRow[] =>
  [...keys].sort(
    (a, b) => byAlgorithm(a, b) || a.created_at.localeCompare(b.created_at) || LIFE[a.state] - LIFE[b.state],
  );

/** The keys that sign now, RSA first: the active ones. */
export const signingKeys = (keys: DkimKeyRow[]): DkimKeyRow[] =>
  keys.filter((k) => k.state === 'active').sort(byAlgorithm);

/** A rotation is under way while a key (of `algorithms`, when given) waits for its record to be seen. */
export const rotationPending = (keys: DkimKeyRow[], algorithms?: DkimAlgorithm[]): boolean =>
  keys.some((k) => k.state === 'pending' && (algorithms === undefined || algorithms.includes(k.algorithm)));

/**
 * The keys whose records a domain lists: pending, active and retiring keys, and the latest
 * retired key of each algorithm (its record can be removed), in shownKeys' order.
 */
export function listedKeys(keys: DkimKeyRow[]): DkimKeyRow[] {
  const live = keys.filter((k) => k.state !== 'retired');
  const retired = (['rsa', 'ed25519'] as const).flatMap((a) =>
    keys
      .filter((k) => k.state === 'retired' && k.algorithm === a)
      .sort((x, y) => (y.retire_after ?? '').localeCompare(x.retire_after ?? ''))
      .slice(0, 1),
  );
  return shownKeys([...live, ...retired]);
}

/**
 * A selector not taken by the domain's keys: svc<yyyymm> for RSA, svc<yyyymm>ed for
 * Ed25519, with -2, -3… when a rotation this month already took it.
 */
export function uniqueSelector(nowMs: number, algorithm: DkimAlgorithm, taken: string[]): string {
  const base = selectorFor(nowMs) + (algorithm === 'ed25519' ? 'ed' : '');
  if (!taken.includes(base)) return base;
  let n = 2;
  while (taken.includes(`${base}-${n}`)) n++;
  return `${base}-${n}`;
}

function pendingRow(domainId: string, fresh: FreshKey, selector: string, nowMs: number): DkimKeyRow {
  return {
    id: fresh.id,
    domain_id: domainId,
    selector,
    algorithm: fresh.algorithm,
    private_key: fresh.privateKeyPem,
    public_key: fresh.publicKeyB64,
    state: 'pending',
    created_at: iso(nowMs),
    activated_at: null,
    retire_after: null,
  };
}

/** The algorithms a rotation renews: those the domain signs with, RSA always. */
export function rotatedAlgorithms(keys: DkimKeyRow[]): DkimAlgorithm[] {
  const signing = new Set<DkimAlgorithm>(['rsa', ...signingKeys(keys).map((k) => k.algorithm)]);
  return (['rsa', 'ed25519'] as const).filter((a) => signing.has(a));
}

/**
 * Adds `fresh` keys as pending, each under a new selector: they sign only once their
 * records are seen (afterCheck). The caller refuses a domain with a pending key first.
 */
export function addPendingKeys(domainId: string, keys: DkimKeyRow[], fresh: FreshKey[], nowMs: number): KeyPlan {
  const taken = keys.map((k) => k.selector);
  const save = fresh.map((f) => {
    const row = pendingRow(domainId, f, uniqueSelector(nowMs, f.algorithm, taken), nowMs);
    taken.push(row.selector);
    return row;
  });
  return { save, steps: save.map((key) => ({ action: 'dkim_rotation_started', key })) };
}

/**
 * After a check of the records: a pending key whose record was seen with its public key
 * becomes active, and the active key of its algorithm starts retiring for `graceMs`; a
 * retiring key whose time is up retires. `seen` says whether a key's record matched.
 */
export function afterCheck(
  keys: DkimKeyRow[],
  seen: (k: DkimKeyRow) => boolean,
  nowMs: number,
  graceMs: number,
): KeyPlan {
  const plan: KeyPlan = { save: [], steps: [] };
  const at = iso(nowMs);
  for (const key of keys.filter((k) => k.state === 'pending' && seen(k))) {
    const active: DkimKeyRow = { ...key, state: 'active', activated_at: at };
    const old = keys.find((k) => k.state === 'active' && k.algorithm === key.algorithm);
    const retiring = old && { ...old, state: 'retiring' as const, retire_after: iso(nowMs + graceMs) };
    plan.save.push(active, ...(retiring ? [retiring] : []));
    plan.steps.push({ action: 'dkim_key_activated', key: active, ...(retiring ? { replaces: retiring } : {}) });
    if (key.algorithm === 'rsa') plan.activeRsa = active;
  }
  for (const key of keys.filter((k) => k.state === 'retiring' && Date.parse(k.retire_after!) <= nowMs)) {
    const retired: DkimKeyRow = { ...key, state: 'retired' };
    plan.save.push(retired);
    plan.steps.push({ action: 'dkim_key_retired', key: retired });
  }
  return plan;
}

/**
 * Stops signing with `algorithm` (Ed25519 turned off): its active key starts retiring for
 * `graceMs`, a pending one retires at once. RSA always signs: never asked for it.
 */
export function stopAlgorithm(keys: DkimKeyRow[], algorithm: DkimAlgorithm, nowMs: number, graceMs: number): KeyPlan {
  const plan: KeyPlan = { save: [], steps: [] };
  for (const key of keys.filter((k) => k.algorithm === algorithm)) {
    if (key.state === 'active') {
      const retiring: DkimKeyRow = { ...key, state: 'retiring', retire_after: iso(nowMs + graceMs) };
      plan.save.push(retiring);
      plan.steps.push({ action: 'dkim_key_retiring', key: retiring });
    } else if (key.state === 'pending') {
      const retired: DkimKeyRow = { ...key, state: 'retired', retire_after: iso(nowMs) };
      plan.save.push(retired);
      plan.steps.push({ action: 'dkim_key_retired', key: retired });
    }
  }
  return plan;
}

/** The first instant `months` calendar months (UTC) after `fromMs`. */
export function addMonths(fromMs: number, months: number): number {
  const d = new Date(fromMs);
  d.setUTCMonth(d.getUTCMonth() + months);
  return d.getTime();
}

/**
 * Whether automatic rotation (every `months` months; 0 is off) starts a rotation now:
 * the active RSA key has signed for that long and no rotation is under way.
 */
export function rotationDue(keys: DkimKeyRow[], nowMs: number, months: number): boolean {
  if (months <= 0 || rotationPending(keys)) return false;
  const rsa = signingKeys(keys).find((k) => k.algorithm === 'rsa');
  if (!rsa) return false;
  return addMonths(Date.parse(rsa.activated_at ?? rsa.created_at), months) <= nowMs;
}
