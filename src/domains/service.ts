import type { AccountsService } from '../accounts/index.ts';
import { auditChange } from '../accounts/index.ts';
import { operator, type Actor, type Audited } from '../audit/index.ts';
import { AppError } from '../errors.ts';
import { iso, type Clock } from '../lib/clock.ts';
import { isUuid, newId } from '../lib/ids.ts';
import type { Logger } from '../lib/logger.ts';
import { PLAN_LIMITS, planLimitError } from '../limits/index.ts';
import { uniqueOrConflict } from '../store/errors.ts';
import { parseInput } from '../validation.ts';
import type { DnsLookups } from '../lib/dns.ts';
import {
  addPendingKeys,
  keysOf,
  rotatedAlgorithms,
  rotationDue,
  rotationPending,
  signingKeys,
  stopAlgorithm,
  uniqueSelector,
  type DkimAlgorithm,
  type DkimKeyRow,
  type FreshKey,
} from './dkim-keys.ts';
import { logSteps, withAudits } from './key-steps.ts';
import { toDomain, type Domain } from './present.ts';
import { generateDkimKey, normalizeHostname } from './records.ts';
import type { DomainRow, DomainsStore } from './store.ts';
import { addDomainSchema, domainNameSchema, type AddDomainInput } from './schema.ts';
import { verifyRow, verifyRows } from './verify.ts';

export interface DomainsDeps {
  repo: DomainsStore;
  accounts: Pick<AccountsService, 'getOrg' | 'getProject'>;
  clock: Clock;
  logger: Logger;
  /** The resolver domain checks use (--dns-servers). */
  dns: DnsLookups;
  /** The server's host name: SPF and the return-path MX name it. */
  hostname: string;
  gracePeriodMs: number;
  /** How long a replaced DKIM key's record stays listed after the switch (--dkim-rotation-grace). */
  dkimGraceMs: number;
  /** Rotate a domain's DKIM keys once its RSA key has signed this many months; 0 is off (--dkim-rotate-months). */
  dkimRotateMonths: number;
  /** Turns receiving on or off for a domain with its audit row (receiving/store.ts); false when it is gone. */
  setReceiving?: (domainId: string, on: boolean, a: Audited) => Promise<boolean>;
}

/** What the delivery engine needs to DKIM-sign mail from a verified domain. */
export interface SigningKey {
  domain: string;
  selector: string;
  privateKeyPem: string;
  /** An Ed25519 key signing beside the RSA one (RFC 8463), when the domain has one active. */
  ed25519?: { selector: string; privateKeyPem: string };
}

/** A fresh key of each algorithm (RSA generation takes ~100 ms: made outside any transaction). */
const freshKeys = (algorithms: DkimAlgorithm[], nowMs: number): Promise<FreshKey[]> =>
  Promise.all(
    algorithms.map(async (algorithm) => ({ id: newId(nowMs), algorithm, ...(await generateDkimKey(algorithm)) })),
  );

