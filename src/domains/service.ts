import type { AccountsService } from '../accounts/index.ts';
import { auditChange } from '../accounts/audit-change.ts';
import { operator, type Actor } from '../audit/index.ts';
import { AppError } from '../errors.ts';
import { iso, type Clock } from '../lib/clock.ts';
import { isUuid, newId } from '../lib/ids.ts';
import type { Logger } from '../lib/logger.ts';
import { PLAN_LIMITS, planLimitError } from '../limits/plans.ts';
import { uniqueOrConflict } from '../store/errors.ts';
import { parseInput } from '../validation.ts';
import type { DnsLookups } from './dns.ts';
import { toDomain, type Domain } from './present.ts';
import { generateDkimKey, normalizeHostname, selectorFor } from './records.ts';
import type { DomainRow, DomainsRepo } from './repo.ts';
import { addDomainSchema, domainNameSchema, type AddDomainInput } from './schema.ts';
import { verifyRow, verifyRows } from './verify.ts';

export interface DomainsDeps {
  repo: DomainsRepo;
  accounts: Pick<AccountsService, 'getOrg' | 'getProject'>;
  clock: Clock;
  logger: Logger;
  /** The resolver domain checks use (--dns-servers). */
  dns: DnsLookups;
  /** The server's host name: SPF and the return-path MX name it. */
  hostname: string;
  gracePeriodMs: number;
}

/** What the delivery engine needs to DKIM-sign mail from a verified domain. */
export interface SigningKey {
  domain: string;
  selector: string;
  privateKeyPem: string;
}

