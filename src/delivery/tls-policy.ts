// What a destination's TLS policy asks of each MX host of one delivery attempt, and how the
// attempt fared against it (the TLS outcomes that TLS reporting counts). Pure: transmit.ts
// connects; the MTA-STS rules themselves are in mta-sts-policy.ts.
import { judgeMx, tlsRequiredReason } from './mta-sts-policy.ts';
import type { TlsaRecord } from './dnssec-resolver.ts';
import type { DeliveryJob, JobSts, TlsOutcome, TlsResultType } from './job.ts';

/**
 * How a session to one MX host must be secured: `opportunistic` uses STARTTLS when offered
 * (the certificate checked unless the operator set smtp-tls-insecure); `verified` requires
 * STARTTLS with a certificate valid for the host name by the WebPKI, whatever that setting
 * says (RFC 8461 section 4.2); `encrypted` requires STARTTLS and checks no certificate (a
 * secure TLSA RRset with no usable record, RFC 7672 2.2); `dane` requires STARTTLS and a chain
 * that matches the host's TLSA records (RFC 7672 3), the dates checked at `at`.
 */
export type TlsRequirement =
  'opportunistic' | 'verified' | 'encrypted' | { kind: 'dane'; records: TlsaRecord[]; names: string[]; at: number };

export interface HostPlan {
  host: string;
  tls: TlsRequirement;
  /** The policy this host's outcomes are reported under, when not the job's. */
  base?: OutcomeBase;
}

export interface AttemptPlan {
  /** Hosts that may be tried, in preference order. */
  hosts: HostPlan[];
  /** Outcomes of hosts the policy refused without a connection (reported as failures). */
  refused: TlsOutcome[];
  /** Why no host may be tried: the attempt is deferred with this reason. */
  deferral: string | null;
}

/** RFC 8460 section 4.2: an STS policy-string is the policy's lines. */
export function stsPolicyString(p: NonNullable<JobSts['policy']>): string[] {
  return ['version: STSv1', `mode: ${p.mode}`, ...p.mx.map((m) => `mx: ${m}`), `max_age: ${p.max_age}`];
}

export type OutcomeBase = Pick<TlsOutcome, 'policy_type' | 'policy_string' | 'policy_domain' | 'sts_mode'>;
type Base = OutcomeBase;

/** The policy part of every outcome of this job. */
export function outcomeBase(job: Pick<DeliveryJob, 'destination' | 'sts'>): Base {
  const p = job.sts?.policy;
  if (!p || p.mode === 'none')
    return { policy_type: 'no-policy-found', policy_string: [], policy_domain: job.destination, sts_mode: null };
  return { policy_type: 'sts', policy_string: stsPolicyString(p), policy_domain: job.destination, sts_mode: p.mode };
}

export function outcome(
  base: Base,
  host: string | null,
  ip: string | null,
  result: TlsResultType,
  reason: string | null,
): TlsOutcome {
  return { ...base, mx_host: host, receiving_ip: ip, result, failure_reason: reason };
}

/**
 * The hosts an attempt may try and how (RFC 8461 section 5): under `enforce` only the hosts
 * the policy names, each over verified TLS; under `testing` every host as usual, with the ones
 * enforce would refuse reported. A destination that publishes a policy it could not be fetched
 * (and none cached) is delivered as usual, reported as a fetch error (section 5: fail open).
 */
export function planAttempt(job: Pick<DeliveryJob, 'destination' | 'sts'>, hosts: string[]): AttemptPlan {
  const base = outcomeBase(job);
  const policy = job.sts?.policy;
  const refused: TlsOutcome[] = [];
  if (!policy || policy.mode === 'none') {
    if (job.sts?.published && job.sts.problem) {
      refused.push(
        outcome(
          { ...base, policy_type: 'sts' },
          null,
          null,
          /malformed|not STSv1|mode|max_age|names no mx/.test(job.sts.problem)
            ? 'sts-policy-invalid'
            : 'sts-policy-fetch-error',
          job.sts.problem,
        ),
      );
    }
    return { hosts: hosts.map((host) => ({ host, tls: 'opportunistic' })), refused, deferral: null };
  }
  const stsPolicy = { mode: policy.mode, mx: policy.mx, maxAge: policy.max_age };
  const allowed: HostPlan[] = [];
  for (const host of hosts) {
    const v = judgeMx(job.destination, stsPolicy, host);
    if (v.reason) refused.push(outcome(base, host, null, 'validation-failure', v.reason));
    if (v.allowed) allowed.push({ host, tls: v.requireTls ? 'verified' : 'opportunistic' });
  }
  const deferral = allowed.length
    ? null
    : `MTA-STS policy of ${job.destination} (enforce) names none of its MX hosts (${hosts.join(', ')}; allowed: ${policy.mx.join(', ')})`;
  return { hosts: allowed, refused, deferral };
}

/** RFC 8460 result type of a TLS failure, from the error node's TLS layer or nodemailer gave. */
export function tlsFailureType(err: {
  code?: string;
  message?: string;
  reason?: string;
  tlsResult?: TlsResultType;
}): TlsResultType | null {
  if (err.tlsResult) return err.tlsResult;
  const text = `${err.code ?? ''} ${err.message ?? ''} ${err.reason ?? ''}`;
  if (/STARTTLS|TLS not available|does not support TLS|TLS is required/i.test(text)) return 'starttls-not-supported';
  if (/ALTNAME|Hostname\/IP does not match|host ?name mismatch/i.test(text)) return 'certificate-host-mismatch';
  if (/CERT_HAS_EXPIRED|certificate has expired|CERT_NOT_YET_VALID/i.test(text)) return 'certificate-expired';
  if (/SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|self[- ]signed|certificate/i.test(text))
    return 'certificate-not-trusted';
  if (/\bTLS\b|\bSSL\b|ETLS/i.test(text)) return 'validation-failure';
  return null;
}

/** The deferral message of a host a policy required TLS of, that failed: what was asked and what went wrong. */
export function requiredFailure(
  job: Pick<DeliveryJob, 'destination'>,
  host: string,
  tls: TlsRequirement,
  problem: string,
): string | null {
  if (tls === 'verified') return tlsRequiredReason(job.destination, host, problem);
  if (tls === 'encrypted') return `DANE: TLSA records of ${host} require TLS: ${problem}`;
  if (typeof tls === 'object') return `DANE: ${host} must match its TLSA records: ${problem}`;
  return null;
}

/** A pool key part for a requirement (sessions are reused only under the same one). */
export function requirementKey(tls: TlsRequirement): string {
  return typeof tls === 'string'
    ? tls
    : `dane:${tls.records.map((r) => `${r.usage}${r.selector}${r.matchingType}${r.data.toString('hex')}`).join(',')}`;
}
