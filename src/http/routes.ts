import fastifyCookie from '@fastify/cookie';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { minRoleOf, type Role } from '../accounts/index.ts';
import type { Access } from '../keys/index.ts';
import { keptErrorHandler, requireKey, requireSession } from './auth.ts';
import type { Handler, HttpDeps } from './handler.ts';
import {
  memberRoute,
  ORG,
  PROJECT,
  type Documented,
  type MemberHandler,
  type Method,
  type Operation,
} from './org-route.ts';
import * as auth from './routes-auth.ts';
import * as dashboard from './routes-dashboard.ts';
import * as domains from './routes-domains.ts';
import * as emails from './routes-emails.ts';
import * as keys from './routes-keys.ts';
import * as ops from './routes-ops.ts';
import * as orgs from './routes-organizations.ts';
import * as receiving from './routes-receiving.ts';
import * as resend from './routes-resend.ts';
import * as suppressions from './routes-suppressions.ts';
import * as templates from './routes-templates.ts';
import * as top from './routes-top.ts';
import * as tracking from './routes-tracking.ts';
import * as web from './routes-web.ts';
import * as webhooks from './routes-webhooks.ts';

/** Who may call a route. */
type Open = { kind: 'public' } | { kind: 'key'; access: Access; kept?: true } | { kind: 'session' };
type Member = { kind: 'member'; role: Role };
export type Who = Open | Member;

/** Anyone: the route checks what credential it needs itself (a signed token, a password, a cookie). */
const PUBLIC: Open = { kind: 'public' };
/** An API key whose permission covers sending (contract, "Authentication" 1-6), checked before the body is read. */
const SEND: Open = { kind: 'key', access: 'send' };
/**
 * SEND, with a key kept in memory taken from there without reading the auth epoch: the accept
 * confirms the epoch inside its write transaction (keys/epoch.ts). Only `POST /v1/emails`: a
 * batch's emails can land in two transactions, and a raw send's few requests would gain little.
 */
const SEND_KEPT: Open = { kind: 'key', access: 'send', kept: true };
/** An API key whose permission covers reading. */
const READ: Open = { kind: 'key', access: 'read' };
/** Any signed-in user: a session token from login, never an API key (contract, "Authentication" 7). */
const SIGNED_IN: Open = { kind: 'session' };
/** A signed-in member of the path's organization with at least this role (src/accounts/roles.ts decides it). */
const VIEWER: Member = { kind: 'member', role: 'VIEWER' };
const DEVELOPER: Member = { kind: 'member', role: 'DEVELOPER' };
const ADMIN: Member = { kind: 'member', role: 'ADMIN' };
const OWNER: Member = { kind: 'member', role: 'OWNER' };

type OpenRoute = { method: Method; path: string; who: Open; handler: Handler | Documented<Handler> };
type MemberRoute = { method: Method; path: string; who: Member; handler: MemberHandler };
export type Route = OpenRoute | MemberRoute;
const isMemberRoute = (r: Route): r is MemberRoute => r.who.kind === 'member';

function route(method: Method, path: string, who: Member, handler: MemberHandler): Route;
function route(method: Method, path: string, who: Open, handler: Handler | Documented<Handler>): Route;
function route(method: Method, path: string, who: Who, handler: Route['handler']): Route {
  return { method, path, who, handler } as Route;
}

const WEBHOOK = `${PROJECT}/webhooks/:webhook_id`;

/**
 * Every HTTP route svc serves: method, path, who may call it, and its handler.
 * Registration walks this table (test/http-routes-table.test.ts holds fastify to it).
 * A GET also answers HEAD. Where one path has several methods, their order is the
 * order of /v1/openapi.json's operations.
 */