/** Sending domains: adding with a DKIM key, DNS verification with a grace period, project binding. */
export function createDomainsService(deps: DomainsDeps) {
  const { repo, accounts, clock } = deps;
  const hostname = normalizeHostname(deps.hostname);
  const verifyDeps = { ...deps, hostname };
  const present = async (row: DomainRow) => toDomain(row, await repo.listProjectIds(row.id), hostname);
  const change = auditChange(clock);
  /** What the audit log keeps of a domain: never its private key. */
  const shown = (r: Pick<DomainRow, 'name' | 'status' | 'dkim_selector'>) => ({
    name: r.name,
    status: r.status,
    dkim_selector: r.dkim_selector,
  });
  const target = (r: Pick<DomainRow, 'id' | 'organization_id'>, projectId?: string) => ({
    organization_id: r.organization_id,
    ...(projectId ? { project_id: projectId } : {}),
    type: 'domain',
    id: r.id,
  });

  /** A domain by id or name; 404 when absent. */
  async function getRow(ref: string): Promise<DomainRow> {
    const name = domainNameSchema.safeParse(ref);
    const row = isUuid(ref) ? await repo.findDomainById(ref) : await repo.findDomainByName(name.data ?? ref);
    if (!row) throw new AppError('not_found', `no domain ${ref}`);
    return row;
  }

  /** A project of the domain's organization; 404 for one of another organization. */
  async function projectOf(row: Pick<DomainRow, 'organization_id'>, projectRef: string) {
    const project = await accounts.getProject(projectRef, row.organization_id);
    if (project.organization_id !== row.organization_id) {
      throw new AppError('not_found', `no project ${projectRef} in the domain's organization`);
    }
    return project;
  }

  return {
    /** Adds a domain to an organization within its plan's ceiling, with a fresh DKIM key; bound to `project` when given. */
    async addDomain(input: AddDomainInput, actor: Actor = operator()): Promise<Domain> {
      const data = parseInput(addDomainSchema, input);
      const org = await accounts.getOrg(data.organization);
      const project = data.project ? await projectOf({ organization_id: org.id }, data.project) : undefined;
      const key = await generateDkimKey();
      const now = clock.now();
      const row = {
        id: newId(now),
        organization_id: org.id,
        name: data.name,
        dkim_selector: selectorFor(now),
        dkim_private_key: key.privateKeyPem,
        dkim_public_key: key.publicKeyB64,
        created_at: iso(now),
      };
      const max = PLAN_LIMITS[org.plan].domains;
      const after = { ...shown({ ...row, status: 'PENDING' }), project_id: project?.id ?? null };
      const audited = change(actor, 'domain.create', target(row), null, after);
      const created = await uniqueOrConflict(
        repo.createDomain(row, max, project?.id, audited),
        `domain ${data.name} exists`,
      );
      if (!created) throw planLimitError('domains', org.plan, max!);
      return present((await repo.findDomainById(row.id))!);
    },

    /** A domain with its records and latest checks. */
    async getDomain(ref: string): Promise<Domain> {
      return present(await getRow(ref));
    },

    /**
     * A domain of the organization `orgId` by id: 404 for an id that is not a uuid,
     * unknown, or of another organization, alike (no existence oracle over HTTP).
     */
    async getDomainOf(orgId: string, id: string): Promise<Domain> {
      const row = isUuid(id) ? await repo.findDomainById(id) : undefined;
      if (!row || row.organization_id !== orgId) throw new AppError('not_found', `no domain ${id}`);
      return present(row);
    },

    async listDomains(orgRef: string): Promise<Domain[]> {
      const org = await accounts.getOrg(orgRef);
      return Promise.all((await repo.listDomains(org.id)).map(present));
    },

    /** Looks the domain's records up now and applies the result (verified, warning, unverified). */
    async verifyDomain(ref: string, actor: Actor = operator()): Promise<Domain> {
      const audited = (before: DomainRow, after: DomainRow) =>
        change(actor, 'domain.verify', target(before), shown(before), shown(after));
      const row = await verifyRow(verifyDeps, await getRow(ref), undefined, audited);
      if (!row) throw new AppError('not_found', `no domain ${ref}`);
      return present(row);
    },

    /** Checks every domain; the server runs this periodically, and `signal` stops it when the server stops. */
    async verifyAll(signal?: AbortSignal): Promise<{ checked: number; errors: number }> {
      return verifyRows(verifyDeps, await repo.listDomainIds(), signal);
    },

    /** Binds a domain to a project of its organization: once verified, the project's LIVE keys may send from it. */
    async bindDomain(ref: string, projectRef: string, actor: Actor = operator()): Promise<Domain> {
      const row = await getRow(ref);
      const project = await projectOf(row, projectRef);
      const audited = change(actor, 'domain.bind', target(row, project.id), null, { project_id: project.id });
      await repo.bindProject(row.id, project.id, iso(clock.now()), audited);
      return present(row);
    },

    async unbindDomain(ref: string, projectRef: string, actor: Actor = operator()): Promise<Domain> {
      const row = await getRow(ref);
      const project = await projectOf(row, projectRef);
      const audited = change(actor, 'domain.unbind', target(row, project.id), { project_id: project.id }, null);
      if (!(await repo.unbindProject(row.id, project.id, audited))) {
        throw new AppError('not_found', `domain ${row.name} is not bound to project ${projectRef}`);
      }
      return present(row);
    },

    /** Deletes a domain, its key and its bindings; LIVE sends from it are refused from then on. */
    async deleteDomain(ref: string, actor: Actor = operator()): Promise<Domain> {
      const row = await getRow(ref);
      const domain = await present(row);
      await repo.deleteDomain(row.id, change(actor, 'domain.delete', target(row), shown(row), null));
      return domain;
    },

    /** The DKIM key of a VERIFIED domain, for signing; undefined for any other domain. */
    async getSigningKey(domainName: string): Promise<SigningKey | undefined> {
      const row = await repo.findDomainByName(domainName.toLowerCase());
      if (row?.status !== 'VERIFIED' || !row.dkim_selector || !row.dkim_private_key) return undefined;
      return { domain: row.name, selector: row.dkim_selector, privateKeyPem: row.dkim_private_key };
    },
  };
}

export type DomainsService = ReturnType<typeof createDomainsService>;
