import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { App } from '../app.ts';
import {
  createProjectSchema,
  inviteSchema,
  memberRoleSchema,
  newOrgSchema,
  updateOrgSchema,
  updateProjectSchema,
  acceptInvitationSchema,
} from '../accounts/schema.ts';
import { listAuditQuerySchema, writeAuditCsv } from '../audit/index.ts';
import { AppError } from '../errors.ts';
import { reportDayOut, reportDaysQuerySchema } from '../inbound/index.ts';
import { listKeysQuerySchema } from '../keys/index.ts';
import { createKeySchema } from '../keys/schema.ts';
import { loginSchema } from '../sessions/schema.ts';
import {
  addSuppressionSchema,
  listSuppressionsQuerySchema,
  readSuppressionCsv,
  writeSuppressionCsv,
} from '../suppressions/index.ts';
import { createTemplateSchema, updateTemplateSchema } from '../templates/schema.ts';
import { parseInput } from '../validation.ts';
import { bearer, requireSession, sessionOf } from './auth.ts';
import * as out from './management-schemas.ts';
import { createOrgRouter, documentOperation, ORG, PROJECT, sendCsv } from './org-route.ts';
import { registerResendRoutes } from './routes-resend.ts';
import { registerWebhookRoutes } from './routes-webhooks.ts';
import { registerDashboardRoutes } from './routes-dashboard.ts';
import type { Readable } from 'node:stream';

/** What a CSV import answers: the count taken, and each refused line with its reason. */
const importResultOut = z.object({
  imported: z.number().int(),
  invalid: z.array(z.object({ line: z.number().int(), email: z.string(), message: z.string() })),
});

/** The body of POST …/domains over HTTP: the organization is the path's. */
const addDomainBody = z.strictObject({
  name: z.string().min(1).max(253),
  project_id: z.uuid().optional(),
  ed25519: z.boolean().optional(),
});

/** The body of PATCH …/domains/{id}: Ed25519 signing beside RSA, on or off. */
const updateDomainBody = z.strictObject({ ed25519: z.boolean() });

/** A CSV import body may be larger than a JSON request: it is streamed, never held whole. */
const CSV_IMPORT_BYTES = 256 * 1024 * 1024;

