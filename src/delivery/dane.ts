// DANE for SMTP (RFC 7672) in a delivery attempt: which MX hosts of a destination its
// DNSSEC-validated TLSA records bind, and how each may be tried. It asks the validating
// resolver (dnssec-resolver.ts); what an answer means and whether a chain matches are in
// dane-match.ts. Where DANE applies, MTA-STS does not (RFC 8461 section 2).
import { daneRequirement, tlsaText } from './dane-match.ts';
import type { DnssecResolver } from './dnssec-resolver.ts';
import type { DeliveryJob } from './job.ts';
import { outcome, type AttemptPlan, type HostPlan, type OutcomeBase } from './tls-policy.ts';

const tlsaBase = (job: Pick<DeliveryJob, 'destination'>, strings: string[]): OutcomeBase => ({
  policy_type: 'tlsa',
  policy_string: strings,
  policy_domain: job.destination,
  sts_mode: null,
});

/**
 * The DANE plan of an attempt, or null when DANE does not apply (an insecure MX RRset, or no
 * MX host with TLSA records), so other policies may. A bogus MX RRset, or one the resolver
 * cannot answer for, defers the attempt (RFC 7672 2.2.1); a host whose TLSA lookup fails is
 * not tried (2.1.1); a host with usable records must present a chain that matches them; a
 * host with only unusable records must use TLS, unauthenticated (2.2).
 */
export async function planDane(
  dane: DnssecResolver,
  job: Pick<DeliveryJob, 'destination'>,
  given: string[],
  port: number,
  at: number,
  sts?: AttemptPlan,
): Promise<AttemptPlan | null> {
  let hosts = given;
  const security = await dane.mxSecurity(job.destination);
  if (security === 'insecure') return null;
  if (security !== 'secure') {
    const why =
      security === 'bogus'
        ? `DNSSEC validation of the MX records of ${job.destination} failed (bogus)`
        : `the DANE resolver gave no answer for the MX records of ${job.destination}`;
    return {
      hosts: [],
      refused: [outcome(tlsaBase(job, []), null, null, 'dnssec-invalid', why)],
      deferral: `DANE: ${why}`,
    };
  }
  // Only hosts of the validated MX answer: a host the ordinary resolver added (spoofed) is not
  // tried, whatever TLSA records it has (RFC 7672 2.2.1).
  const signed = new Set(await dane.mxHosts(job.destination));
  const unsigned = hosts.filter((h) => !signed.has(h.toLowerCase().replace(/\.$/, '')));
  hosts = hosts.filter((h) => !unsigned.includes(h));
  const answers = await Promise.all(hosts.map((host) => dane.tlsa(host, port)));
  const required = answers.map(daneRequirement);
  if (unsigned.length === 0 && required.every((r) => r.kind === 'none')) return null;
  const plan: HostPlan[] = [];
  const refused = unsigned.map((h) =>
    outcome(tlsaBase(job, []), h, null, 'validation-failure', `${h} is not in the DNSSEC-signed MX records`),
  );
  for (const [i, host] of hosts.entries()) {
    const r = required[i]!;
    const answer = answers[i]!;
    if (r.kind === 'defer') {
      refused.push(outcome(tlsaBase(job, []), host, null, 'dnssec-invalid', r.reason));
    } else if (r.kind === 'none') {
      // A host without TLSA keeps what MTA-STS asks of it (enforce: named hosts only, over
      // verified TLS); DANE's precedence is over the hosts it binds, not the others.
      const asked = sts ? sts.hosts.find((h) => h.host === host) : { host, tls: 'opportunistic' as const };
      if (asked) plan.push(asked);
      else refused.push(...(sts?.refused.filter((o) => o.mx_host === host) ?? []));
    } else if (r.kind === 'tls-only') {
      plan.push({ host, tls: 'encrypted', base: tlsaBase(job, []) });
    } else {
      const names = [host, ...(answer.state === 'secure' && answer.base !== host ? [answer.base] : [])];
      plan.push({
        host,
        tls: { kind: 'dane', records: r.records, names, at },
        base: tlsaBase(job, r.records.map(tlsaText)),
      });
    }
  }
  const deferral = plan.length
    ? null
    : `DANE: no MX host of ${job.destination} can be used (${refused.map((o) => o.failure_reason).join('; ')})`;
  return { hosts: plan, refused, deferral };
}

/**
 * Whether DANE is on: only with a resolver the operator named that validates (its answer for
 * the signed root carries the AD bit). Says once why it is off; never pretends.
 */
export async function probeDane(
  server: string | undefined,
  relayed: boolean,
  resolver: DnssecResolver | null,
  log: { info(fields: object, msg: string): void; warn(fields: object, msg: string): void },
): Promise<boolean> {
  if (relayed) {
    log.info({}, 'DANE and MTA-STS are off: mail goes through --relay, the next hop that applies them');
    return false;
  }
  if (!server || !resolver) {
    log.info({}, 'DANE is off: no validating resolver named (--dane-resolver); MTA-STS still applies');
    return false;
  }
  const p = await resolver.probe();
  if (!p.validating) {
    log.warn(
      { dane_resolver: server, reason: p.reason },
      `DANE is off: ${server} gave no validated answer (${p.reason})`,
    );
    return false;
  }
  log.info({ dane_resolver: server }, 'DANE is on: TLSA records validated by the named resolver');
  return true;
}
