import { AppError } from '../errors.ts';
import { iso, type Clock } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import { parseInput } from '../validation.ts';
import type { TrackingStore, UnsubscribeOutcome } from './store.ts';
import { visitorSchema, type TrackingSettings, type Visitor } from './schema.ts';
import { signToken, verifyToken, type TrackingTarget } from './token.ts';
import { signUnsubscribeToken, verifyUnsubscribeToken, type UnsubscribeTarget } from './unsubscribe-token.ts';

export interface TrackingDeps {
  repo: TrackingStore;
  clock: Clock;
  /** Base of tracked links and the pixel: --public-url, else the server's own address. */
  publicUrl: string;
  /** The project's tracking settings, read at send time. */
  settings: (projectId: string) => Promise<TrackingSettings>;
  /** The key of tracking tokens (the server secret `tracking`). */
  key: () => Promise<Buffer>;
}

/** Click and open tracking: rewrites outgoing HTML, and turns signed tokens back into events. */
export function createTrackingService({ repo, clock, publicUrl, settings, key }: TrackingDeps) {
  const base = publicUrl.replace(/\/+$/, '');

  async function resolve<K extends TrackingTarget['kind']>(token: string, kind: K) {
    const target = verifyToken(await key(), token);
    // A forged, edited or foreign token is simply not found: it never becomes a redirect.
    if (target?.kind !== kind) throw new AppError('not_found', 'No such tracking link');
    return target as Extract<TrackingTarget, { kind: K }>;
  }

  async function record(emailId: string, type: 'clicked' | 'opened', visitor: Visitor, extra: Record<string, unknown>) {
    const v = parseInput(visitorSchema, visitor);
    const now = clock.now();
    // clicked carries ip and user_agent in `data` too: webhooks send `data` as data.event (interface.md).
    const data = type === 'clicked' ? { ...extra, ip: v.ip, user_agent: v.user_agent } : extra;
    const added = await repo.addEvent({
      id: newId(now),
      emailId,
      type,
      data,
      ip: v.ip,
      userAgent: v.user_agent,
      at: iso(now),
    });
    if (!added) throw new AppError('not_found', 'No such tracking link');
  }

  return {
    /**
     * The HTML a LIVE email is sent with: links rewritten and the pixel added
     * per the project's settings. The stored body stays the customer's.
     */
    async prepareHtml(emailId: string, projectId: string, html: string): Promise<string> {
      const s = await settings(projectId);
      if (!s.click_tracking && !s.open_tracking) return html;
      // htmlparser2 loads with the first tracked email, not with every command.
      const { rewriteHtml } = await import('./rewrite.ts');
      const secretKey = await key();
      const link = (url: string) => `${base}/t/c/${signToken(secretKey, { kind: 'click', emailId, url })}`;
      return rewriteHtml(html, {
        trackLink: s.click_tracking ? link : undefined,
        pixelUrl: s.open_tracking ? `${base}/t/o/${signToken(secretKey, { kind: 'open', emailId })}` : undefined,
      });
    },

    /**
     * Resolves a click token to the link's URL (normalised, ready for a Location
     * header) and records a `clicked` event unless `record` is false (HEAD).
     * Throws not_found for any token this server did not sign, or a deleted email.
     */
    async click(token: string, visitor: Visitor, opts: { record: boolean } = { record: true }): Promise<string> {
      const target = await resolve(token, 'click');
      if (opts.record) await record(target.emailId, 'clicked', visitor, { url: target.url });
      return new URL(target.url).href;
    },

    /**
     * The List-Unsubscribe headers (RFC 2369, RFC 8058) of one recipient's copy when the
     * project asks for one-click unsubscribe; none otherwise.
     */
    async listUnsubscribe(emailId: string, projectId: string, recipient: string): Promise<Record<string, string>> {
      if (!(await settings(projectId)).one_click_unsubscribe) return {};
      const token = signUnsubscribeToken(await key(), { projectId, emailId, recipient: recipient.toLowerCase() });
      return { 'List-Unsubscribe': `<${base}/u/${token}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' };
    },

    /** The recipient an unsubscribe token names; not_found for any token this server did not sign. */
    async unsubscribeTarget(token: string): Promise<UnsubscribeTarget> {
      const target = verifyUnsubscribeToken(await key(), token);
      if (!target) throw new AppError('not_found', 'No such unsubscribe link');
      return target;
    },

    /**
     * A one-click unsubscribe: the token's recipient joins its project's suppression list
     * (UNSUBSCRIBE) with an `unsubscribed` event, in one transaction. A second one is a no-op
     * ('already'); a token whose email is gone or belongs to another project is not_found.
     */
    async unsubscribe(token: string): Promise<Exclude<UnsubscribeOutcome, 'not_found'>> {
      const t = verifyUnsubscribeToken(await key(), token);
      const now = clock.now();
      const outcome = t
        ? await repo.unsubscribe({ ...t, email: t.recipient, eventId: newId(now), at: iso(now) })
        : 'not_found';
      if (outcome === 'not_found') throw new AppError('not_found', 'No such unsubscribe link');
      return outcome;
    },

    /** Records an `opened` event for a pixel token; not_found as for clicks. */
    async open(token: string, visitor: Visitor, opts: { record: boolean } = { record: true }): Promise<void> {
      const target = await resolve(token, 'open');
      if (opts.record) await record(target.emailId, 'opened', visitor, {});
    },
  };
}

export type TrackingService = ReturnType<typeof createTrackingService>;