// prettier-ignore
export const ROUTES: readonly Route[] = [
  // Operations (cli.md) and the OpenAPI document
  route('GET',    '/healthz',                                   PUBLIC,    ops.getHealth),
  route('GET',    '/readyz',                                    PUBLIC,    ops.getReadiness),
  route('GET',    '/metrics',                                   PUBLIC,    ops.getMetrics),
  route('GET',    '/v1/openapi.json',                           PUBLIC,    ops.getOpenApi),

  // The web dashboard: one page and its assets; it reads everything through the management API
  route('GET',    '/',                                          PUBLIC,    web.getDashboard),
  route('GET',    '/assets/:file',                              PUBLIC,    web.getDashboardAsset),

  // Public API (API key)
  route('POST',   '/v1/emails',                                 SEND_KEPT, emails.sendEmail),
  route('POST',   '/v1/emails/batch',                           SEND,      emails.sendBatch),
  route('POST',   '/v1/emails/raw',                             SEND,      emails.sendRawEmail),
  route('GET',    '/v1/emails',                                 READ,      emails.listEmails),
  route('GET',    '/v1/emails/:id',                             READ,      emails.getEmail),
  route('PATCH',  '/v1/emails/:id',                             SEND,      emails.rescheduleEmail),
  route('POST',   '/v1/emails/:id/cancel',                      SEND,      emails.cancelEmail),
  route('GET',    '/v1/emails/:id/events',                      READ,      emails.listEmailEvents),
  route('GET',    '/v1/top',                                    READ,      top.getTopSnapshot),
  route('GET',    '/v1/top/emails/:id',                         READ,      top.getTopEmail),
  route('GET',    '/v1/received-emails',                        READ,      receiving.listReceivedEmails),
  route('GET',    '/v1/received-emails/:id',                    READ,      receiving.getReceivedEmail),
  route('GET',    '/v1/received-emails/:id/raw',                READ,      receiving.getReceivedEmailRaw),

  // Click and open tracking: the signed token in the path is the credential
  route('GET',    '/t/c/*',                                     PUBLIC,    tracking.trackClick),
  route('GET',    '/t/o/*',                                     PUBLIC,    tracking.trackOpen),
  // One-click unsubscribe (RFC 8058): the POST a mailbox provider sends, and a page for a person
  route('POST',   '/u/*',                                       PUBLIC,    tracking.unsubscribe),
  route('GET',    '/u/*',                                       PUBLIC,    tracking.unsubscribePage),
  // A received message's download links (issue 34): the signed, expiring token is the credential
  route('GET',    '/r/*',                                       PUBLIC,    receiving.downloadReceived),

  // Sessions: the refresh token travels in a cookie scoped to /v1/auth
  route('POST',   '/v1/auth/login',                             PUBLIC,    auth.login),
  route('POST',   '/v1/auth/refresh',                           PUBLIC,    auth.refresh),
  route('POST',   '/v1/auth/logout',                            PUBLIC,    auth.logout),

  // Management API (session token): organizations, projects, members
  route('GET',    '/v1/organizations',                          SIGNED_IN, orgs.listOrganizations),
  route('POST',   '/v1/organizations',                          SIGNED_IN, orgs.createOrganization),
  route('GET',    ORG,                                          VIEWER,    orgs.getOrganization),
  route('PATCH',  ORG,                                          OWNER,     orgs.updateOrganization),
  route('DELETE', ORG,                                          OWNER,     orgs.deleteOrganization),
  route('POST',   `${ORG}/legal/dpa`,                           OWNER,     orgs.signDpa),
  route('GET',    `${ORG}/usage`,                               VIEWER,    dashboard.getUsage),
  route('GET',    `${ORG}/audit-logs`,                          ADMIN,     orgs.listAuditLogs),
  route('POST',   `${ORG}/projects`,                            ADMIN,     orgs.createProject),
  route('GET',    `${ORG}/projects`,                            VIEWER,    orgs.listProjects),
  route('PATCH',  PROJECT,                                      ADMIN,     orgs.updateProject),
  route('DELETE', PROJECT,                                      ADMIN,     orgs.deleteProject),
  route('GET',    PROJECT,                                      VIEWER,    orgs.getProject),
  route('GET',    `${ORG}/members`,                             VIEWER,    orgs.listMembers),
  route('PATCH',  `${ORG}/members/:user_id`,                    ADMIN,     orgs.changeMemberRole),
  route('DELETE', `${ORG}/members/:user_id`,                    ADMIN,     orgs.removeMember),
  route('POST',   `${ORG}/invitations`,                         ADMIN,     orgs.inviteMember),
  route('GET',    `${ORG}/invitations`,                         VIEWER,    orgs.listInvitations),
  route('DELETE', `${ORG}/invitations/:invitation_id`,          ADMIN,     orgs.revokeInvitation),
  route('POST',   '/v1/invitations/:token/accept',              PUBLIC,    orgs.acceptInvitation),

  // Domains of an organization, bound to projects
  route('GET',    `${ORG}/domains`,                             VIEWER,    domains.listDomains),
  route('POST',   `${ORG}/domains`,                             ADMIN,     domains.addDomain),
  route('GET',    `${ORG}/domains/:domain_id`,                  VIEWER,    domains.getDomain),
  route('PATCH',  `${ORG}/domains/:domain_id`,                  ADMIN,     domains.updateDomain),
  route('DELETE', `${ORG}/domains/:domain_id`,                  ADMIN,     domains.deleteDomain),
  route('POST',   `${ORG}/domains/:domain_id/verify`,           ADMIN,     domains.verifyDomain),
  route('GET',    `${ORG}/domains/:domain_id/reports`,          VIEWER,    domains.listDmarcReports),
  route('POST',   `${ORG}/domains/:domain_id/rotate-dkim`,      ADMIN,     domains.rotateDkim),
  route('POST',   `${PROJECT}/domains/:domain_id`,              ADMIN,     domains.bindDomain),
  route('DELETE', `${PROJECT}/domains/:domain_id`,              ADMIN,     domains.unbindDomain),

  // A project's keys, templates and suppressions
  route('GET',    `${PROJECT}/api-keys`,                        DEVELOPER, keys.listApiKeys),
  route('POST',   `${PROJECT}/api-keys`,                        DEVELOPER, keys.createApiKey),
  route('DELETE', `${PROJECT}/api-keys/:key_id`,                DEVELOPER, keys.revokeApiKey),
  route('GET',    `${PROJECT}/templates`,                       VIEWER,    templates.listTemplates),
  route('POST',   `${PROJECT}/templates`,                       DEVELOPER, templates.createTemplate),
  route('GET',    `${PROJECT}/templates/:template_id`,          VIEWER,    templates.getTemplate),
  route('PATCH',  `${PROJECT}/templates/:template_id`,          DEVELOPER, templates.updateTemplate),
  route('DELETE', `${PROJECT}/templates/:template_id`,          DEVELOPER, templates.deleteTemplate),
  route('POST',   `${PROJECT}/templates/preview`,               VIEWER,    templates.previewTemplate),
  route('POST',   `${PROJECT}/templates/:template_id/test-send`, DEVELOPER, templates.testSendTemplate),
  route('GET',    `${PROJECT}/templates/:template_id/versions`, VIEWER,    templates.listTemplateVersions),
  route('GET',    `${PROJECT}/templates/:template_id/versions/:version`, VIEWER, templates.getTemplateVersion),
  route('POST',   `${PROJECT}/templates/:template_id/publish`,  DEVELOPER, templates.publishTemplate),
  route('GET',    `${PROJECT}/suppressions`,                    VIEWER,    suppressions.listSuppressions),
  route('POST',   `${PROJECT}/suppressions`,                    DEVELOPER, suppressions.addSuppression),
  route('DELETE', `${PROJECT}/suppressions/:email`,             DEVELOPER, suppressions.removeSuppression),
  route('POST',   `${PROJECT}/suppressions/import`,             DEVELOPER, suppressions.importSuppressions),

  // A project's emails and stats (the dashboard)
  route('GET',    `${PROJECT}/stats`,                           VIEWER,    dashboard.getProjectStats),
  route('GET',    `${PROJECT}/emails`,                          VIEWER,    dashboard.listProjectEmails),
  route('GET',    `${PROJECT}/emails/:email_id`,                VIEWER,    dashboard.getProjectEmail),
  route('GET',    `${PROJECT}/emails/:email_id/attachments/:position`, VIEWER, dashboard.getProjectEmailAttachment),
  route('POST',   `${PROJECT}/emails/:email_id/resend`,         DEVELOPER, resend.resendEmail),
  route('POST',   `${PROJECT}/emails/:email_id/cancel`,         DEVELOPER, resend.cancelProjectEmail),
  route('PATCH',  `${PROJECT}/emails/:email_id`,                DEVELOPER, resend.rescheduleProjectEmail),

  // A project's webhooks and their deliveries
  route('GET',    `${PROJECT}/webhooks`,                        VIEWER,    webhooks.listWebhooks),
  route('POST',   `${PROJECT}/webhooks`,                        DEVELOPER, webhooks.createWebhook),
  route('GET',    WEBHOOK,                                      VIEWER,    webhooks.getWebhook),
  route('PATCH',  WEBHOOK,                                      DEVELOPER, webhooks.updateWebhook),
  route('DELETE', WEBHOOK,                                      DEVELOPER, webhooks.deleteWebhook),
  route('POST',   `${WEBHOOK}/rotate-secret`,                   DEVELOPER, webhooks.rotateWebhookSecret),
  route('POST',   `${WEBHOOK}/test`,                            DEVELOPER, webhooks.testWebhook),
  route('GET',    `${WEBHOOK}/deliveries`,                      VIEWER,    webhooks.listWebhookDeliveries),
  route('GET',    `${WEBHOOK}/deliveries/:delivery_id`,         VIEWER,    webhooks.getWebhookDelivery),
  route('POST',   `${WEBHOOK}/deliveries/:delivery_id/redeliver`, DEVELOPER, webhooks.redeliverWebhook),

  // A project's routes of received mail, and the messages they took (issue 34)
  route('GET',    `${PROJECT}/routes`,                          VIEWER,    receiving.listRoutes),
  route('POST',   `${PROJECT}/routes`,                          DEVELOPER, receiving.createRoute),
  route('GET',    `${PROJECT}/routes/:route_id`,                VIEWER,    receiving.getRoute),
  route('PATCH',  `${PROJECT}/routes/:route_id`,                DEVELOPER, receiving.updateRoute),
  route('DELETE', `${PROJECT}/routes/:route_id`,                DEVELOPER, receiving.deleteRoute),
  route('GET',    `${PROJECT}/received-emails`,                 VIEWER,    receiving.listReceived),
  route('GET',    `${PROJECT}/received-emails/:received_id`,    VIEWER,    receiving.getReceived),
  route('DELETE', `${PROJECT}/received-emails/:received_id`,    DEVELOPER, receiving.deleteReceived),
  route('GET',    `${PROJECT}/received-emails/:received_id/raw`, VIEWER,   receiving.getReceivedRaw),
  route('GET',    `${PROJECT}/received-emails/:received_id/attachments/:index`, VIEWER, receiving.getReceivedAttachment),
];

