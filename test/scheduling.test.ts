import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MxPeer } from './peers/mx.ts';
import { settle, startHookedDelivery, type DeliveryEnv } from './delivery-helpers.ts';
import { relayClient } from './relay-helpers.ts';
import { runSvc } from './cli-runner.ts';
import type { WebhookReceiver } from './peers/webhook-receiver.ts';

// Scheduled sending (issue 35, item 1; decisions.md, "Scheduled sending"): a send with
// `scheduled_at` waits in the queue until its time, on the injected clock, then goes out once;
// until it starts it may be cancelled or moved.

let mx: MxPeer;
let d: DeliveryEnv;
let hooks: WebhookReceiver;
let close: () => Promise<void> = async () => {};
const HOUR = 3_600_000;
// --delivery-max-age is 1 h here: a schedule days ahead must count it from its time, not its acceptance.
beforeAll(async () => {
  ({ mx, d, hooks, close } = await startHookedDelivery(['queued', 'delivered', 'canceled']));
}, 60_000);
afterAll(() => close());

const api = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object, key = d.key) =>
  d.env.server.inject({ method, url, headers: { authorization: `Bearer ${key}` }, ...(payload ? { payload } : {}) });
const deliveredTo = (to: string) => mx.received.filter((m) => m.to.includes(to));
const iso = (ms: number) => new Date(ms).toISOString();

/** Moves the clock by `ms` and lets delivery work through what is due then. */
async function advance(ms: number) {
  d.env.clock.advance(ms);
  await settle(d.env);
}

function fieldOf(res: { statusCode: number; json: () => any }) {
  expect(res.statusCode).toBe(422);
  const err = res.json().error;
  expect(err.code).toBe('request_validation_failed');
  return err.details.fields[0] as { field: string; message: string };
}