/** The Management API (session token; contract "Authentication" 7-8). */
export function registerManagementRoutes(server: FastifyInstance, app: App): void {
  const session = { preHandler: requireSession(app) };
  const orgRoute = createOrgRouter(server, app);

  const domainOf = (orgId: string, domainId: string) => app.domains.getDomainOf(orgId, domainId);

  // A CSV import streams its body to the use case; every other body is JSON.
  server.addContentTypeParser('text/csv', { bodyLimit: CSV_IMPORT_BYTES }, (_req, payload, done) =>
    done(null, payload),
  );

  documentOperation('POST', '/v1/auth/login', {
    summary: 'Sign in',
    body: loginSchema,
    response: out.tokensOut,
    status: 200,
  });
  documentOperation('POST', '/v1/auth/refresh', {
    summary: 'Rotate the refresh cookie',
    response: out.tokensOut,
    status: 200,
  });
  documentOperation('POST', '/v1/auth/logout', { summary: 'Sign out' });

  // The organizations the signed-in user belongs to, with the user's role in each.
  documentOperation('GET', '/v1/organizations', {
    summary: 'Organizations of the signed-in user',
    response: z.array(out.memberOrganizationOut),
  });
  server.get('/v1/organizations', session, async (req) => ({
    data: await app.accounts.listOrgsOfUser(sessionOf(req).user_id),
  }));

  // Any signed-in user may start an organization, and owns it.
  documentOperation('POST', '/v1/organizations', {
    summary: 'Create an organization (the creator owns it)',
    body: newOrgSchema,
    response: out.memberOrganizationOut,
  });
  server.post('/v1/organizations', session, async (req, reply) => {
    const { user_id } = sessionOf(req);
    const org = await app.accounts.createOrgOwnedBy(user_id, req.body, { type: 'user', user_id, ip: req.ip });
    return reply.code(201).send({ data: { ...org, role: 'OWNER' } });
  });

  const orgOut = out.memberOrganizationOut;
  orgRoute('GET', ORG, { summary: 'An organization', response: orgOut }, ({ org, role }) =>
    Promise.resolve({ ...org, role }),
  );
  orgRoute(
    'PATCH',
    ORG,
    {
      summary: "Rename an organization (its plan is the server operator's: `plan` is 403 forbidden)",
      body: updateOrgSchema,
      response: orgOut,
    },
    async ({ org, role, body, actor }) => ({ ...(await app.accounts.updateOrg(org.id, body, actor)), role }),
  );
  orgRoute('DELETE', ORG, { summary: 'Delete an organization and all it holds' }, ({ org, actor }) =>
    app.accounts.deleteOrg(org.id, actor),
  );
  orgRoute(
    'POST',
    `${ORG}/legal/dpa`,
    { summary: 'Sign the data-processing agreement (needed for LIVE keys)', response: out.organizationOut },
    ({ org, user_id, actor }) => app.accounts.signDpa(org.id, user_id, actor),
  );

  orgRoute(
    'POST',
    `${ORG}/projects`,
    { summary: 'Create a project', body: createProjectSchema, response: out.projectOut },
    ({ org, body, actor }) => app.accounts.createProject(org.id, body, actor),
  );
  orgRoute(
    'PATCH',
    PROJECT,
    { summary: 'Rename a project; `settings` is merged', body: updateProjectSchema, response: out.projectOut },
    ({ params, body, actor }) => app.accounts.updateProject(params.project_id!, body, actor),
  );
  orgRoute('DELETE', PROJECT, { summary: 'Delete a project' }, ({ params, actor }) =>
    app.accounts.deleteProject(params.project_id!, actor),
  );
  orgRoute('GET', `${ORG}/projects`, { summary: 'Projects', response: z.array(out.projectOut) }, ({ org }) =>
    app.accounts.listProjects(org.id),
  );
  orgRoute('GET', PROJECT, { summary: 'A project', response: out.projectOut }, ({ params }) =>
    app.accounts.getProjectById(params.project_id!),
  );

  orgRoute('GET', `${ORG}/members`, { summary: 'Members', response: z.array(out.memberOut) }, ({ org }) =>
    app.accounts.listMembers(org.id),
  );
  orgRoute(
    'PATCH',
    `${ORG}/members/:user_id`,
    { summary: "Change a member's role", body: memberRoleSchema, response: out.memberOut },
    ({ org, params, body, role, actor }) => app.members.changeMemberRole(org.id, params.user_id!, body, role, actor),
  );
  orgRoute('DELETE', `${ORG}/members/:user_id`, { summary: 'Remove a member' }, ({ org, params, role, actor }) =>
    app.members.removeMember(org.id, params.user_id!, role, actor),
  );
  orgRoute(
    'POST',
    `${ORG}/invitations`,
    { summary: 'Invite an address (the token is shown once)', body: inviteSchema, response: out.invitationOut },
    ({ org, body, user_id, role, actor }) => app.members.invite(org.id, body, { user_id, role }, actor),
  );
  // The invitee: signed in (its address must be the invited one), or new, with a password.
  documentOperation('POST', '/v1/invitations/{token}/accept', {
    summary: 'Accept an invitation (signed in, or signing up with a password)',
    body: acceptInvitationSchema,
    response: out.memberOut,
  });
  server.post<{ Params: { token: string } }>('/v1/invitations/:token/accept', async (req, reply) => {
    const token = bearer(req);
    const session = token === undefined ? undefined : await app.sessions.authenticate(token);
    const member = await app.members.acceptInvitation(req.params.token, session, req.body, req.ip);
    return reply.code(201).send({ data: member });
  });

  orgRoute('GET', `${ORG}/domains`, { summary: 'Sending domains', response: z.array(out.domainOut) }, ({ org }) =>
    app.domains.listDomains(org.id),
  );
  orgRoute(
    'POST',
    `${ORG}/domains`,
    {
      summary: 'Add a domain (with a new DKIM key and the records to publish)',
      body: addDomainBody,
      response: out.domainOut,
    },
    ({ org, body, actor }) => {
      const b = parseInput(addDomainBody, body);
      return app.domains.addDomain(
        { name: b.name, organization: org.id, project: b.project_id, ed25519: b.ed25519 },
        actor,
      );
    },
  );
  orgRoute(
    'GET',
    `${ORG}/domains/:domain_id`,
    { summary: 'A domain with its records and latest checks', response: out.domainOut },
    ({ org, params }) => domainOf(org.id, params.domain_id!),
  );
  orgRoute(
    'POST',
    `${ORG}/domains/:domain_id/verify`,
    { summary: 'Look the records up now', response: out.domainOut },
    async ({ org, params, actor }) => app.domains.verifyDomain((await domainOf(org.id, params.domain_id!)).id, actor),
  );
  orgRoute(
    'GET',
    `${ORG}/domains/:domain_id/reports`,
    {
      summary: "The domain's DMARC aggregate reports per day and source IP; flagged: not svc's and failing DMARC",
      query: reportDaysQuerySchema,
      response: z.array(reportDayOut),
    },
    async ({ org, params, query }) =>
      app.dmarc.listReportDays(
        (await domainOf(org.id, params.domain_id!)).id,
        parseInput(reportDaysQuerySchema, query).days,
      ),
  );
  orgRoute(
    'POST',
    `${ORG}/domains/:domain_id/rotate-dkim`,
    {
      summary: 'Rotate the DKIM keys: new keys under new selectors, signing once their records are seen',
      response: out.domainOut,
    },
    async ({ org, params, actor }) => app.domains.rotateDkim((await domainOf(org.id, params.domain_id!)).id, actor),
  );
  orgRoute(
    'PATCH',
    `${ORG}/domains/:domain_id`,
    { summary: 'Turn Ed25519 signing (beside RSA) on or off', body: updateDomainBody, response: out.domainOut },
    async ({ org, params, body, actor }) => {
      const b = parseInput(updateDomainBody, body);
      return app.domains.setEd25519((await domainOf(org.id, params.domain_id!)).id, b.ed25519, actor);
    },
  );
  orgRoute('DELETE', `${ORG}/domains/:domain_id`, { summary: 'Delete a domain' }, async ({ org, params, actor }) =>
    app.domains.deleteDomain((await domainOf(org.id, params.domain_id!)).id, actor),
  );
  orgRoute(
    'POST',
    `${PROJECT}/domains/:domain_id`,
    {
      summary: 'Bind a domain to a project (its LIVE keys may send from it once it is verified)',
      response: out.domainOut,
    },
    async ({ org, params, actor }) =>
      app.domains.bindDomain((await domainOf(org.id, params.domain_id!)).id, params.project_id!, actor),
  );
  orgRoute(
    'DELETE',
    `${PROJECT}/domains/:domain_id`,
    { summary: 'Unbind a domain from a project' },
    async ({ org, params, actor }) =>
      app.domains.unbindDomain((await domainOf(org.id, params.domain_id!)).id, params.project_id!, actor),
  );

  orgRoute(
    'GET',
    `${PROJECT}/api-keys`,
    { summary: 'API keys (never the key itself)', query: listKeysQuerySchema, response: z.array(out.apiKeyOut) },
    ({ params, query }) =>
      app.keys.listKeys(params.project_id!, parseInput(listKeysQuerySchema, query).include_revoked),
  );
  orgRoute(
    'POST',
    `${PROJECT}/api-keys`,
    { summary: 'Create an API key (the key is shown once)', body: createKeySchema, response: out.apiKeyOut },
    ({ params, body, user_id, actor }) => app.keys.createKey(params.project_id!, body as never, user_id, actor),
  );
  orgRoute('DELETE', `${PROJECT}/api-keys/:key_id`, { summary: 'Revoke an API key' }, ({ params, actor }) =>
    app.keys.revokeKey(params.key_id!, actor, params.project_id),
  );

  orgRoute(
    'GET',
    `${ORG}/audit-logs`,
    {
      summary: 'The audit log, newest first (`format=csv` streams all of it)',
      query: listAuditQuerySchema,
      response: z.array(out.auditLogOut),
      csv: true,
    },
    async ({ org, query, reply }) => {
      const q = parseInput(listAuditQuerySchema, query);
      if (q.format === 'csv') return sendCsv(reply, 'audit-log.csv', writeAuditCsv(app.audit.iterate(org.id)));
      return app.audit.list(org.id, q.before, q.limit);
    },
  );

  orgRoute('GET', `${PROJECT}/templates`, { summary: 'Templates', response: z.array(out.templateOut) }, ({ params }) =>
    app.templates.list(params.project_id!),
  );
  orgRoute(
    'GET',
    `${PROJECT}/templates/:template_id`,
    { summary: 'A template', response: out.templateOut },
    ({ params }) => app.templates.getTemplate(params.project_id!, params.template_id!),
  );
  orgRoute(
    'POST',
    `${PROJECT}/templates`,
    { summary: 'Create a template', body: createTemplateSchema, response: out.templateOut },
    ({ params, body, actor }) => app.templates.create(params.project_id!, body as never, actor),
  );
  orgRoute(
    'PATCH',
    `${PROJECT}/templates/:template_id`,
    { summary: 'Update a template (raises its version)', body: updateTemplateSchema, response: out.templateOut },
    ({ params, body, actor }) => app.templates.update(params.project_id!, params.template_id!, body as never, actor),
  );
  orgRoute('DELETE', `${PROJECT}/templates/:template_id`, { summary: 'Delete a template' }, ({ params, actor }) =>
    app.templates.remove(params.project_id!, params.template_id!, actor),
  );

  orgRoute(
    'GET',
    `${PROJECT}/suppressions`,
    {
      summary: 'The suppression list in address order (`format=csv` streams all of it)',
      query: listSuppressionsQuerySchema,
      response: z.array(out.suppressionOut),
      csv: true,
    },
    async ({ params, query, reply }) => {
      const q = parseInput(listSuppressionsQuerySchema, query);
      const pid = params.project_id!;
      if (q.format === 'csv') {
        return sendCsv(reply, 'suppressions.csv', writeSuppressionCsv(app.suppressions.iterate(pid)));
      }
      return app.suppressions.list(pid, q.limit, q.after);
    },
  );
  orgRoute(
    'POST',
    `${PROJECT}/suppressions`,
    { summary: 'Suppress an address', body: addSuppressionSchema, response: out.suppressionOut },
    ({ params, body, actor }) => app.suppressions.add(params.project_id!, body as never, actor),
  );
  orgRoute('DELETE', `${PROJECT}/suppressions/:email`, { summary: 'Send to an address again' }, ({ params, actor }) =>
    app.suppressions.remove(params.project_id!, params.email!, actor),
  );
  orgRoute(
    'POST',
    `${PROJECT}/suppressions/import`,
    {
      summary: 'Import a CSV (`email[,reason]` header; Content-Type text/csv); refused lines are listed',
      response: importResultOut,
      csvBody: true,
    },
    ({ params, body, actor }) => {
      if (!isStream(body)) {
        throw new AppError('request_validation_failed', 'Send the CSV as the body with Content-Type: text/csv');
      }
      return app.suppressions.importRows(params.project_id!, readSuppressionCsv(body), undefined, actor);
    },
  );
  registerResendRoutes(orgRoute, app);
  registerWebhookRoutes(orgRoute, app);
  registerDashboardRoutes(orgRoute, app);
}

function isStream(v: unknown): v is Readable {
  return typeof v === 'object' && v !== null && typeof (v as Readable).pipe === 'function';
}
