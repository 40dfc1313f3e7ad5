// Every SQLite read on the hot paths keeps its prepared plan, found by running the paths
// themselves rather than by naming each read.
//
// test/sqlite-prepared-once.test.ts explains the cost: SQLite re-prepares a statement whose plan
// looked at a bound value each time a value is bound to it, and better-sqlite3 then compiles a
// new function to build its rows (277 µs of CPU a call for a claimed email's 46 columns, issue
// 36). That file checks named reads; this one runs the paths a server runs all day, as a
// client (over HTTP and through the SMTP relay), the delivery engine and the webhook dispatcher
// drive them, three times with different values, and counts the row builders compiled per
// statement in the second and third passes. A statement compiles its builder on the first row it
// returns and again only after a re-prepare, so a statement that compiles twice in two passes is
// re-prepared on its values: it must write `+?` (decisions.md). A statement that first runs in a
// later pass compiles once, which is allowed.
import Database from 'better-sqlite3';
import { compilesPerStatement } from './row-builders.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestEnv } from './harness.ts';
import {
  listenInbound,
  mailNullSender,
  settle,
  startHookedDelivery,
  type DeliveryEnv,
  type HookedDelivery,
} from './delivery-helpers.ts';
import { dsn } from './inbound-helpers.ts';
import type { MxPeer } from './peers/mx.ts';
import type { WebhookReceiver } from './peers/webhook-receiver.ts';
import { login } from './management-helpers.ts';
import { relayClient } from './relay-helpers.ts';