describe('a scheduled send', () => {
  it('waits until its time, however long the delivery max age, then goes out once, dated then', async () => {
    const at = d.env.clock.now() + 2 * 24 * HOUR;
    const id = await d.send(['later@dest.test'], { scheduled_at: iso(at) });
    const email = (await api('GET', `/v1/emails/${id}`)).json().data;
    expect(email).toMatchObject({ status: 'QUEUED', scheduled_at: iso(at) });
    expect((await api('GET', `/v1/emails/${id}/events`)).json().data[0]).toMatchObject({
      type: 'queued',
      data: { scheduled_at: iso(at) },
    });
    await settle(d.env);
    await advance(2 * 24 * HOUR - 1000);
    expect(deliveredTo('later@dest.test')).toHaveLength(0);
    expect((await d.email(id)).status).toBe('QUEUED');
    await advance(1000);
    expect((await d.email(id)).status).toBe('DELIVERED');
    const [m] = deliveredTo('later@dest.test');
    expect(mx.received.filter((x) => x.to.includes('later@dest.test'))).toHaveLength(1);
    expect(new Date(/^Date: (.*)$/m.exec(m!.raw.toString())![1]!).getTime()).toBe(Math.floor(at / 1000) * 1000);
  });

  it('reads "in 1 hour" against the server clock', async () => {
    const now = d.env.clock.now();
    const id = await d.send(['inhour@dest.test'], { scheduled_at: 'in 1 hour' });
    expect((await d.email(id)).scheduled_at).toBe(iso(now + HOUR));
    await advance(HOUR - 1);
    expect(deliveredTo('inhour@dest.test')).toHaveLength(0);
    await advance(1);
    expect(deliveredTo('inhour@dest.test')).toHaveLength(1);
  });

  it('refuses the past, beyond 30 days and what is not a time, naming scheduled_at', async () => {
    const send = (scheduled_at: string) =>
      api('POST', '/v1/emails', {
        from: 'news@sender.test',
        to: ['x@dest.test'],
        subject: 'S',
        text: 'T',
        scheduled_at,
      });
    expect(fieldOf(await send(iso(d.env.clock.now() - HOUR)))).toMatchObject({
      field: 'scheduled_at',
      message: expect.stringMatching(/in the past/),
    });
    expect(fieldOf(await send('in 31 days'))).toMatchObject({
      field: 'scheduled_at',
      message: expect.stringMatching(/more than 30 days/),
    });
    expect(fieldOf(await send('next tuesday'))).toMatchObject({ field: 'scheduled_at' });
    expect(fieldOf(await send('2026-03-20T10:00:00'))).toMatchObject({ field: 'scheduled_at' });
  });

  it('applies the suppression list at acceptance, as any send', async () => {
    await d.env.app.suppressions.add(d.env.init.project_id, { email: 'gone@dest.test', reason: 'HARD_BOUNCE' });
    const res = await api('POST', '/v1/emails', {
      from: 'news@sender.test',
      to: ['gone@dest.test'],
      subject: 'S',
      text: 'T',
      scheduled_at: 'in 1 hour',
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toMatchObject({
      code: 'all_recipients_suppressed',
      details: { skipped_recipients: [{ email: 'gone@dest.test', reason: 'HARD_BOUNCE' }] },
    });
  });

  it('goes to no address that joined the suppression list while it waited: CANCELED for it, sent to the rest', async () => {
    const pid = d.env.init.project_id;
    const id = await d.send(['stays@dest.test', 'Leaves@dest.test'], { scheduled_at: 'in 1 hour' });
    const alone = await d.send(['leaves@dest.test'], { scheduled_at: 'in 1 hour' });
    await d.env.app.suppressions.add(pid, { email: 'leaves@dest.test', reason: 'UNSUBSCRIBE' });
    const listedAt = iso(d.env.clock.now());
    await advance(HOUR);
    expect(deliveredTo('stays@dest.test')).toHaveLength(1);
    expect(deliveredTo('Leaves@dest.test')).toHaveLength(0);
    expect(deliveredTo('leaves@dest.test')).toHaveLength(0);
    expect((await d.email(id)).status).toBe('DELIVERED');
    expect((await d.email(alone)).status).toBe('CANCELED');
    const rows = await d.recipients(id);
    expect(rows.map((r) => [r.address, r.status])).toEqual([
      ['stays@dest.test', 'DELIVERED'],
      ['Leaves@dest.test', 'CANCELED'],
    ]);
    expect(rows[1]!.last_error).toBe(
      `not sent: the address is on the suppression list (UNSUBSCRIBE since ${listedAt})`,
    );
    expect((await d.events(alone)).find((e) => e.type === 'canceled')).toEqual({
      type: 'canceled',
      recipient: 'leaves@dest.test',
      reason: 'suppressed',
      suppression_reason: 'UNSUBSCRIBE',
      suppressed_at: listedAt,
    });
    const read = (await api('GET', `/v1/emails/${alone}`)).json().data;
    expect(read.status).toBe('CANCELED');
    await expect
      .poll(async () => {
        await d.env.app.webhookDispatcher().runOnce();
        return hooks.requests
          .map((r) => JSON.parse(r.body))
          .filter((b) => b.data?.email?.id === alone)
          .map((b) => b.type);
      })
      .toContain('email.canceled');
  });

  it('with a TEST key is simulated at once, its time kept', async () => {
    const test = await d.env.key();
    const res = await api(
      'POST',
      '/v1/emails',
      { from: 'a@example.com', to: ['t@dest.test'], subject: 'S', text: 'T', scheduled_at: 'in 2 hours' },
      test,
    );
    expect(res.statusCode).toBe(202);
    expect(res.json().data.status).toBe('SIMULATED');
    const id = res.json().data.id;
    expect((await api('GET', `/v1/emails/${id}`, undefined, test)).json().data.scheduled_at).toBe(
      iso(d.env.clock.now() + 2 * HOUR),
    );
    const cancel = await api('POST', `/v1/emails/${id}/cancel`, undefined, test);
    expect(cancel.statusCode).toBe(409);
    expect(cancel.json().error).toMatchObject({ code: 'email_not_changeable', details: { status: 'SIMULATED' } });
  });

  it('in a batch: each item its own time, a bad one refused alone', async () => {
    const res = await api('POST', '/v1/emails/batch', {
      emails: [
        { from: 'news@sender.test', to: ['b1@dest.test'], subject: 'S', text: 'T', scheduled_at: 'in 10 minutes' },
        { from: 'news@sender.test', to: ['b2@dest.test'], subject: 'S', text: 'T', scheduled_at: 'yesterday' },
        { from: 'news@sender.test', to: ['b3@dest.test'], subject: 'S', text: 'T' },
      ],
    });
    expect(res.statusCode).toBe(202);
    const { results, accepted_count } = res.json().data;
    expect(accepted_count).toBe(2);
    expect(results[1].error).toMatchObject({ code: 'request_validation_failed' });
    expect(results[1].error.details.fields[0].field).toBe('scheduled_at');
    await settle(d.env);
    expect(deliveredTo('b3@dest.test')).toHaveLength(1);
    expect(deliveredTo('b1@dest.test')).toHaveLength(0);
    await advance(10 * 60_000);
    expect(deliveredTo('b1@dest.test')).toHaveLength(1);
  });

  it('over the relay, X-Service-Scheduled-At, which is not delivered', async () => {
    const { transport, close } = await relayClient(d.env.app, d.key);
    try {
      await transport.sendMail({
        from: 'news@sender.test',
        to: 'relayed@dest.test',
        subject: 'S',
        text: 'T',
        headers: { 'X-Service-Scheduled-At': 'in 30 minutes' },
      });
      await expect(
        transport.sendMail({
          from: 'news@sender.test',
          to: 'relayed2@dest.test',
          subject: 'S',
          text: 'T',
          headers: { 'X-Service-Scheduled-At': 'whenever' },
        }),
      ).rejects.toMatchObject({ responseCode: 554 });
    } finally {
      await close();
    }
    await settle(d.env);
    expect(deliveredTo('relayed@dest.test')).toHaveLength(0);
    await advance(30 * 60_000);
    const [m] = deliveredTo('relayed@dest.test');
    expect(m!.raw.toString()).not.toMatch(/X-Service-Scheduled-At/i);
  });
});

describe('cancel and reschedule', () => {
  it('cancels a scheduled email: CANCELED, a canceled event and webhook, never sent; twice is 409', async () => {
    const id = await d.send(['cancel@dest.test'], { scheduled_at: 'in 1 hour' });
    const res = await api('POST', `/v1/emails/${id}/cancel`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ id, status: 'CANCELED', scheduled_at: iso(d.env.clock.now() + HOUR) });
    expect((await api('GET', `/v1/emails/${id}`)).json().data.status).toBe('CANCELED');
    expect((await api('GET', `/v1/emails/${id}/events`)).json().data.map((e: { type: string }) => e.type)).toEqual([
      'queued',
      'canceled',
    ]);
    const again = await api('POST', `/v1/emails/${id}/cancel`);
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toMatchObject({
      code: 'email_not_changeable',
      message: 'The email was cancelled already',
      details: { status: 'CANCELED' },
    });
    await advance(2 * HOUR);
    expect(deliveredTo('cancel@dest.test')).toHaveLength(0);
    const posted = () => hooks.requests.map((r) => JSON.parse(r.body)).filter((b) => b.data?.email?.id === id);
    await expect
      .poll(async () => {
        await d.env.app.webhookDispatcher().runOnce();
        return posted().map((b) => b.type);
      })
      .toEqual(['email.queued', 'email.canceled']);
    expect(posted()[1].data.email.status).toBe('CANCELED');
  });

  it('refuses to cancel or move an email that has started, naming its status', async () => {
    const id = await d.send(['now@dest.test']);
    await settle(d.env);
    const res = await api('POST', `/v1/emails/${id}/cancel`);
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toMatchObject({ code: 'email_not_changeable', details: { status: 'DELIVERED' } });
    const moved = await api('PATCH', `/v1/emails/${id}`, { scheduled_at: 'in 1 hour' });
    expect(moved.statusCode).toBe(409);
  });

  it('moves a scheduled email to another time, checked as at acceptance', async () => {
    const id = await d.send(['moved@dest.test'], { scheduled_at: 'in 1 hour' });
    const res = await api('PATCH', `/v1/emails/${id}`, { scheduled_at: 'in 3 hours' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ id, status: 'QUEUED', scheduled_at: iso(d.env.clock.now() + 3 * HOUR) });
    expect(fieldOf(await api('PATCH', `/v1/emails/${id}`, { scheduled_at: 'in 40 days' })).field).toBe('scheduled_at');
    // Only the time may change: anything else is refused by name.
    const other = await api('PATCH', `/v1/emails/${id}`, { scheduled_at: 'in 2 hours', subject: 'new' });
    expect(other.statusCode).toBe(422);
    expect(other.json().error.details.fields.map((f: { field: string }) => f.field)).toEqual(['subject']);
    await advance(2 * HOUR);
    expect(deliveredTo('moved@dest.test')).toHaveLength(0);
    await advance(HOUR);
    expect(deliveredTo('moved@dest.test')).toHaveLength(1);
  });

  it('answers 404 for an email of another project or none, and 403 to a read-only key', async () => {
    const id = await d.send(['ro@dest.test'], { scheduled_at: 'in 1 hour' });
    expect((await api('POST', `/v1/emails/01900000-0000-7000-8000-000000000000/cancel`)).statusCode).toBe(404);
    expect((await api('POST', `/v1/emails/not-a-uuid/cancel`)).statusCode).toBe(404);
    const other = await d.env.app.accounts.createProject(d.env.init.organization_id, { name: 'Other' });
    const otherKey = (await d.env.app.keys.createKey(other.id, { name: 'k', env: 'LIVE' })).key!;
    expect((await api('POST', `/v1/emails/${id}/cancel`, undefined, otherKey)).statusCode).toBe(404);
    const readOnly = (
      await d.env.app.keys.createKey(d.env.init.project_id, { name: 'ro', env: 'LIVE', permissions: 'READ_ONLY' })
    ).key!;
    expect((await api('POST', `/v1/emails/${id}/cancel`, undefined, readOnly)).statusCode).toBe(403);
    expect((await api('PATCH', `/v1/emails/${id}`, { scheduled_at: 'in 2 hours' }, readOnly)).statusCode).toBe(403);
    expect((await api('GET', `/v1/emails/${id}`)).json().data.status).toBe('QUEUED');
  });

  it('from the CLI: svc emails reschedule and cancel, a bad time named, exit 1', async () => {
    const id = await d.send(['cli@dest.test'], { scheduled_at: 'in 1 hour' });
    const moved = await runSvc(d.env.dir, ['emails', 'reschedule', id, '--at', 'in 2 hours', '--json'], d.env.cliEnv);
    expect(moved.stderr).toBe('');
    expect(moved.json()).toMatchObject({ id, status: 'QUEUED', scheduled_at: expect.any(String) });
    const bad = await runSvc(d.env.dir, ['emails', 'reschedule', id, '--at', 'someday'], d.env.cliEnv);
    expect(bad.code).toBe(1);
    // The CLI's answer to a refused field: the error, then the field and why.
    expect(bad.stderr).toMatch(/^error: request_validation_failed: .*\n {2}scheduled_at: "someday" is not a time/);
    const cancelled = await runSvc(d.env.dir, ['emails', 'cancel', id], d.env.cliEnv);
    expect(cancelled.stdout.trim()).toBe(`${id} CANCELED`);
    const again = await runSvc(d.env.dir, ['emails', 'cancel', id], d.env.cliEnv);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/cancelled already/);
  });
});
