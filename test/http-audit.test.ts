import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_ROLE } from '../src/accounts/index.ts';
import { createDomainsEnv, type DomainsEnv } from './domains-helpers.ts';
import { caller, signInMembers, type Method } from './management-helpers.ts';
import { signingDomainRows } from './signing-domain.ts';

// Every management write leaves its audit row, with the signed-in user and the
// client's address as the actor (issue 11: "audit logs (every management write)").

let denv: DomainsEnv;
let tokens: Record<string, string> = {};
beforeAll(async () => {
  denv = await createDomainsEnv('UNLIMITED');
  tokens = await signInMembers(denv.env, []);
}, 60_000);
afterAll(() => denv.close());

const call = (...args: Parameters<ReturnType<typeof caller>>) => caller(() => denv.env, tokens)(...args);
const newest = async () =>
  (
    await denv.env.query<{ n: number; action: string; actor_type: string; actor_id: string; ip: string }>(
      `SELECT ${denv.env.auditOrder} AS n, action, actor_type, actor_id, ip FROM audit_logs ORDER BY ${denv.env.auditOrder} DESC LIMIT 1`,
    )
  )[0];

/** Records a skipped delivery for `webhookId` (inactive for a moment), for redelivery. */
async function skippedDelivery(webhookId: string): Promise<string> {
  await denv.env.query('UPDATE webhooks SET is_active = 0 WHERE id = ?', webhookId);
  await denv.env.server.inject({
    method: 'POST',
    url: '/v1/emails',
    headers: { authorization: `Bearer ${await denv.env.key()}` },
    payload: { from: 'a@example.com', to: ['c@example.net'], subject: 'Hi', text: 'Hello' },
  });
  await denv.env.query('UPDATE webhooks SET is_active = 1 WHERE id = ?', webhookId);
  // The event happened while it was inactive: the dispatcher records it as skipped.
  await denv.env.app.webhookDispatcher().runOnce();
  return (await denv.env.query<{ id: string }>('SELECT id FROM webhook_deliveries WHERE webhook_id = ?', webhookId))[0]!
    .id;
}

/** A message held by the route at audit.example.org, received as the inbound listener hands one over. */
async function receivedMessage(): Promise<string> {
  const raw = Buffer.from(
    'From: a@example.net\r\nTo: desk@audit.example.org\r\nSubject: Hi\r\nMessage-ID: <m1@example.net>\r\n\r\nHello\r\n',
  );
  const [held] = await denv.env.app.receiving.receive(raw, {
    mailFrom: 'a@example.net',
    rcptTo: ['desk@audit.example.org'],
    remoteIp: '127.0.0.1',
    helo: 'example.net',
  });
  return held!.id;
}

/** A LIVE email scheduled two hours ahead from a verified domain of the project, to move and cancel. */
async function scheduledEmail(): Promise<string> {
  const env = denv.env;
  const { statements } = signingDomainRows({
    organizationId: env.init.organization_id,
    projectId: env.init.project_id,
    name: 'sched.example.org',
    selector: 'svc202603',
  });
  for (const [sql, params] of statements) await env.query(sql, ...params);
  const res = await env.server.inject({
    method: 'POST',
    url: '/v1/emails',
    headers: { authorization: `Bearer ${await env.key({ env: 'LIVE' })}` },
    payload: {
      from: 'a@sched.example.org',
      to: ['b@example.net'],
      subject: 'Hi',
      text: 'Hello',
      scheduled_at: 'in 2 hours',
    },
  });
  expect(res.statusCode).toBe(202);
  return res.json<{ data: { id: string } }>().data.id;
}