describe('the SQLite reads of the hot paths are prepared once (each path run three times)', () => {
  let hooked: HookedDelivery;
  let mx: MxPeer;
  let hooks: WebhookReceiver;
  let d: DeliveryEnv;
  let env: TestEnv;
  let testKey: string;
  let owner: string;
  let relay: Awaited<ReturnType<typeof relayClient>>;
  let inbound: Awaited<ReturnType<typeof listenInbound>>;

  beforeAll(async () => {
    // Every event type goes to a webhook, so the outbox and its dispatcher run too.
    hooked = await startHookedDelivery(['*']);
    ({ mx, hooks, d } = hooked);
    env = d.env;
    testKey = await env.key({ env: 'TEST' });
    owner = await login(env, 'owner@example.com', 'owner-password-1');
    relay = await relayClient(env.app, d.key);
    inbound = await listenInbound(env);
  });
  afterAll(async () => {
    await relay?.close();
    await inbound?.inbound.close();
    await hooked?.close();
  });

  const ok = (res: { statusCode: number; body: string }, status = 200) => {
    if (res.statusCode !== status) throw new Error(`${res.statusCode} ${res.body}`);
    return JSON.parse(res.body) as { data: any };
  };
  const get = (url: string, token: string) =>
    env.server.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
  const post = (url: string, token: string, payload: object) =>
    env.server.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}` }, payload });

  /** One pass over the paths, with values of its own (`n`). */
  async function pass(n: number): Promise<void> {
    // Sends: LIVE (delivered below), TEST, a batch; each with three recipients and a tag.
    const to = [`a${n}@dest.test`, `b${n}@dest.test`, `c${n}@dest.test`];
    const ids = [
      await d.send(to, { tags: [`t${n}`], subject: `Order ${n}` }),
      await d.send(to.slice(0, 2), { tags: [`t${n}`], subject: `Order ${n}b` }),
    ];
    // A message submitted over SMTP to the relay (LIVE: delivered too).
    await relay.transport.sendMail({ from: 'news@sender.test', to, subject: `Relayed ${n}`, text: 'Hi' });
    const simulated = ok(
      await post('/v1/emails', testKey, {
        from: 'news@sender.test',
        to,
        subject: `Test ${n}`,
        text: 'Hi',
        tags: ['x'],
      }),
      202,
    );
    ok(
      await post('/v1/emails/batch', testKey, {
        emails: [
          { from: 'news@sender.test', to: [`d${n}@example.net`], subject: `B${n}`, text: 'Hi' },
          { from: 'news@sender.test', to: [`e${n}@example.net`], subject: `B${n}`, text: 'Hi' },
        ],
      }),
      202,
    );
    // The delivery engine claims, builds, sends and records them (real SMTP to the MX peer).
    await settle(env);
    // A bounce comes back to the return path one recipient's copy carried (svc's inbound MX).
    const bounced = `c${n}@dest.test`;
    const returnPath = mx.received.find((m) => m.to.includes(bounced))!.from;
    const report = dsn(returnPath, [{ address: bounced, status: '5.1.1', diagnostic: '550 5.1.1 no such user' }]);
    expect((await mailNullSender(inbound.port, returnPath, report)).data).toMatch(/^250/);
    // Public API reads: pages, filters, one email, its events, svc top's readings.
    const page = ok(await get('/v1/emails?limit=3', d.key));
    const before = page.data.at(-1).id as string;
    ok(await get(`/v1/emails?limit=2&before=${before}`, d.key));
    ok(await get('/v1/emails?status=DELIVERED&limit=2', d.key));
    for (const id of [...ids, simulated.data.id as string]) {
      ok(await get(`/v1/emails/${id}`, d.key));
      ok(await get(`/v1/emails/${id}/events`, d.key));
      ok(await get(`/v1/top/emails/${id}`, d.key));
    }
    ok(await get('/v1/top', d.key));
    // The dashboard's and the management API's reads of the project.
    const org = `/v1/organizations/${env.init.organization_id}`;
    const project = `${org}/projects/${env.init.project_id}`;
    for (const url of [
      `${project}/emails?limit=5`,
      `${project}/emails/${ids[0]}`,
      `${project}/api-keys`,
      `${project}/suppressions`,
      `${project}/webhooks`,
      `${project}/templates`,
      `${project}/stats?granularity=day&from=2026-03-01&to=2026-04-01`,
      `${org}/domains`,
      `${org}/projects`,
      `${org}/usage`,
      `${org}/audit-logs`,
    ]) {
      ok(await get(url, owner));
    }
    // The dispatcher posts what the pass's events put in the outbox, until nothing more is due.
    for (let posted = -1; posted !== hooks.requests.length;) {
      posted = hooks.requests.length;
      await env.app.webhookDispatcher().runOnce();
    }
    // Each pass delivered what it sent, and told the webhook.
    expect(mx.received.filter((m) => m.to.includes(`a${n}@dest.test`))).toHaveLength(3);
    const told = hooks.requests.map((r) => JSON.parse(r.body) as { type: string; data?: { email?: { id?: string } } });
    expect(told.filter((b) => b.data?.email?.id === ids[0] && b.type === 'email.delivered')).toHaveLength(3);
  }

  it('no statement compiles its rows on every call', async () => {
    await pass(1);
    const compiles = await compilesPerStatement(async () => {
      await pass(2);
      await pass(3);
    });
    const everyCall = [...compiles]
      .filter(([, n]) => n >= 2)
      .map(([st, n]) => `${n}× ${st.source.replace(/\s+/g, ' ')}`);
    expect(everyCall).toEqual([]);
  });

  it('the count sees a statement re-prepared on its values (the control)', async () => {
    const db = new Database(':memory:');
    db.exec(`CREATE TABLE a (id INTEGER PRIMARY KEY, x TEXT); CREATE TABLE b (id INTEGER PRIMARY KEY, y TEXT);
      INSERT INTO a VALUES (1, 'a'), (2, 'b'), (3, 'c'); INSERT INTO b VALUES (1, 'a'), (2, 'b'), (3, 'c')`);
    const bare = db.prepare('SELECT a.*, b.y FROM a JOIN b ON b.id = a.id WHERE a.id = ?');
    bare.get(1);
    const compiles = await compilesPerStatement(() => {
      bare.get(2);
      bare.get(3);
    });
    expect(compiles.get(bare)).toBe(2);
    db.close();
  });
});
