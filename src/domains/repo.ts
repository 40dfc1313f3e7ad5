import type { Db } from '../store/db.ts';

/**
 * SQL of sending domains. The delivery issue adds DKIM keys, records and
 * verification; sending only needs to know whether a domain is verified and bound.
 */
export function createDomainsRepo(db: Db) {
  const bound = db.prepare<[string, string], { status: string }>(
    `SELECT d.status FROM domains d JOIN project_domains pd ON pd.domain_id = d.id
     WHERE pd.project_id = ? AND d.name = ?`,
  );
  return {
    /** True when `domain` is VERIFIED and bound to the project. */
    isVerifiedForProject: (projectId: string, domain: string) =>
      Promise.resolve(bound.get(projectId, domain.toLowerCase())?.status === 'VERIFIED'),
  };
}

export type DomainsRepo = ReturnType<typeof createDomainsRepo>;
