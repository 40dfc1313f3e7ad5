import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from './peers/dns.ts';
import { startMxPeer, type MxPeer } from './peers/mx.ts';
import { count } from './harness.ts';
import { receivedFor, startDeliveryEnv, verifyDkim, type DeliveryEnv } from './delivery-helpers.ts';
import { relayClient } from './relay-helpers.ts';
import {
  headOf,
  oneClick as postOneClick,
  suppressed as suppressedIn,
  unsubscribedEvents as unsubscribedEventsOf,
} from './unsubscribe-helpers.ts';
import { signUnsubscribeToken } from '../src/tracking/unsubscribe-token.ts';

// One-click unsubscribe (RFC 8058, RFC 2369; issue 32, item 4) end to end: a LIVE send through
// the real engine to a loopback MX, the delivered headers checked under an independent DKIM
// verifier, and the URL used as a mailbox provider and as a person would.

const PUBLIC = 'https://mail.svc.test';
let dns: DnsServer;
let mx: MxPeer;
let d: DeliveryEnv;

beforeAll(async () => {
  dns = await startDnsServer();
  mx = await startMxPeer();
  dns.set('dest.test', { MX: [{ exchange: 'mx.dest.test', priority: 10 }] });
  dns.set('mx.dest.test', { A: ['127.0.0.1'] });
  d = await startDeliveryEnv(dns, { mxPort: String(mx.port), publicUrl: PUBLIC });
});

afterAll(async () => {
  await d.env.close();
  await mx.close();
  await dns.close();
});

let n = 0;
const setOneClick = (on: boolean) =>
  d.env.app.accounts.updateProjectSettings(d.env.init.project_id, { one_click_unsubscribe: on });

/** Sends to a fresh address and returns the id, the address and the message as the MX received it. */
async function sendAndReceive(to = [`reader${++n}@dest.test`]) {
  const id = await d.send(to);
  const m = await receivedFor(d.env, mx, to[0]!);
  const header = headOf(m.raw);
  return { id, to: to[0]!, raw: m.raw, header, dkimFields: /\bh=([^;]+)/.exec(header('DKIM-Signature') ?? '')?.[1] };
}

/** GET /v1/emails/{id}'s data. */
const read = async (id: string) =>
  (
    await d.env.server.inject({ method: 'GET', url: `/v1/emails/${id}`, headers: { authorization: `Bearer ${d.key}` } })
  ).json().data;

const tokenIn = (listUnsubscribe: string | undefined) =>
  new RegExp(`^<${PUBLIC}/u/([A-Za-z0-9_-]+)>$`).exec(listUnsubscribe ?? '')?.[1] ?? '';

const oneClick = (token: string) => postOneClick(d.env, token);
const suppressed = (email: string) => suppressedIn(d.env, email);
const unsubscribedEvents = (id: string) => unsubscribedEventsOf(d.env, id);

/** The server's tracking key, as stored (the token's signing key; made with the first signed token). */
const trackingKey = async () =>
  Buffer.from(
    (await d.env.query<{ value: Uint8Array }>("SELECT value FROM server_secrets WHERE name = 'tracking'"))[0]!.value,
  );

