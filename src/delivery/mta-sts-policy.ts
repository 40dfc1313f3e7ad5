// MTA-STS (RFC 8461) as pure rules: the TXT record, the policy file, and what a policy asks of
// one delivery attempt. No I/O here: mta-sts.ts discovers, fetches and caches; the delivery
// attempt (and later both stores' reports) call these.

export type StsMode = 'enforce' | 'testing' | 'none';

export interface StsPolicy {
  mode: StsMode;
  /** MX patterns, lower case: a name, or `*.` and a name (one leftmost label). */
  mx: string[];
  /** Seconds the policy may be cached, at most MAX_AGE_LIMIT. */
  maxAge: number;
}

/** RFC 8461 section 3.2: max_age is at most 31557600 seconds (about a year). */
export const MAX_AGE_LIMIT = 31_557_600;

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

/**
 * The policy id of `_mta-sts.<domain>`'s TXT answer (each record's strings already joined).
 * Records not starting with `v=STSv1` are not ours; more than one of ours is no record (3.1).
 */
export function parseStsRecord(records: string[]): Parsed<{ id: string }> {
  const ours = records.filter((r) => /^v=STSv1\s*(;|$)/.test(r));
  if (ours.length === 0) return { ok: false, reason: 'no v=STSv1 record' };
  if (ours.length > 1) return { ok: false, reason: 'more than one v=STSv1 record' };
  const fields = ours[0]!.split(';').map((f) => f.trim());
  const id = fields.find((f) => f.startsWith('id='))?.slice(3);
  if (id === undefined || !/^[A-Za-z0-9]{1,32}$/.test(id)) return { ok: false, reason: 'no valid id in the record' };
  return { ok: true, value: { id } };
}

/** Key-value lines (CRLF, or LF as servers often write them); a key repeated keeps its first value, except mx. */
function fieldsOf(text: string): Map<string, string[]> {
  const fields = new Map<string, string[]>();
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const key = line.slice(0, colon).trim();
    fields.set(key, [...(fields.get(key) ?? []), line.slice(colon + 1).trim()]);
  }
  return fields;
}

/** The policy file (3.2): version STSv1, a mode, max_age, and mx patterns unless the mode is none. */
export function parsePolicy(text: string): Parsed<StsPolicy> {
  const fields = fieldsOf(text);
  if (fields.get('version')?.[0] !== 'STSv1') return { ok: false, reason: 'policy version is not STSv1' };
  const mode = fields.get('mode')?.[0];
  if (mode !== 'enforce' && mode !== 'testing' && mode !== 'none') {
    return { ok: false, reason: `policy mode "${mode ?? ''}" is not enforce, testing or none` };
  }
  const age = fields.get('max_age')?.[0] ?? '';
  if (!/^\d{1,10}$/.test(age)) return { ok: false, reason: 'policy max_age is not a number of seconds' };
  const mx = (fields.get('mx') ?? []).map((p) => p.toLowerCase().replace(/\.$/, ''));
  if (mx.some((p) => !/^(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(p)))
    return { ok: false, reason: 'policy has a malformed mx' };
  if (mode !== 'none' && mx.length === 0) return { ok: false, reason: 'policy names no mx' };
  // Past the limit is read as the limit: the sender caches no longer than the RFC allows.
  return { ok: true, value: { mode, mx, maxAge: Math.min(Number(age), MAX_AGE_LIMIT) } };
}

/** Whether `host` matches a pattern: exactly, or `*.` standing for one leftmost label (4.1). */
export function mxMatches(pattern: string, host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (!pattern.startsWith('*.')) return name === pattern;
  const dot = name.indexOf('.');
  return dot > 0 && name.slice(dot + 1) === pattern.slice(2);
}

/** What a policy asks of one attempt to an MX host. */
export interface MxVerdict {
  /** false: do not connect; defer the attempt with `reason` (never bounce). */
  allowed: boolean;
  /** The session must use STARTTLS with a certificate valid for the MX host name, or be deferred. */
  requireTls: boolean;
  /** Why it was refused (the deferral reply), or what testing mode reports. */
  reason?: string;
}

/**
 * Applies a domain's policy (or none) to an MX host (5): enforce allows only named hosts and
 * requires verified TLS; testing delivers regardless and reports what enforce would refuse;
 * none, or no policy, asks nothing.
 */
export function judgeMx(domain: string, policy: StsPolicy | undefined, host: string): MxVerdict {
  if (!policy || policy.mode === 'none') return { allowed: true, requireTls: false };
  const named = policy.mx.some((p) => mxMatches(p, host));
  const reason = named
    ? undefined
    : `MTA-STS policy of ${domain} (${policy.mode}) does not name MX ${host} (allowed: ${policy.mx.join(', ')})`;
  if (policy.mode === 'testing') return { allowed: true, requireTls: false, ...(reason ? { reason } : {}) };
  return { allowed: named, requireTls: true, ...(reason ? { reason } : {}) };
}

/** The deferral reply when an enforce attempt gets no valid TLS (no STARTTLS, or a bad certificate). */
export function tlsRequiredReason(domain: string, host: string, problem: string): string {
  return `MTA-STS policy of ${domain} (enforce) requires TLS with a valid certificate for ${host}: ${problem}`;
}