describe('the audit log', () => {
  it('has a row for every write route, by the user from its address', async () => {
    const env = denv.env;
    const ORG = '/v1/organizations/:organization_id';
    const PROJECT = `${ORG}/projects/:project_id`;
    const O = `/v1/organizations/${env.init.organization_id}`;
    const P = `${O}/projects/${env.init.project_id}`;
    const ownerId = (await env.app.accounts.listMembers(env.init.organization_id))[0]!.user_id;
    await env.app.accounts.createUser({ email: 'member@example.com', password: 'member-password-1' });
    const member = await env.app.accounts.addMember(env.init.organization_id, {
      email: 'member@example.com',
      role: 'VIEWER',
    });
    const testKey = await env.key();
    const sent = await env.server.inject({
      method: 'POST',
      url: '/v1/emails',
      headers: { authorization: `Bearer ${testKey}` },
      payload: { from: 'a@example.com', to: ['b@example.net'], subject: 'Hi', text: 'Hello' },
    });
    const emailId = sent.json<{ data: { id: string } }>().data.id;
    const scheduledId = await scheduledEmail();

    const ids: Record<string, string> = {};
    // Each write in an order where what it needs exists: [route pattern, URL, body, content type].
    const writes: [string, () => string, (object | string)?, string?][] = [
      [`PATCH ${ORG}`, () => O, { name: 'Acme Two' }],
      [`POST ${ORG}/legal/dpa`, () => `${O}/legal/dpa`],
      [`POST ${ORG}/projects`, () => `${O}/projects`, { name: 'Second' }],
      [`PATCH ${PROJECT}`, () => `${O}/projects/${ids.project}`, { settings: { click_tracking: true } }],
      [`POST ${ORG}/invitations`, () => `${O}/invitations`, { email: 'new@example.net', role: 'VIEWER' }],
      [`DELETE ${ORG}/invitations/:invitation_id`, () => `${O}/invitations/${ids.invitation}`],
      [`PATCH ${ORG}/members/:user_id`, () => `${O}/members/${member.user_id}`, { role: 'DEVELOPER' }],
      [`DELETE ${ORG}/members/:user_id`, () => `${O}/members/${member.user_id}`],
      [`POST ${ORG}/domains`, () => `${O}/domains`, { name: 'audit.example.org' }],
      [`POST ${ORG}/domains/:domain_id/verify`, () => `${O}/domains/${ids.domain}/verify`],
      [`POST ${ORG}/domains/:domain_id/rotate-dkim`, () => `${O}/domains/${ids.domain}/rotate-dkim`],
      // Ed25519 turned on while the RSA rotation waits for its record: a key of its own, pending too.
      // Receiving too, for the routes below.
      [`PATCH ${ORG}/domains/:domain_id`, () => `${O}/domains/${ids.domain}`, { ed25519: true, receiving: true }],
      [`POST ${PROJECT}/domains/:domain_id`, () => `${P}/domains/${ids.domain}`],
      [`POST ${PROJECT}/routes`, () => `${P}/routes`, { pattern: '*@audit.example.org', action: 'hold' }],
      [
        `PATCH ${PROJECT}/routes/:route_id`,
        () => `${P}/routes/${ids.route}`,
        { action: 'forward', forward_to: ['desk@example.net'] },
      ],
      [`DELETE ${PROJECT}/received-emails/:received_id`, () => `${P}/received-emails/${ids.received}`],
      [`DELETE ${PROJECT}/routes/:route_id`, () => `${P}/routes/${ids.route}`],
      [`DELETE ${PROJECT}/domains/:domain_id`, () => `${P}/domains/${ids.domain}`],
      [`POST ${PROJECT}/api-keys`, () => `${P}/api-keys`, { name: 'ci', env: 'TEST' }],
      [`DELETE ${PROJECT}/api-keys/:key_id`, () => `${P}/api-keys/${ids.key}`],
      [
        `POST ${PROJECT}/templates`,
        () => `${P}/templates`,
        { name: 'W', slug: 'w', subject_template: 'Hi', text_template: 'x' },
      ],
      [
        `PATCH ${PROJECT}/templates/:template_id`,
        () => `${P}/templates/${ids.template}`,
        { subject_template: 'Hello' },
      ],
      [
        `POST ${PROJECT}/templates/:template_id/publish`,
        () => `${P}/templates/${ids.template}/publish`,
        { version: 2 },
      ],
      [
        `POST ${PROJECT}/templates/:template_id/test-send`,
        () => `${P}/templates/${ids.template}/test-send`,
        { to: 'test@example.net', from: 'a@example.com', env: 'TEST' },
      ],
      [`DELETE ${PROJECT}/templates/:template_id`, () => `${P}/templates/${ids.template}`],
      [`POST ${PROJECT}/suppressions`, () => `${P}/suppressions`, { email: 'gone@example.net' }],
      [`DELETE ${PROJECT}/suppressions/:email`, () => `${P}/suppressions/gone@example.net`],
      [`POST ${PROJECT}/suppressions/import`, () => `${P}/suppressions/import`, 'email\nx@example.net\n', 'text/csv'],
      [`POST ${PROJECT}/emails/:email_id/resend`, () => `${P}/emails/${emailId}/resend`],
      [`PATCH ${PROJECT}/emails/:email_id`, () => `${P}/emails/${scheduledId}`, { scheduled_at: 'in 3 hours' }],
      [`POST ${PROJECT}/emails/:email_id/cancel`, () => `${P}/emails/${scheduledId}/cancel`],
      [`POST ${PROJECT}/webhooks`, () => `${P}/webhooks`, { url: 'https://hooks.example.com/svc', events: ['*'] }],
      [`PATCH ${PROJECT}/webhooks/:webhook_id`, () => `${P}/webhooks/${ids.webhook}`, { events: ['sent'] }],
      [`POST ${PROJECT}/webhooks/:webhook_id/rotate-secret`, () => `${P}/webhooks/${ids.webhook}/rotate-secret`],
      [
        `POST ${PROJECT}/webhooks/:webhook_id/deliveries/:delivery_id/redeliver`,
        () => `${P}/webhooks/${ids.webhook}/deliveries/${ids.delivery}/redeliver`,
      ],
      [`DELETE ${PROJECT}/webhooks/:webhook_id`, () => `${P}/webhooks/${ids.webhook}`],
      [`DELETE ${ORG}/domains/:domain_id`, () => `${O}/domains/${ids.domain}`],
      [`DELETE ${PROJECT}`, () => `${O}/projects/${ids.project}`],
      [`DELETE ${ORG}`, () => O],
    ];
    // A test ping writes nothing: it sends a POST and answers how it went; a preview only renders.
    const reads = (k: string) => k.startsWith('GET ') || k.endsWith('/test') || k.endsWith('/templates/preview');
    const writeRoutes = Object.keys(MIN_ROLE).filter((k) => !reads(k));
    expect(writes.map(([pattern]) => pattern).sort()).toEqual(writeRoutes.sort());

    for (const [pattern, url, body, type] of writes) {
      const before = (await newest())?.n ?? 0;
      const res = await call(pattern.split(' ')[0] as Method, url(), 'OWNER', body, type);
      expect([pattern, res.statusCode < 300]).toEqual([pattern, true]);
      const data = res.statusCode === 204 ? undefined : res.json<{ data: { id?: string } }>().data;
      if (pattern === `POST ${ORG}/projects`) ids.project = data!.id!;
      if (pattern === `POST ${ORG}/domains`) ids.domain = data!.id!;
      if (pattern === `POST ${ORG}/invitations`) ids.invitation = data!.id!;
      if (pattern === `POST ${PROJECT}/api-keys`) ids.key = data!.id!;
      if (pattern === `POST ${PROJECT}/templates`) ids.template = data!.id!;
      if (pattern === `POST ${PROJECT}/webhooks`) ids.webhook = data!.id!;
      if (pattern === `POST ${PROJECT}/routes`) ids.route = data!.id!;
      const row = (await newest())!;
      expect([pattern, row.n > before]).toEqual([pattern, true]);
      expect([pattern, row.actor_type, row.actor_id, row.ip]).toEqual([pattern, 'user', ownerId, '127.0.0.1']);
      // A skipped record to redeliver: the webhook inactive for a moment while an event is recorded.
      if (pattern === `POST ${PROJECT}/webhooks`) ids.delivery = await skippedDelivery(ids.webhook!);
      // A message the route took, to delete (received as the inbound listener hands it over).
      if (pattern === `POST ${PROJECT}/routes`) ids.received = await receivedMessage();
    }
  });
});
