import { keysOf, listedKeys, shownKeys, type DkimKeyRow } from './dkim-keys.ts';
import type { DomainRow } from './store.ts';
import { buildRecords, type DnsRecord, type RecordCheck } from './records.ts';
import type { DomainStatus } from './status.ts';

/** A sending domain as the CLI (and later the Management API) shows it. */
export interface Domain {
  id: string;
  organization_id: string;
  name: string;
  status: DomainStatus;
  /** The selector of the RSA key that signs now. */
  dkim_selector: string | null;
  /** The domain's DKIM keys (never a private key): which signs, which waits for its record, which retires. */
  dkim_keys: DkimKeyView[];
  /** What to publish in DNS. */
  records: DnsRecord[];
  /** The latest check of each record; empty before the first. */
  checks: RecordCheck[];
  /** Set while required records fail, and after the domain became unverified. */
  warning: string | null;
  failing_since: string | null;
  last_checked_at: string | null;
  verified_at: string | null;
  created_at: string;
  /** Projects the domain is bound to (LIVE sends from it are accepted there once verified). */
  project_ids: string[];
  /** Whether the domain receives mail for its projects' routes (issue 34). */
  receiving: boolean;
  /** Whether the latest check saw its MX point at this server (mail for its routes can arrive). */
  receiving_ready: boolean;
}

/** A DKIM key as a domain shows it. */
export interface DkimKeyView {
  selector: string;
  algorithm: DkimKeyRow['algorithm'];
  state: DkimKeyRow['state'];
  created_at: string;
  activated_at: string | null;
  /** A retiring key's record is listed until then. */
  retire_after: string | null;
}

/**
 * The records of a row with its stored keys (`keys`, the rows of domain_dkim_keys); without
 * them, its dkim_* columns (the active RSA key). A row made without a key (inserted directly
 * by a test) has no DKIM record.
 */
export function recordsOf(row: DomainRow, hostname: string, keys: DkimKeyRow[] = []): DnsRecord[] {
  return buildRecords({
    domain: row.name,
    keys: listedKeys(keysOf(row, keys)),
    hostname,
    receiving: row.receiving === 1,
  });
}

const keyView = (k: DkimKeyRow): DkimKeyView => ({
  selector: k.selector,
  algorithm: k.algorithm,
  state: k.state,
  created_at: k.created_at,
  activated_at: k.activated_at,
  retire_after: k.retire_after,
});

export function toDomain(row: DomainRow, projectIds: string[], hostname: string, keys: DkimKeyRow[] = []): Domain {
  const checks = row.checks ? (JSON.parse(row.checks) as RecordCheck[]) : [];
  return {
    id: row.id,
    organization_id: row.organization_id,
    name: row.name,
    status: row.status,
    dkim_selector: row.dkim_selector,
    dkim_keys: shownKeys(keysOf(row, keys)).map(keyView),
    records: recordsOf(row, hostname, keys),
    checks,
    warning: row.warning,
    failing_since: row.failing_since,
    last_checked_at: row.last_checked_at,
    verified_at: row.verified_at,
    created_at: row.created_at,
    project_ids: projectIds,
    receiving: row.receiving === 1,
    receiving_ready: row.receiving === 1 && checks.some((c) => c.purpose === 'inbound' && c.ok),
  };
}
