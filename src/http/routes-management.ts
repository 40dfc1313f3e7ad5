import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { App } from '../app.ts';
import { AppError } from '../errors.ts';
import { hasRole, minRoleOf, type Organization, type Role } from '../accounts/index.ts';
import { listKeysQuerySchema } from '../keys/index.ts';
import { listSuppressionsQuerySchema } from '../suppressions/index.ts';
import { parseInput } from '../validation.ts';
import { requireSession, sessionOf } from './auth.ts';

const ORG = '/v1/organizations/:organization_id';
const PROJECT = `${ORG}/projects/:project_id`;

type Params = Record<string, string>;
/** What an organization route knows once access is granted. */
interface OrgContext {
  user_id: string;
  role: Role;
  org: Organization;
  params: Params;
  query: unknown;
}

/** The Management API (session token; contract "Authentication" 7-8). */
export function registerManagementRoutes(server: FastifyInstance, app: App): void {
  const session = { preHandler: requireSession(app) };

  /**
   * A route under an organization: a member of it with at least the role the
   * role table names (403 `forbidden` below it); for anyone else, and for a
   * project of another organization, 404 as if it did not exist.
   */
  const orgRoute = (method: 'GET', path: string, handler: (c: OrgContext) => Promise<unknown>) => {
    const min = minRoleOf(method, path);
    if (!min) throw new Error(`no role for ${method} ${path} in the role table (src/accounts/roles.ts)`);
    server.route({
      method,
      url: path,
      ...session,
      handler: async (req: FastifyRequest) => {
        const params = req.params as Params;
        const { user_id } = sessionOf(req);
        const { role, org } = await app.accounts.accessTo(user_id, params.organization_id!, params.project_id);
        if (!hasRole(role, min))
          throw new AppError('forbidden', `This needs the ${min} role or higher; yours is ${role}`);
        return { data: await handler({ user_id, role, org, params, query: req.query }) };
      },
    });
  };

  // The organizations the signed-in user belongs to, with the user's role in each.
  server.get('/v1/organizations', session, async (req) => ({
    data: await app.accounts.listOrgsOfUser(sessionOf(req).user_id),
  }));

  orgRoute('GET', ORG, ({ org, role }) => Promise.resolve({ ...org, role }));
  orgRoute('GET', `${ORG}/projects`, ({ org }) => app.accounts.listProjects(org.id));
  orgRoute('GET', PROJECT, ({ params }) => app.accounts.getProjectById(params.project_id!));
  orgRoute('GET', `${ORG}/members`, ({ org }) => app.accounts.listMembers(org.id));
  orgRoute('GET', `${ORG}/domains`, ({ org }) => app.domains.listDomains(org.id));
  orgRoute('GET', `${ORG}/domains/:domain_id`, async ({ org, params }) => {
    const d = await app.domains.getDomain(params.domain_id!);
    if (d.organization_id !== org.id) throw new AppError('not_found', `no domain ${params.domain_id}`);
    return d;
  });
  orgRoute('GET', `${PROJECT}/api-keys`, ({ params, query }) =>
    app.keys.listKeys(params.project_id!, parseInput(listKeysQuerySchema, query).include_revoked),
  );
  orgRoute('GET', `${PROJECT}/templates`, ({ params }) => app.templates.list(params.project_id!));
  orgRoute('GET', `${PROJECT}/templates/:template_id`, ({ params }) =>
    app.templates.getTemplate(params.project_id!, params.template_id!),
  );
  orgRoute('GET', `${PROJECT}/suppressions`, ({ params, query }) => {
    const q = parseInput(listSuppressionsQuerySchema, query);
    return app.suppressions.list(params.project_id!, q.limit, q.after);
  });
}