/** The operations /v1/openapi.json documents beside the Public API's: those whose handler carries a doc. */
export function documentedOperations(): Operation[] {
  return ROUTES.flatMap((r) => ('doc' in r.handler ? [{ method: r.method, path: r.path, ...r.handler.doc }] : []));
}

/**
 * Registers every route of the table with its auth: an API key's check runs on
 * request (before the body is read), a session's before the handler (after it).
 * Only the /v1/auth routes read or set a cookie: the cookie plugin's hooks run in their scope alone.
 */
export function registerRoutes(server: FastifyInstance, deps: HttpDeps): void {
  suppressions.acceptCsvBodies(server);
  const withCookie = (r: Route) => r.path.startsWith(auth.COOKIE_PATH);
  for (const r of ROUTES.filter((r) => !withCookie(r))) server.route(fastifyRouteOf(r, deps));
  void server.register(async (scope) => {
    await scope.register(fastifyCookie);
    for (const r of ROUTES.filter(withCookie)) scope.route(fastifyRouteOf(r, deps));
  });
}

function fastifyRouteOf(r: Route, deps: HttpDeps): RouteOptions {
  const { app } = deps;
  const at = { method: r.method, url: r.path };
  if (isMemberRoute(r)) {
    const min = minRoleOf(r.method, r.path);
    if (min !== r.who.role) {
      throw new Error(`${r.method} ${r.path}: the table says ${r.who.role}, src/accounts/roles.ts ${min ?? 'nothing'}`);
    }
    return { ...at, preHandler: requireSession(app), handler: memberRoute(app, r.method, min, r.handler) };
  }
  const handle = 'handle' in r.handler ? r.handler.handle : r.handler;
  const handler: RouteOptions['handler'] = (req, reply) => handle(req, reply, deps);
  switch (r.who.kind) {
    case 'public':
      return { ...at, handler };
    case 'key': {
      const { access, kept } = r.who;
      if (!kept) return { ...at, onRequest: requireKey(app, access), handler };
      return {
        ...at,
        onRequest: requireKey(app, access, { kept }),
        handler,
        errorHandler: keptErrorHandler(app),
      };
    }
    case 'session':
      return { ...at, preHandler: requireSession(app), handler };
  }
}
