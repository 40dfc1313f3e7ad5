/** ok: nothing to do; warn: worth a look, mail still flows; fail: mail from this server is likely refused or spammed. */
export type CheckStatus = 'ok' | 'warn' | 'fail';

/** One finding of `svc doctor`: which check, about what, how it stands, why, and how to fix it. */
export interface DoctorCheck {
  /** The check's name, also the metric's label: hostname, fcrdns, port25, blocklist, dkim, spf, dmarc, return_path. */
  check: string;
  /** What was checked: the host name, an outbound address, a blocklist and address, a domain. */
  subject: string;
  status: CheckStatus;
  /** What was found, or why it failed. */
  detail: string;
  /** What to do about it; null when nothing is to be done. */
  fix: string | null;
}

export interface DoctorReport {
  checked_at: string;
  /** The worst status of the checks. */
  status: CheckStatus;
  checks: DoctorCheck[];
}

const RANK: Record<CheckStatus, number> = { ok: 0, warn: 1, fail: 2 };

/** The worst of the checks' statuses; ok when there is none. */
export function worstStatus(checks: Pick<DoctorCheck, 'status'>[]): CheckStatus {
  return checks.reduce<CheckStatus>((w, c) => (RANK[c.status] > RANK[w] ? c.status : w), 'ok');
}

/** A check's identity across runs (the monitor notices a change of status by it). */
export const checkKey = (c: Pick<DoctorCheck, 'check' | 'subject'>): string => `${c.check} ${c.subject}`;

export const okCheck = (check: string, subject: string, detail: string): DoctorCheck => ({
  check,
  subject,
  status: 'ok',
  detail,
  fix: null,
});
