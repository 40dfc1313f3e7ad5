import { AppError } from '../errors.ts';
import { iso, type Clock } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import { parseInput } from '../validation.ts';
import type { TrackingStore, UnsubscribeOutcome } from './store.ts';
import { visitorSchema, type TrackingSettings, type Visitor } from './schema.ts';
import { signToken, verifyToken, type TrackingTarget } from './token.ts';
import { signUnsubscribeToken, verifyUnsubscribeToken, type UnsubscribeTarget } from './unsubscribe-token.ts';
import { parseUnsubscribeAddress, recipientOfAddress, unsubscribeAddress } from './unsubscribe-address.ts';

/** An email as one-click unsubscribe reads it at delivery: its own choice (null: the project's setting). */
export interface UnsubscribeEmail {
  id: string;
  projectId: string;
  fromDomain: string;
  asked: boolean | null;
}

/** The columns of a stored email an unsubscribe address is checked against. */
type EmailRow = Record<string, unknown> & { id: string; project_id: string };

/** Every recipient of a stored email (to, cc and bcc, as the row keeps them in JSON). */
const recipientsOf = (e: EmailRow) =>
  ['to_emails', 'cc_emails', 'bcc_emails'].flatMap((k) => (e[k] ? (JSON.parse(e[k] as string) as string[]) : []));

export interface TrackingDeps {
  repo: TrackingStore;
  clock: Clock;
  /** Base of tracked links and the pixel: --public-url, else the server's own address. */
  publicUrl: string;
  /** The project's tracking settings, read at send time. */
  settings: (projectId: string) => Promise<TrackingSettings>;
  /** The key of tracking tokens (the server secret `tracking`). */
  key: () => Promise<Buffer>;
  /**
   * The stored email an unsubscribe address names; with it, and only while the inbound listener
   * runs (`--inbound-port`), List-Unsubscribe carries a mailto beside the URL.
   */
  mailto?: { findEmail(id: string): Promise<EmailRow | undefined> };
}

/** Click and open tracking: rewrites outgoing HTML, and turns signed tokens back into events. */
export function createTrackingService({ repo, clock, publicUrl, settings, key, mailto }: TrackingDeps) {
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

  /** The recipient `t` names joins its project's suppression list (repo.unsubscribe). */
  function unsubscribeRecipient(t: UnsubscribeTarget, via: 'one-click' | 'mailto') {
    const now = clock.now();
    return repo.unsubscribe({ ...t, email: t.recipient, eventId: newId(now), at: iso(now), via });
  }

  /** The email and recipient an unsubscribe address names, when svc made it (a LIVE email from that domain). */
  async function mailtoTarget(address: string): Promise<UnsubscribeTarget | undefined> {
    const a = mailto && parseUnsubscribeAddress(address);
    const email = a ? await mailto.findEmail(a.emailId) : undefined;
    if (!a || !email || email.env !== 'LIVE') return undefined;
    const from = String(email.from_email).toLowerCase();
    if (from.slice(from.lastIndexOf('@') + 1) !== a.fromDomain) return undefined;
    const recipient = recipientOfAddress(await key(), a, recipientsOf(email));
    return recipient
      ? { projectId: email.project_id, emailId: email.id, recipient: recipient.toLowerCase() }
      : undefined;
  }

  return {
    /** The project's settings as they are now, given to the two below (delivery reads them once per claim). */
    settings: (projectId: string): Promise<TrackingSettings> => settings(projectId),

    /**
     * The HTML a LIVE email is sent with: links rewritten and the pixel added
     * per the project's settings. The stored body stays the customer's.
     */
    async prepareHtml(emailId: string, s: TrackingSettings, html: string): Promise<string> {
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
     * The List-Unsubscribe headers (RFC 2369, RFC 8058) of each recipient's own copy, in order,
     * when the email asks for one-click unsubscribe (its own choice, else its project's
     * setting); null otherwise. The URL, then the mailto while the inbound listener runs.
     */
    async listUnsubscribe(
      e: UnsubscribeEmail,
      recipients: string[],
      s: () => Promise<TrackingSettings>,
    ): Promise<Record<string, string>[] | null> {
      if (!(e.asked ?? (await s()).one_click_unsubscribe)) return null;
      const secret = await key();
      return recipients.map((r) => {
        const recipient = r.toLowerCase();
        const token = signUnsubscribeToken(secret, { projectId: e.projectId, emailId: e.id, recipient });
        const mail = mailto ? `, <mailto:${unsubscribeAddress(secret, e.id, recipient, e.fromDomain)}>` : '';
        return {
          'List-Unsubscribe': `<${base}/u/${token}>${mail}`,
          'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
        };
      });
    },

    /** RCPT TO at the inbound listener: true for an unsubscribe address svc made (its tag verifies). */
    async acceptsMailto(address: string): Promise<boolean> {
      return (await mailtoTarget(address)) !== undefined;
    },

    /** True when `address` is written as an unsubscribe address (its syntax only), for routing a message. */
    isMailtoAddress: (address: string): boolean => parseUnsubscribeAddress(address) !== null,

    /**
     * A message to an unsubscribe address (RFC 2369 mailto): its recipient is unsubscribed
     * exactly as by the one-click POST (same store call, event and webhook; a second is a
     * no-op). not_found for an address svc did not make.
     */
    async unsubscribeByMail(
      address: string,
    ): Promise<{ outcome: Exclude<UnsubscribeOutcome, 'not_found'> } & UnsubscribeTarget> {
      const t = await mailtoTarget(address);
      const outcome = t ? await unsubscribeRecipient(t, 'mailto') : 'not_found';
      if (!t || outcome === 'not_found') throw new AppError('not_found', 'No such unsubscribe address');
      return { outcome, ...t };
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
      const outcome = t ? await unsubscribeRecipient(t, 'one-click') : 'not_found';
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
