// Receiving mail (issue 34; decisions.md, "Receiving mail"): routes that take a receiving
// domain's addresses, and what happens to a message that reaches one: a signed webhook event,
// a forward through svc's own delivery, or held for the API.
import { z } from 'zod';
import { operator, type Actor, type Audited } from '../audit/index.ts';
import type { ReceivedView } from './view.ts';
import type { SendResponse, Sender } from '../emails/index.ts';
import { AppError } from '../errors.ts';
import { iso, type Clock } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import type { Logger } from '../lib/logger.ts';
import { parseInput } from '../validation.ts';
import { downloadToken, readDownloadToken, type DownloadTarget } from './downloads.ts';
import { matchRoute, patternOf, splitAddress, type RouteMatch } from './patterns.ts';
import { createRateWindows } from './rate.ts';
import { RECEIVING_LIMITS } from './limits.ts';
import { createRoutes, type RoutesDeps } from './routes.ts';
import type { EventProgress, ReceivedRow, RouteRow } from './store.ts';

export const receivedListSchema = z.strictObject({
  route_id: z.string().optional(),
  outcome: z.enum(['queued', 'forwarded', 'held', 'failed']).optional(),
  q: z.string().max(200).optional(),
  from: z.iso.datetime().optional(),
  to: z.iso.datetime().optional(),
  before: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});

/** The envelope of a message as the inbound listener took it. */
export interface ReceivedEnvelope {
  mailFrom: string | null;
  rcptTo: string[];
  remoteIp: string | null;
  helo: string | null;
}

/** What reading a received message gives the webhook (view.ts) and its authentication results (auth.ts). */
export interface MessageReaders {
  view(raw: Buffer, urls: { attachment: (index: number) => string }): Promise<ReceivedView>;
  authenticate(raw: Buffer, envelope: ReceivedEnvelope): Promise<Record<string, unknown>>;
  attachment(
    raw: Buffer,
    index: number,
  ): Promise<{ filename: string | null; content_type: string; content: Buffer } | undefined>;
}

export interface ReceivingDeps extends RoutesDeps {
  /** A LIVE sender of the project with no key (the forward's), its organization's plan and limits. */
  senderOf(projectId: string): Promise<Sender>;
  /** Sends a message as written from `forwarder` to `to` (emails service, forwardRaw). */
  forward(sender: Sender, raw: Buffer, forwarder: string, to: string[]): Promise<SendResponse>;
  readers: () => Promise<MessageReaders>;
  /** The key of download links. */
  downloadKey: () => Promise<Buffer>;
  publicUrl: string;
  hostname: string;
  clock: Clock;
  logger: Logger;
  /** Messages a client IP, and an envelope sender, may hand over per minute (`--inbound-rate-per-*`). */
  rate: { perIp: number; perSender: number };
  /** Attachments up to this size travel in the webhook body; larger ones by link. */
  inlineMaxBytes?: number;
  /** How long a download link works. */
  linkTtlMs?: number;
}

const DAY_MS = 86_400_000;

