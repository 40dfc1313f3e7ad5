import type { DomainRow } from './repo.ts';
import { buildRecords, type DnsRecord, type RecordCheck } from './records.ts';
import type { DomainStatus } from './status.ts';

/** A sending domain as the CLI (and later the Management API) shows it. */
export interface Domain {
  id: string;
  organization_id: string;
  name: string;
  status: DomainStatus;
  dkim_selector: string | null;
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
}

/** The records of a row; one made without a DKIM key (inserted directly by a test) has no DKIM record. */
export function recordsOf(row: DomainRow, hostname: string): DnsRecord[] {
  const records = buildRecords({
    domain: row.name,
    selector: row.dkim_selector ?? '',
    publicKeyB64: row.dkim_public_key ?? '',
    hostname,
  });
  return records.filter((r) => r.purpose !== 'dkim' || row.dkim_public_key);
}

export function toDomain(row: DomainRow, projectIds: string[], hostname: string): Domain {
  return {
    id: row.id,
    organization_id: row.organization_id,
    name: row.name,
    status: row.status,
    dkim_selector: row.dkim_selector,
    records: recordsOf(row, hostname),
    checks: row.checks ? (JSON.parse(row.checks) as RecordCheck[]) : [],
    warning: row.warning,
    failing_since: row.failing_since,
    last_checked_at: row.last_checked_at,
    verified_at: row.verified_at,
    created_at: row.created_at,
    project_ids: projectIds,
  };
}