/** Sending domains: adding with a DKIM key, DNS verification with a grace period, project binding. */
export function createDomainsService(deps: DomainsDeps) {
  const { repo, accounts, clock } = deps;
  const hostname = normalizeHostname(deps.hostname);
  const change = auditChange(clock);
  const verifyDeps = { ...deps, hostname, change };
  const present = async (row: DomainRow) =>
    toDomain(row, await repo.listProjectIds(row.id), hostname, await repo.listDkimKeys(row.id));
  const keysOfRow = async (row: DomainRow) => keysOf(row, await repo.listDkimKeys(row.id));
  const inProgress = (row: DomainRow) =>
    new AppError(
      'dkim_rotation_in_progress',
      `a DKIM key of ${row.name} waits for its record to be published: publish it (svc domains show ${row.name}), ` +
        'then svc domains verify; a new rotation can start once svc signs with it',
      { domain: row.name },
    );

  /**
   * Adds pending keys of `algorithms` to the domain, planned from its keys inside the
   * transaction; a domain with a key still pending is refused (409), there as here.
   */
  async function addKeys(row: DomainRow, algorithms: DkimAlgorithm[], actor: Actor): Promise<void> {
    const now = clock.now();
    const fresh = await freshKeys(algorithms, now);
    const written = await repo.updateDkimKeys(row.id, (rows, current) => {
      const keys = keysOf(current, rows);
      // One pending key per algorithm: Ed25519 may be turned on while an RSA rotation waits.
      if (rotationPending(keys, algorithms)) throw inProgress(current);
      return withAudits(change, actor, current, addPendingKeys(current.id, keys, fresh, now));
    });
    if (!written) throw new AppError('not_found', `no domain ${row.name}`);
    logSteps(deps.logger, row.name, written.steps);
  }

  /** Starts a rotation of `row`'s keys: refused (409) while one is under way. */
  async function rotate(row: DomainRow, actor: Actor): Promise<void> {
    const keys = await keysOfRow(row);
    if (rotationPending(keys)) throw inProgress(row);
    await addKeys(row, rotatedAlgorithms(keys), actor);
  }
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

  /** Turns receiving on or off (audited), when it changes. */
  async function receive(row: Pick<DomainRow, 'id' | 'organization_id' | 'receiving'>, on: boolean, actor: Actor) {
    if ((row.receiving === 1) === on) return;
    if (!deps.setReceiving) throw new Error('receiving is not wired');
    const audited = change(actor, 'domain.receiving', target(row), { receiving: !on }, { receiving: on });
    if (!(await deps.setReceiving(row.id, on, audited))) throw new AppError('not_found', `no domain ${row.id}`);
  }

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
    /**
     * Adds a domain to an organization within its plan's ceiling, with a fresh DKIM key; bound to
     * `project` when given. With `lookUp`, the records are then looked up once (not audited: a
     * check, like the server's own), so what DNS holds already shows at once (`svc domains add`).
     */
    async addDomain(
      input: AddDomainInput,
      actor: Actor = operator(),
      opts: { lookUp?: boolean } = {},
    ): Promise<Domain> {
      const data = parseInput(addDomainSchema, input);
      const org = await accounts.getOrg(data.organization);
      const project = data.project ? await projectOf({ organization_id: org.id }, data.project) : undefined;
      const now = clock.now();
      const [key, ed] = await freshKeys(data.ed25519 ? ['rsa', 'ed25519'] : ['rsa'], now);
      const row = {
        id: newId(now),
        organization_id: org.id,
        name: data.name,
        dkim_selector: uniqueSelector(now, 'rsa', []),
        dkim_private_key: key!.privateKeyPem,
        dkim_public_key: key!.publicKeyB64,
        created_at: iso(now),
      };
      // The RSA key signs once the domain is verified; an Ed25519 key once its record is seen.
      const active: DkimKeyRow = {
        id: row.id,
        domain_id: row.id,
        selector: row.dkim_selector,
        algorithm: 'rsa',
        private_key: key!.privateKeyPem,
        public_key: key!.publicKeyB64,
        state: 'active',
        created_at: row.created_at,
        activated_at: row.created_at,
        retire_after: null,
      };
      const pending = ed ? addPendingKeys(row.id, [active], [ed], now) : { save: [], steps: [] };
      const max = PLAN_LIMITS[org.plan].domains;
      const after = { ...shown({ ...row, status: 'PENDING' }), project_id: project?.id ?? null };
      const audited = change(actor, 'domain.create', target(row), null, after);
      const keyAudits = withAudits(change, actor, row, pending).audits;
      const created = await uniqueOrConflict(
        repo.createDomain(row, max, project?.id, audited, [active, ...pending.save], keyAudits),
        `domain ${data.name} exists`,
      );
      if (!created) throw planLimitError('domains', org.plan, max!);
      if (data.receiving) await receive(row, true, actor);
      const stored = (await repo.findDomainById(row.id))!;
      if (!opts.lookUp) return present(stored);
      return present((await verifyRow(verifyDeps, stored, undefined, undefined, actor)) ?? stored);
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
      const row = await verifyRow(verifyDeps, await getRow(ref), undefined, audited, actor);
      if (!row) throw new AppError('not_found', `no domain ${ref}`);
      return present(row);
    },

    /**
     * Checks every domain, then, with automatic rotation on (--dkim-rotate-months), starts a
     * rotation for each whose RSA key has signed that long; the server runs this periodically,
     * and `signal` stops it when the server stops.
     */
    async verifyAll(signal?: AbortSignal): Promise<{ checked: number; errors: number; rotated: number }> {
      const ids = await repo.listDomainIds();
      const result = await verifyRows(verifyDeps, ids, signal);
      let rotated = 0;
      for (const id of deps.dkimRotateMonths > 0 ? ids : []) {
        if (signal?.aborted) break;
        const row = await repo.findDomainById(id);
        if (!row || !rotationDue(await keysOfRow(row), clock.now(), deps.dkimRotateMonths)) continue;
        try {
          await rotate(row, operator());
          rotated++;
        } catch (e) {
          deps.logger.error({ domain: row.name, err: e }, 'automatic DKIM rotation failed');
        }
      }
      return { ...result, rotated };
    },

    /**
     * Starts a DKIM key rotation: a new key (and a new Ed25519 key when the domain signs with
     * one) under a new selector, pending until `verify` sees its record; svc signs with the
     * current key until then. 409 `dkim_rotation_in_progress` while a key is still pending.
     */
    async rotateDkim(ref: string, actor: Actor = operator()): Promise<Domain> {
      const row = await getRow(ref);
      await rotate(row, actor);
      return present((await repo.findDomainById(row.id)) ?? row);
    },

    /**
     * Turns Ed25519 signing (RFC 8463, beside RSA) on or off. On: a new Ed25519 key, pending
     * until its record is seen (nothing when the domain has one already). Off: its key stops
     * signing now and its record stays listed through the rotation grace period.
     */
    async setEd25519(ref: string, on: boolean, actor: Actor = operator()): Promise<Domain> {
      const row = await getRow(ref);
      const has = (await keysOfRow(row)).some((k) => k.algorithm === 'ed25519' && /pending|active/.test(k.state));
      if (on && !has) await addKeys(row, ['ed25519'], actor);
      if (!on && has) {
        const now = clock.now();
        const written = await repo.updateDkimKeys(row.id, (rows, current) =>
          withAudits(change, actor, current, stopAlgorithm(keysOf(current, rows), 'ed25519', now, deps.dkimGraceMs)),
        );
        if (written) logSteps(deps.logger, row.name, written.steps);
      }
      return present((await repo.findDomainById(row.id)) ?? row);
    },

    /**
     * Turns receiving on or off (issue 34): on, the domain's records add its MX (pointing at this
     * server) and its projects' routes take mail for its addresses; off, mail for it is refused
     * at RCPT again. Routes stay, unused, until it is turned on again.
     */
    async setReceiving(ref: string, on: boolean, actor: Actor = operator()): Promise<Domain> {
      const row = await getRow(ref);
      await receive(row, on, actor);
      return present((await repo.findDomainById(row.id)) ?? row);
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

    /** The DKIM keys that sign for a VERIFIED domain (RSA, and Ed25519 when active); undefined for any other domain. */
    async getSigningKey(domainName: string): Promise<SigningKey | undefined> {
      const found = await repo.findDomainWithKeys(domainName.toLowerCase());
      if (found?.row.status !== 'VERIFIED') return undefined;
      const signing = signingKeys(keysOf(found.row, found.keys));
      const rsa = signing.find((k) => k.algorithm === 'rsa');
      const ed = signing.find((k) => k.algorithm === 'ed25519');
      if (!rsa) return undefined;
      return {
        domain: found.row.name,
        selector: rsa.selector,
        privateKeyPem: rsa.private_key,
        ...(ed ? { ed25519: { selector: ed.selector, privateKeyPem: ed.private_key } } : {}),
      };
    },
  };
}

export type DomainsService = ReturnType<typeof createDomainsService>;