describe('one-click unsubscribe', () => {
  it('adds no List-Unsubscribe unless the project asks for it', async () => {
    const m = await sendAndReceive();
    expect(m.header('List-Unsubscribe')).toBeUndefined();
    expect(m.header('List-Unsubscribe-Post')).toBeUndefined();
  });

  describe('with the project setting on', () => {
    let m: Awaited<ReturnType<typeof sendAndReceive>>;
    let token = '';
    beforeAll(async () => {
      await setOneClick(true);
      m = await sendAndReceive();
      token = tokenIn(m.header('List-Unsubscribe'));
    });

    it('delivers both headers under a DKIM signature an independent verifier accepts', async () => {
      expect(token).not.toBe('');
      expect(m.header('List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
      const signed = (m.dkimFields ?? '').toLowerCase().split(/\s*:\s*/);
      expect(signed).toEqual(expect.arrayContaining(['list-unsubscribe', 'list-unsubscribe-post']));
      expect((await verifyDkim(m.raw, dns)).status).toBe('pass');
    });

    it('shows a plain confirmation page on GET, with no script and a strict CSP, and unsubscribes nobody', async () => {
      const res = await d.env.server.inject({ method: 'GET', url: `/u/${token}` });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toContain('text/html');
      expect(res.headers['content-security-policy']).toContain("default-src 'none'");
      expect(res.body).toContain('<form method="post">');
      expect(res.body).toContain(m.to);
      expect(res.body).not.toContain('<script');
      expect(await suppressed(m.to)).toEqual([]);
    });

    it('suppresses the recipient on the POST a mail client sends, with one event, and answers 200', async () => {
      const res = await oneClick(token);
      expect(res.statusCode).toBe(200);
      expect(await suppressed(m.to)).toEqual([{ reason: 'UNSUBSCRIBE', source_email_id: m.id }]);
      expect(await unsubscribedEvents(m.id)).toBe(1);
      const events = await d.env.server.inject({
        method: 'GET',
        url: `/v1/emails/${m.id}/events`,
        headers: { authorization: `Bearer ${d.key}` },
      });
      expect(events.json().data.map((e: { type: string }) => e.type)).toContain('unsubscribed');
    });

    it('answers a second POST 200 again without a second event', async () => {
      expect((await oneClick(token)).statusCode).toBe(200);
      expect(await unsubscribedEvents(m.id)).toBe(1);
    });

    it('refuses forged, edited and malformed tokens with 404 (envelope on POST, a page on GET)', async () => {
      const key = await trackingKey();
      const wrongKey = signUnsubscribeToken(Buffer.alloc(32, 7), {
        projectId: d.env.init.project_id,
        emailId: m.id,
        recipient: 'victim@dest.test',
      });
      const edited = token.slice(0, 30) + (token[30] === 'A' ? 'B' : 'A') + token.slice(31);
      for (const bad of [wrongKey, edited, token.slice(0, -2), 'not-a-token']) {
        const res = await oneClick(bad);
        expect(res.statusCode).toBe(404);
        expect(res.json().error.code).toBe('not_found');
        const page = await d.env.server.inject({ method: 'GET', url: `/u/${bad}` });
        expect(page.statusCode).toBe(404);
        expect(page.headers['content-type']).toContain('text/html');
      }
      expect(key.length).toBeGreaterThan(0);
      expect(await suppressed('victim@dest.test')).toEqual([]);
    });

    it("refuses a token replayed into another project: the email must be that project's", async () => {
      const other = await d.env.app.accounts.createProject(d.env.init.organization_id, { name: 'Other' });
      const key = await trackingKey();
      const moved = signUnsubscribeToken(key, { projectId: other.id, emailId: m.id, recipient: m.to });
      const res = await oneClick(moved);
      expect(res.statusCode).toBe(404);
      expect(await count(d.env, 'suppressions', 'project_id = ?', other.id)).toBe(0);
    });

    it('gives several recipients at one domain each a copy of its own, with its own token, all DKIM-signed', async () => {
      const to = [`a${++n}@dest.test`, `b${n}@dest.test`, `c${n}@dest.test`];
      const id = await d.send(to);
      await receivedFor(d.env, mx, to[0]!);
      const copies = to.map((addr) => mx.received.filter((x) => x.to.includes(addr)));
      // One message per recipient, each in its own transaction: no copy carries another's token.
      expect(copies.map((c) => c.map((x) => x.to))).toEqual(to.map((addr) => [[addr]]));
      const tokens: string[] = [];
      for (const [i, [copy]] of copies.entries()) {
        const head = headOf(copy!.raw);
        tokens.push(tokenIn(head('List-Unsubscribe')));
        expect(head('List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
        expect((await verifyDkim(copy!.raw, dns)).status).toBe('pass');
        const key = await trackingKey();
        expect(tokens[i]).toBe(
          signUnsubscribeToken(key, { projectId: d.env.init.project_id, emailId: id, recipient: to[i]! }),
        );
      }
      expect(new Set(tokens).size).toBe(3);
      expect((await oneClick(tokens[1]!)).statusCode).toBe(200);
      expect(await suppressed(to[1]!)).toEqual([{ reason: 'UNSUBSCRIBE', source_email_id: id }]);
      expect(await suppressed(to[0]!)).toEqual([]);
      expect(await suppressed(to[2]!)).toEqual([]);
    });
  });

  describe("a send's own choice", () => {
    it('one_click_unsubscribe: false leaves the headers out although the project asks for them', async () => {
      await setOneClick(true);
      const to = `off${++n}@dest.test`;
      const id = await d.send([to], { one_click_unsubscribe: false });
      const m = await receivedFor(d.env, mx, to);
      expect(headOf(m.raw)('List-Unsubscribe')).toBeUndefined();
      expect(headOf(m.raw)('List-Unsubscribe-Post')).toBeUndefined();
      expect((await read(id)).one_click_unsubscribe).toBe(false);
    });

    it('one_click_unsubscribe: true adds them although the project does not ask', async () => {
      await setOneClick(false);
      const to = `on${++n}@dest.test`;
      const id = await d.send([to], { one_click_unsubscribe: true });
      const m = await receivedFor(d.env, mx, to);
      expect(tokenIn(headOf(m.raw)('List-Unsubscribe'))).not.toBe('');
      expect((await verifyDkim(m.raw, dns)).status).toBe('pass');
      expect((await read(id)).one_click_unsubscribe).toBe(true);
    });

    it("null or absent keeps the project's setting, and reads back as null", async () => {
      await setOneClick(true);
      const to = `dflt${++n}@dest.test`;
      const id = await d.send([to], { one_click_unsubscribe: null });
      expect(tokenIn(headOf((await receivedFor(d.env, mx, to)).raw)('List-Unsubscribe'))).not.toBe('');
      expect((await read(id)).one_click_unsubscribe).toBeNull();
    });

    it('over the relay, X-Service-Unsubscribe: off or one-click decides, and is not delivered', async () => {
      await setOneClick(true);
      const { transport, close } = await relayClient(d.env.app, d.key);
      const relayed = async (value: string) => {
        const to = `relay${++n}@dest.test`;
        await transport.sendMail({
          from: 'news@sender.test',
          to,
          subject: 'S',
          text: 'T',
          headers: { 'X-Service-Unsubscribe': value },
        });
        return headOf((await receivedFor(d.env, mx, to)).raw);
      };
      try {
        const off = await relayed('off');
        expect(off('List-Unsubscribe')).toBeUndefined();
        expect(off('X-Service-Unsubscribe')).toBeUndefined();
        await setOneClick(false);
        expect(tokenIn((await relayed('one-click'))('List-Unsubscribe'))).not.toBe('');
        await expect(relayed('maybe')).rejects.toMatchObject({ responseCode: 554 });
      } finally {
        await close();
      }
    });

    it('refuses a value that is not a boolean with 422 naming the field', async () => {
      const res = await d.env.server.inject({
        method: 'POST',
        url: '/v1/emails',
        headers: { authorization: `Bearer ${d.key}` },
        payload: {
          from: 'news@sender.test',
          to: ['x@dest.test'],
          subject: 'S',
          text: 'T',
          one_click_unsubscribe: 'yes',
        },
      });
      expect(res.statusCode).toBe(422);
      expect(res.json().error.code).toBe('request_validation_failed');
      expect(JSON.stringify(res.json().error.details)).toContain('one_click_unsubscribe');
    });
  });
});
