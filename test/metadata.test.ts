import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSvc } from './cli-runner.ts';
import { settle, startHookedDelivery, type DeliveryEnv } from './delivery-helpers.ts';
import type { WebhookReceiver } from './peers/webhook-receiver.ts';

// Metadata of a send (issue 35, item 4; decisions.md, "Metadata"): key/value pairs stored with
// the email, returned, filterable in the list and carried in every webhook of that email.

let d: DeliveryEnv;
let hooks: WebhookReceiver;
let close: () => Promise<void> = async () => {};

beforeAll(async () => {
  ({ d, hooks, close } = await startHookedDelivery(['queued', 'delivered']));
}, 60_000);
afterAll(() => close());

const api = (method: 'GET' | 'POST', url: string, payload?: object) =>
  d.env.server.inject({ method, url, headers: { authorization: `Bearer ${d.key}` }, ...(payload ? { payload } : {}) });
const send = (over: object) =>
  api('POST', '/v1/emails', { from: 'news@sender.test', to: ['m@dest.test'], subject: 'S', text: 'T', ...over });
const fieldsOf = (res: { statusCode: number; json: () => any }) => {
  expect(res.statusCode).toBe(422);
  return (res.json().error.details.fields as { field: string; message: string }[]).map((f) => [f.field, f.message]);
};
/** The bodies of the webhooks posted for `id`, once the dispatcher has sent what is due. */
async function webhooksOf(id: string, count: number) {
  const bodies = () => hooks.requests.map((r) => JSON.parse(r.body)).filter((b) => b.data?.email?.id === id);
  await expect
    .poll(async () => {
      await d.env.app.webhookDispatcher().runOnce();
      return bodies().length;
    })
    .toBe(count);
  return bodies();
}

describe('metadata', () => {
  it('is stored, returned, and carried in every webhook of the email; an email without has none', async () => {
    const metadata = { order_id: '42', 'customer-tier': 'gold', note: 'Åsa – ünïcode' };
    const res = await send({ metadata });
    expect(res.statusCode).toBe(202);
    const id = res.json().data.id;
    expect((await api('GET', `/v1/emails/${id}`)).json().data.metadata).toEqual(metadata);
    await settle(d.env);
    const bodies = await webhooksOf(id, 2);
    expect(bodies.map((b) => b.type).sort()).toEqual(['email.delivered', 'email.queued']);
    for (const b of bodies) expect(b.data.email.metadata).toEqual(metadata);

    const plain = (await send({})).json().data.id;
    expect((await api('GET', `/v1/emails/${plain}`)).json().data.metadata).toBeNull();
    await settle(d.env);
    for (const b of await webhooksOf(plain, 2)) expect(Object.keys(b.data.email)).not.toContain('metadata');
  });

  it('filters the list by key:value', async () => {
    const a = (await send({ metadata: { order_id: '1001' } })).json().data.id;
    const b = (await send({ metadata: { order_id: '1002', other: '1001' } })).json().data.id;
    const list = async (q: string) =>
      (await api('GET', `/v1/emails?metadata=${encodeURIComponent(q)}`)).json().data.map((e: { id: string }) => e.id);
    expect(await list('order_id:1001')).toEqual([a]);
    expect(await list('order_id:1002')).toEqual([b]);
    expect(await list('other:1001')).toEqual([b]);
    expect(await list('order_id:9')).toEqual([]);
    const bad = await api('GET', '/v1/emails?metadata=no-colon');
    expect(fieldsOf(bad)[0]![0]).toBe('metadata');
    const cli = await runSvc(
      d.env.dir,
      ['emails', 'list', '--project', d.env.init.project_id, '--metadata', 'order_id:1001', '--json'],
      d.env.cliEnv,
    );
    expect(cli.stderr).toBe('');
    expect(cli.json().map((e: { id: string; metadata: object }) => [e.id, e.metadata])).toEqual([
      [a, { order_id: '1001' }],
    ]);
  });

  it('refuses too many keys, a long value, a bad key and too many bytes, naming the field', async () => {
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v']));
    expect(fieldsOf(await send({ metadata: many }))).toEqual([['metadata', 'at most 20 keys']]);
    expect(fieldsOf(await send({ metadata: { k: 'x'.repeat(501) } }))).toEqual([
      ['metadata.k', 'a value is at most 500 characters'],
    ]);
    expect(fieldsOf(await send({ metadata: { 'a b': 'v' } }))[0]![0]).toBe('metadata.a b');
    const big = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, 'é'.repeat(250)]));
    expect(fieldsOf(await send({ metadata: big }))).toEqual([['metadata', 'at most 4096 bytes as JSON']]);
    expect(fieldsOf(await send({ metadata: { n: 1 } }))[0]![0]).toBe('metadata.n');
  });
});