export function createReceiving(deps: ReceivingDeps) {
  const { repo, clock } = deps;
  const ipWindows = createRateWindows(deps.rate.perIp, 60_000, () => clock.now());
  const senderWindows = createRateWindows(deps.rate.perSender, 60_000, () => clock.now());
  const linkTtl = deps.linkTtlMs ?? 7 * DAY_MS;

  /** The routes each recipient reaches, for the recipients that reach one. */
  async function routesFor(rcptTo: string[]): Promise<RouteMatch<RouteRow>[]> {
    const byDomain = new Map<string, RouteRow[]>();
    const out: RouteMatch<RouteRow>[] = [];
    for (const rcpt of rcptTo) {
      const a = splitAddress(rcpt);
      if (!a) continue;
      let routes = byDomain.get(a.domain);
      if (!routes) byDomain.set(a.domain, (routes = await repo.routesAt(a.domain)));
      const hit = matchRoute(routes, rcpt);
      if (hit) out.push(hit);
    }
    return out;
  }

  function link(target: DownloadTarget, key: Buffer): string {
    const token = downloadToken(key, target, Math.floor((clock.now() + linkTtl) / 1000));
    return `${deps.publicUrl.replace(/\/$/, '')}/r/${token}`;
  }

  /** The body of an `email.received` webhook: the contract's envelope of an event, the message as an app wants it. */
  async function payloadOf(row: ReceivedRow, raw: Buffer, matches: RouteMatch<RouteRow>[], auth: unknown) {
    const key = await deps.downloadKey();
    const readers = await deps.readers();
    const view = await readers.view(raw, { attachment: (index) => link({ id: row.id, index }, key) });
    return JSON.stringify({
      id: `evt_${row.id}`,
      type: 'email.received',
      created_at: `${row.received_at.slice(0, 23)}000Z`,
      data: {
        email: {
          id: row.id,
          direction: 'inbound',
          route: { id: matches[0]!.route.id, pattern: patternOf(matches[0]!.route), action: row.action },
          envelope: {
            mail_from: row.mail_from,
            rcpt_to: matches.map((m) => m.address),
            remote_ip: row.remote_ip,
            helo: row.helo,
          },
          recipients: matches.map((m) => ({ address: m.address, tag: m.tag })),
          ...view,
          auth,
          size: row.size,
          raw_url: link({ id: row.id, index: null }, key),
          received_at: row.received_at,
        },
      },
    });
  }

  /** Forwards a held row's message, and records how it went: never throws (the message is kept either way). */
  async function forwardOne(row: ReceivedRow, route: RouteRow, raw: Buffer, envelope: ReceivedEnvelope, rcpt: string) {
    const to = JSON.parse(route.forward_to ?? '[]') as string[];
    try {
      // A trace of this hop on the copy that goes on: Received (RFC 5321 section 4.4) and
      // Delivered-To, which the next hop's loop check reads (guard.ts loopOf).
      const trace =
        `Delivered-To: ${rcpt}\r\n` +
        `Received: from ${envelope.helo ?? 'unknown'} (${envelope.remoteIp ?? 'unknown'})\r\n` +
        `\tby ${deps.hostname} (svc) with ESMTP id ${row.id}\r\n\tfor <${rcpt}>; ${new Date(clock.now()).toUTCString()}\r\n`;
      const sent = await deps.forward(
        await deps.senderOf(route.project_id),
        Buffer.concat([Buffer.from(trace), raw]),
        rcpt,
        to,
      );
      await repo.recordForward(row.id, 'forwarded', null, sent.id);
      return 'forwarded';
    } catch (e) {
      const why = e instanceof AppError ? `${e.code}: ${e.message}` : 'internal error';
      if (!(e instanceof AppError)) deps.logger.error({ err: e, received_id: row.id }, 'receiving: a forward failed');
      await repo.recordForward(row.id, 'failed', `the forward was refused (${why}); the message is kept`, null);
      return 'failed';
    }
  }

  return {
    limits: RECEIVING_LIMITS,
    ...createRoutes(deps),

    /**
     * RCPT TO at the inbound listener: whether a route takes `address` (the no-route answer is
     * 550 5.1.1: mail for an address nobody routed is never accepted and dropped). Past the
     * client's or the sender's rate it throws inbound_rate_limited (451 4.7.1).
     */
    async accepts(address: string, client: { remoteIp: string | null; mailFrom: string | null }): Promise<boolean> {
      const [hit] = await routesFor([address]);
      if (!hit) return false;
      if (client.remoteIp && !ipWindows.take(client.remoteIp, false)) throw rateLimited();
      if (client.mailFrom && !senderWindows.take(client.mailFrom.toLowerCase(), false)) throw rateLimited();
      return true;
    },

    /** Whether a domain has routes at all (the listener tells its own addresses from routed ones). */
    async routes(rcptTo: string[]) {
      return routesFor(rcptTo);
    },

    /**
     * A message for routed recipients: checked (size, structure, loops) before anything is
     * parsed, authenticated, then per route stored with its webhook event, forwarded, or
     * held. Resolves once every row is committed (the listener's 250 then means stored).
     */
    async receive(
      received: Buffer,
      envelope: ReceivedEnvelope,
    ): Promise<{ id: string; route_id: string; outcome: string }[]> {
      const matches = await routesFor(envelope.rcptTo);
      if (matches.length === 0) return [];
      // The checks that read the header block load with the first message (libmime), not at start.
      const { guardMessage, loopOf } = await import('./guard.ts');
      const header = await guardMessage(received);
      const raw = header.raw;
      const loop = loopOf(
        header,
        matches.map((m) => m.address),
      );
      if (loop) throw new AppError('mail_loop', loop);
      // One count per message and per client, taken as it is handed over.
      if (envelope.remoteIp) ipWindows.take(envelope.remoteIp, true);
      if (envelope.mailFrom) senderWindows.take(envelope.mailFrom.toLowerCase(), true);
      const readers = await deps.readers();
      const auth = await readers.authenticate(raw, envelope);
      const byRoute = new Map<string, RouteMatch<RouteRow>[]>();
      for (const m of matches) byRoute.set(m.route.id, [...(byRoute.get(m.route.id) ?? []), m]);
      const results: { id: string; route_id: string; outcome: string }[] = [];
      for (const group of byRoute.values()) {
        const route = group[0]!.route;
        const now = clock.now();
        const row: ReceivedRow = {
          id: newId(now),
          project_id: route.project_id,
          route_id: route.id,
          action: route.action,
          outcome: route.action === 'webhook' ? 'queued' : 'held',
          detail: null,
          forwarded_email_id: null,
          mail_from: envelope.mailFrom,
          rcpt_to: JSON.stringify(group.map((m) => m.address)),
          remote_ip: envelope.remoteIp,
          helo: envelope.helo,
          from_email: header.from,
          to_emails: JSON.stringify(header.to),
          subject: header.subject,
          message_id: header.messageId,
          size: raw.length,
          auth: JSON.stringify(auth),
          received_at: iso(now),
        };
        let event = null;
        if (route.action === 'webhook') {
          const hook = route.webhook_id ? await deps.webhooks.findById(route.webhook_id) : undefined;
          if (hook) {
            event = {
              id: newId(now),
              webhook_id: hook.id,
              event_id: row.id,
              event_type: 'email.received' as const,
              payload: await payloadOf(row, raw, group, auth),
              next_attempt_at: row.received_at,
              created_at: row.received_at,
            };
          } else {
            // Its webhook was deleted: the message is kept for the API rather than lost.
            row.outcome = 'held';
            row.detail = `the route's webhook ${route.webhook_id ?? ''} is gone; the message is held`;
          }
        }
        await repo.receive(row, raw, event);
        const outcome =
          route.action === 'forward' ? await forwardOne(row, route, raw, envelope, group[0]!.address) : row.outcome;
        results.push({ id: row.id, route_id: route.id, outcome });
      }
      return results;
    },

    async listReceived(projectId: string, query: unknown) {
      const q = parseInput(receivedListSchema, query);
      const { limit, ...filter } = q;
      const rows = await repo.listReceived(projectId, filter, limit);
      const progress = await repo.eventProgress(rows.filter((r) => r.action === 'webhook').map((r) => r.id));
      return rows.map((r) => summaryOf(r, progress.get(r.id)));
    },

    /**
     * One received message with the view of its content, as the webhook carried it, but with
     * `from` and `to` as the list gives them (addresses, as an email's), the sender's name
     * beside them as `from_name` (the email resource's field).
     */
    async getReceived(projectId: string, id: string) {
      const row = await repo.findReceived(projectId, id);
      if (!row) throw new AppError('not_found', `no received email ${id}`);
      const raw = (await repo.rawOf(id))!;
      const key = await deps.downloadKey();
      const view = await (await deps.readers()).view(raw, { attachment: (index) => link({ id, index }, key) });
      const progress = (await repo.eventProgress([id])).get(id);
      const { from, to: _to, ...content } = view;
      return {
        ...summaryOf(row, progress),
        ...content,
        from_name: from?.name || null,
        raw_url: link({ id, index: null }, key),
      };
    },

    async deleteReceived(projectId: string, id: string, actor: Actor = operator()): Promise<void> {
      const a: Audited = {
        actor,
        atMs: clock.now(),
        entry: {
          action: 'received_email.delete',
          project_id: projectId,
          target_type: 'received_email',
          target_id: id,
          before: null,
          after: null,
        },
      };
      if (!(await repo.deleteReceived(projectId, id, a))) throw new AppError('not_found', `no received email ${id}`);
    },

    /** The bytes a download names: the message as received, or one attachment. */
    async download(
      projectId: string | null,
      target: DownloadTarget,
    ): Promise<{ filename: string; content_type: string; content: Buffer }> {
      if (projectId !== null && !(await repo.findReceived(projectId, target.id))) {
        throw new AppError('not_found', `no received email ${target.id}`);
      }
      const raw = await repo.rawOf(target.id);
      if (!raw) throw new AppError('not_found', 'the message is gone');
      if (target.index === null) return { filename: `${target.id}.eml`, content_type: 'message/rfc822', content: raw };
      const a = await (await deps.readers()).attachment(raw, target.index);
      if (!a) throw new AppError('not_found', `no attachment ${target.index}`);
      return { filename: a.filename ?? `attachment-${target.index}`, content_type: a.content_type, content: a.content };
    },

    /** What a download link's token names, while it has not expired; undefined for any other. */
    async readLink(token: string): Promise<DownloadTarget | undefined> {
      return readDownloadToken(await deps.downloadKey(), token, clock.now());
    },

    /** Retention: received messages older than `cutoff` go, a batch at a time. */
    deleteBefore: (cutoff: string, limit: number) => repo.deleteReceivedBefore(cutoff, limit),
  };
}

const rateLimited = () =>
  new AppError('inbound_rate_limited', 'Too many messages from this sender or client; try again later');

/** A received message as lists show it, with how its route's action went. */
function summaryOf(r: ReceivedRow, progress: EventProgress | undefined) {
  return {
    id: r.id,
    direction: 'inbound' as const,
    route_id: r.route_id,
    action: r.action,
    outcome: r.outcome,
    detail: r.detail,
    webhook: r.action === 'webhook' && progress ? progress : null,
    forwarded_email_id: r.forwarded_email_id,
    envelope: {
      mail_from: r.mail_from,
      rcpt_to: JSON.parse(r.rcpt_to) as string[],
      remote_ip: r.remote_ip,
      helo: r.helo,
    },
    from: r.from_email,
    to: JSON.parse(r.to_emails) as string[],
    subject: r.subject,
    message_id: r.message_id,
    size: r.size,
    auth: JSON.parse(r.auth) as unknown,
    received_at: r.received_at,
  };
}

export type Receiving = ReturnType<typeof createReceiving>;
