// A project's receiving routes (issue 34; decisions.md, "Receiving mail"): which of a receiving
// domain's addresses it takes, and what happens to a message that reaches one. Listed, created,
// changed and removed through the API, the dashboard and the CLI, each change audited.
import { z } from 'zod';
import { operator, type Actor, type Audited } from '../audit/index.ts';
import type { DomainRow } from '../domains/index.ts';
import { AppError } from '../errors.ts';
import { iso, type Clock } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import { uniqueOrConflict } from '../store/errors.ts';
import { fieldError, parseInput } from '../validation.ts';
import type { WebhookRow } from '../webhooks/index.ts';
import { forwardLoop, parsePattern, patternOf } from './patterns.ts';
import type { ReceivingStore, RouteAction, RouteRow } from './store.ts';

/** A route as the API shows it. */
export interface Route {
  id: string;
  project_id: string;
  pattern: string;
  domain_id: string;
  action: RouteAction;
  webhook_id: string | null;
  forward_to: string[] | null;
  created_at: string;
  updated_at: string;
}

const toRoute = (r: RouteRow): Route => ({
  id: r.id,
  project_id: r.project_id,
  pattern: patternOf(r),
  domain_id: r.domain_id,
  action: r.action,
  webhook_id: r.webhook_id,
  forward_to: r.forward_to ? (JSON.parse(r.forward_to) as string[]) : null,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

const address = z.email().max(254);
/** At most this many forward targets per route. */
const MAX_FORWARD_TO = 10;
const actionFields = {
  action: z.enum(['webhook', 'forward', 'hold']),
  webhook_id: z.string().trim().min(1).optional(),
  forward_to: z.array(address).min(1).max(MAX_FORWARD_TO).optional(),
};
export const createRouteSchema = z.strictObject({ pattern: z.string().trim().min(3).max(320), ...actionFields });
export const updateRouteSchema = z.strictObject(actionFields);

export interface RoutesDeps {
  repo: ReceivingStore;
  domains: {
    findDomainByName(name: string): Promise<DomainRow | undefined>;
    listProjectIds(domainId: string): Promise<string[]>;
  };
  webhooks: { findById(id: string): Promise<WebhookRow | undefined> };
  clock: Clock;
}

/** The route use cases of the receiving service (service.ts). */
export function createRoutes(deps: RoutesDeps) {
  const { repo, clock } = deps;

  const audited = (actor: Actor, projectId: string, action: string, id: string, before: unknown, after: unknown) =>
    ({
      actor,
      atMs: clock.now(),
      entry: { action, project_id: projectId, target_type: 'route', target_id: id, before, after },
    }) satisfies Audited;

  async function routeOf(projectId: string, id: string): Promise<RouteRow> {
    const row = await repo.findRoute(id);
    if (!row || row.project_id !== projectId) throw new AppError('not_found', `no route ${id}`);
    return row;
  }

  /** The action's fields checked against the project: its webhook, its forward targets (no loop). */
  async function checkAction(
    projectId: string,
    pattern: ReturnType<typeof parsePattern> & { id: string | null },
    a: z.infer<typeof updateRouteSchema>,
  ): Promise<Pick<RouteRow, 'action' | 'webhook_id' | 'forward_to'>> {
    if (a.action === 'webhook') {
      if (!a.webhook_id) throw fieldError('webhook_id', 'required when action is webhook');
      const hook = await deps.webhooks.findById(a.webhook_id);
      if (!hook || hook.project_id !== projectId)
        throw fieldError('webhook_id', `no webhook ${a.webhook_id} in this project`);
      if (a.forward_to) throw fieldError('forward_to', 'only when action is forward');
      return { action: 'webhook', webhook_id: hook.id, forward_to: null };
    }
    if (a.action === 'forward') {
      if (!a.forward_to) throw fieldError('forward_to', 'required when action is forward');
      if (a.webhook_id) throw fieldError('webhook_id', 'only when action is webhook');
      const targets = [...new Set(a.forward_to.map((t) => t.toLowerCase()))];
      const loop = await forwardLoop(pattern, targets, (domain) => repo.routesAt(domain));
      if (loop) throw fieldError('forward_to', `forwarding loop: ${loop.join(' → ')}`);
      return { action: 'forward', webhook_id: null, forward_to: JSON.stringify(targets) };
    }
    if (a.webhook_id || a.forward_to)
      throw fieldError(a.webhook_id ? 'webhook_id' : 'forward_to', 'not with action hold');
    return { action: 'hold', webhook_id: null, forward_to: null };
  }

  /** The receiving domain a pattern names, if it is the project's. */
  async function domainOf(projectId: string, name: string): Promise<DomainRow> {
    const domain = await deps.domains.findDomainByName(name);
    if (!domain || !(await deps.domains.listProjectIds(domain.id)).includes(projectId)) {
      throw fieldError('pattern', `${name} is not a domain of this project (svc domains add ${name} --receiving)`);
    }
    if (!domain.receiving) {
      throw fieldError(
        'pattern',
        `${name} does not receive mail: turn receiving on first (svc domains receiving ${name} on)`,
      );
    }
    return domain;
  }

  return {
    async listRoutes(projectId: string): Promise<Route[]> {
      return (await repo.listRoutes(projectId)).map(toRoute);
    },
    async getRoute(projectId: string, id: string): Promise<Route> {
      return toRoute(await routeOf(projectId, id));
    },
    async createRoute(projectId: string, body: unknown, actor: Actor = operator()): Promise<Route> {
      const b = parseInput(createRouteSchema, body);
      const pattern = parsePattern(b.pattern);
      const domain = await domainOf(projectId, pattern.domain);
      const action = await checkAction(projectId, { ...pattern, id: null }, b);
      const now = iso(clock.now());
      const row: RouteRow = {
        id: newId(clock.now()),
        project_id: projectId,
        domain_id: domain.id,
        ...pattern,
        ...action,
        created_at: now,
        updated_at: now,
      };
      const route = toRoute(row);
      await uniqueOrConflict(
        repo.createRoute(row, audited(actor, projectId, 'route.create', row.id, null, route)),
        `${route.pattern} already has a route`,
        { pattern: route.pattern },
      );
      return route;
    },
    async updateRoute(projectId: string, id: string, body: unknown, actor: Actor = operator()): Promise<Route> {
      const b = parseInput(updateRouteSchema, body);
      const before = await routeOf(projectId, id);
      const action = await checkAction(projectId, { ...before, id }, b);
      const row: RouteRow = { ...before, ...action, updated_at: iso(clock.now()) };
      await repo.updateRoute(row, audited(actor, projectId, 'route.update', id, toRoute(before), toRoute(row)));
      return toRoute(row);
    },
    async deleteRoute(projectId: string, id: string, actor: Actor = operator()): Promise<void> {
      const before = await routeOf(projectId, id);
      await repo.removeRoute(id, audited(actor, projectId, 'route.delete', id, toRoute(before), null));
    },
  };
}
