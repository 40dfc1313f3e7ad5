import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { listAuditQuerySchema, type Actor } from '../audit/index.ts';
import type { App } from '../app.ts';
import { AppError } from '../errors.ts';
import { hasRole, minRoleOf, type Organization, type Role } from '../accounts/index.ts';
import { listKeysQuerySchema } from '../keys/index.ts';
import { listSuppressionsQuerySchema } from '../suppressions/index.ts';
import { parseInput } from '../validation.ts';
import { bearer, requireSession, sessionOf } from './auth.ts';

const ORG = '/v1/organizations/:organization_id';
const PROJECT = `${ORG}/projects/:project_id`;

type Params = Record<string, string>;
type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
/** What an organization route knows once access is granted. */
interface OrgContext {
  user_id: string;
  /** Who writes, for the audit log: the user, from the client's address. */
  actor: Actor;
  role: Role;
  org: Organization;
  params: Params;
  query: unknown;
  body: unknown;
}

/** The Management API (session token; contract "Authentication" 7-8). */
export function registerManagementRoutes(server: FastifyInstance, app: App): void {
  const session = { preHandler: requireSession(app) };

  /**
   * A route under an organization: a member of it with at least the role the
   * role table names (403 `forbidden` below it); for anyone else, and for a
   * project of another organization, 404 as if it did not exist.
   */
  const orgRoute = (method: Method, path: string, handler: (c: OrgContext) => Promise<unknown>) => {
    const min = minRoleOf(method, path);
    if (!min) throw new Error(`no role for ${method} ${path} in the role table (src/accounts/roles.ts)`);
    server.route({
      method,
      url: path,
      ...session,
      handler: async (req: FastifyRequest, reply: FastifyReply) => {
        const params = req.params as Params;
        const { user_id } = sessionOf(req);
        const { role, org } = await app.members.accessTo(user_id, params.organization_id!, params.project_id);
        if (!hasRole(role, min))
          throw new AppError('forbidden', `This needs the ${min} role or higher; yours is ${role}`);
        const actor: Actor = { type: 'user', user_id, ip: req.ip };
        const data = await handler({ user_id, actor, role, org, params, query: req.query, body: req.body });
        // decisions.md: 201 on create, 204 on delete.
        if (method === 'DELETE') return reply.code(204).send();
        return reply.code(method === 'POST' ? 201 : 200).send({ data });
      },
    });
  };

  // The organizations the signed-in user belongs to, with the user's role in each.
  server.get('/v1/organizations', session, async (req) => ({
    data: await app.accounts.listOrgsOfUser(sessionOf(req).user_id),
  }));

  // Any signed-in user may start an organization, and owns it.
  server.post('/v1/organizations', session, async (req, reply) => {
    const { user_id } = sessionOf(req);
    const org = await app.accounts.createOrgOwnedBy(user_id, req.body, { type: 'user', user_id, ip: req.ip });
    return reply.code(201).send({ data: { ...org, role: 'OWNER' } });
  });

  orgRoute('GET', ORG, ({ org, role }) => Promise.resolve({ ...org, role }));
  orgRoute('PATCH', ORG, async ({ org, role, body, actor }) => ({
    ...(await app.accounts.updateOrg(org.id, body, actor)),
    role,
  }));
  orgRoute('DELETE', ORG, ({ org, actor }) => app.accounts.deleteOrg(org.id, actor));
  orgRoute('POST', `${ORG}/projects`, ({ org, body, actor }) => app.accounts.createProject(org.id, body, actor));
  orgRoute('PATCH', PROJECT, ({ params, body, actor }) => app.accounts.updateProject(params.project_id!, body, actor));
  orgRoute('DELETE', PROJECT, ({ params, actor }) => app.accounts.deleteProject(params.project_id!, actor));
  orgRoute('GET', `${ORG}/projects`, ({ org }) => app.accounts.listProjects(org.id));
  orgRoute('GET', PROJECT, ({ params }) => app.accounts.getProjectById(params.project_id!));
  orgRoute('GET', `${ORG}/members`, ({ org }) => app.accounts.listMembers(org.id));
  orgRoute('PATCH', `${ORG}/members/:user_id`, ({ org, params, body, role, actor }) =>
    app.members.changeMemberRole(org.id, params.user_id!, body, role, actor),
  );
  orgRoute('DELETE', `${ORG}/members/:user_id`, ({ org, params, role, actor }) =>
    app.members.removeMember(org.id, params.user_id!, role, actor),
  );
  orgRoute('POST', `${ORG}/invitations`, ({ org, body, user_id, role, actor }) =>
    app.members.invite(org.id, body, { user_id, role }, actor),
  );
  // The invitee: signed in (its address must be the invited one), or new, with a password.
  server.post<{ Params: { token: string } }>('/v1/invitations/:token/accept', async (req, reply) => {
    const token = bearer(req);
    const session = token === undefined ? undefined : await app.sessions.authenticate(token);
    const member = await app.members.acceptInvitation(req.params.token, session, req.body, req.ip);
    return reply.code(201).send({ data: member });
  });
  orgRoute('GET', `${ORG}/domains`, ({ org }) => app.domains.listDomains(org.id));
  orgRoute('GET', `${ORG}/domains/:domain_id`, async ({ org, params }) => {
    const d = await app.domains.getDomain(params.domain_id!);
    if (d.organization_id !== org.id) throw new AppError('not_found', `no domain ${params.domain_id}`);
    return d;
  });
  orgRoute('GET', `${PROJECT}/api-keys`, ({ params, query }) =>
    app.keys.listKeys(params.project_id!, parseInput(listKeysQuerySchema, query).include_revoked),
  );
  orgRoute('POST', `${PROJECT}/api-keys`, ({ params, body, user_id, actor }) =>
    app.keys.createKey(params.project_id!, body as never, user_id, actor),
  );
  orgRoute('DELETE', `${PROJECT}/api-keys/:key_id`, ({ params, actor }) =>
    app.keys.revokeKey(params.key_id!, actor, params.project_id),
  );
  orgRoute('GET', `${ORG}/audit-logs`, ({ org, query }) => {
    const q = parseInput(listAuditQuerySchema, query);
    return app.audit.list(org.id, q.before, q.limit);
  });
  orgRoute('GET', `${PROJECT}/templates`, ({ params }) => app.templates.list(params.project_id!));
  orgRoute('GET', `${PROJECT}/templates/:template_id`, ({ params }) =>
    app.templates.getTemplate(params.project_id!, params.template_id!),
  );
  orgRoute('POST', `${PROJECT}/templates`, ({ params, body, actor }) =>
    app.templates.create(params.project_id!, body as never, actor),
  );
  orgRoute('PATCH', `${PROJECT}/templates/:template_id`, ({ params, body, actor }) =>
    app.templates.update(params.project_id!, params.template_id!, body as never, actor),
  );
  orgRoute('DELETE', `${PROJECT}/templates/:template_id`, ({ params, actor }) =>
    app.templates.remove(params.project_id!, params.template_id!, actor),
  );
  orgRoute('GET', `${PROJECT}/suppressions`, ({ params, query }) => {
    const q = parseInput(listSuppressionsQuerySchema, query);
    return app.suppressions.list(params.project_id!, q.limit, q.after);
  });
}
