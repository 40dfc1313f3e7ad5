// What TLS reporting counts (RFC 8460 section 4): the MX hosts tried against their TLS policy,
// per UTC day and policy domain, by everything the report groups by. The delivery engine tells
// the app each attempt's outcomes; they add up here in memory and reach the store at each flush.

/**
 * One MX host tried against its TLS policy, as the delivery engine reports it (delivery's
 * TlsOutcome, read structurally: no import into delivery's insides). `sending_ip`, the local
 * address the session left from (RFC 8460 sending-mta-ip), is counted when delivery gives it.
 */
export interface ObservedTls {
  policy_type: 'sts' | 'tlsa' | 'no-policy-found';
  policy_string: string[];
  policy_domain: string;
  mx_host: string | null;
  receiving_ip: string | null;
  sending_ip?: string | null;
  result: string;
  failure_reason: string | null;
}

/** One group of outcomes of a day: the store's key (absent text is '') and how many. */
export interface CountRow {
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  policy_domain: string;
  policy_type: ObservedTls['policy_type'];
  policy_string: string[];
  mx_host: string;
  receiving_ip: string;
  sending_ip: string;
  /** 'success' or an RFC 8460 result type. */
  result: string;
  failure_reason: string;
  count: number;
}

/** The UTC day of an instant (YYYY-MM-DD). */
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** The row an outcome counts in, on `day`, with a count of 1. */
export function countRowOf(o: ObservedTls, day: string): CountRow {
  return {
    day,
    policy_domain: o.policy_domain.toLowerCase(),
    policy_type: o.policy_type,
    policy_string: o.policy_string,
    mx_host: o.mx_host ?? '',
    receiving_ip: o.receiving_ip ?? '',
    sending_ip: o.sending_ip ?? '',
    result: o.result,
    failure_reason: o.result === 'success' ? '' : (o.failure_reason ?? ''),
    count: 1,
  };
}

const keyOf = (r: CountRow) =>
  JSON.stringify([
    r.day,
    r.policy_domain,
    r.policy_type,
    r.policy_string,
    r.mx_host,
    r.receiving_ip,
    r.sending_ip,
    r.result,
    r.failure_reason,
  ]);

/** Outcomes added up in memory until the next flush takes them (`drain`), or gives them back (`restore`). */
export function createTally() {
  let rows = new Map<string, CountRow>();
  const add = (row: CountRow) => {
    const key = keyOf(row);
    const known = rows.get(key);
    if (known) known.count += row.count;
    else rows.set(key, { ...row });
  };
  return {
    add,
    /** The rows added since the last drain; the tally starts again empty. */
    drain(): CountRow[] {
      const out = [...rows.values()];
      rows = new Map();
      return out;
    },
    /** Rows a flush could not write, added back for the next one. */
    restore: (back: CountRow[]) => back.forEach(add),
    size: () => rows.size,
  };
}
