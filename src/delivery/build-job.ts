import type { ClaimedEmail, DueRow } from './repo.ts';
import type { DeliveryJob } from './job.ts';
import type { SigningKeys } from './engine.ts';
import { returnPathAddress } from './return-path.ts';
import type { TrackingSettings } from '../tracking/index.ts';

const parse = <T>(v: unknown): T => (v == null ? (null as T) : (JSON.parse(v as string) as T));

/** Rewrites a LIVE email's HTML as it goes out (click and open tracking); the stored body stays as sent by the customer. */
export interface HtmlTracking {
  /** The project's settings, given to the two below (a claim reads them once per project). */
  settings(projectId: string): Promise<TrackingSettings>;
  prepareHtml(emailId: string, settings: TrackingSettings, html: string): Promise<string>;
  /**
   * The List-Unsubscribe headers of each recipient's copy, in order; null when the email (its
   * own choice, else its project's setting) goes without.
   */
  listUnsubscribe?(
    email: { id: string; projectId: string; fromDomain: string; asked: boolean | null },
    recipients: string[],
    settings: () => Promise<TrackingSettings>,
  ): Promise<Record<string, string>[] | null>;
}

/**
 * The customer's headers, and each recipient's one-click unsubscribe ones. A token names one
 * recipient, so one recipient's go in `headers`, several recipients' in `perRecipient` (each
 * then gets a copy of its own: job.ts recipient_headers). A customer's own List-Unsubscribe wins.
 */
async function headersOf(
  e: ClaimedEmail['row'],
  rows: DueRow[],
  fromDomain: string,
  tracking: HtmlTracking | undefined,
  settings: () => Promise<TrackingSettings>,
) {
  const written = parse<Record<string, string>>(e.headers) ?? {};
  const mine = Object.keys(written).some((h) => h.toLowerCase().startsWith('list-unsubscribe'));
  // A message passed through keeps its own fields in its bytes: only svc's are added (raw-out.ts).
  const own = e.raw_message ? {} : written;
  const asked = e.one_click_unsubscribe == null ? null : e.one_click_unsubscribe === 1;
  const email = { id: e.id, projectId: e.project_id as string, fromDomain, asked };
  const each =
    mine || !tracking?.listUnsubscribe
      ? null
      : await tracking.listUnsubscribe(
          email,
          rows.map((r) => r.address),
          settings,
        );
  if (!each) return { headers: own, perRecipient: null };
  if (each.length === 1) return { headers: { ...own, ...each[0] }, perRecipient: null };
  return { headers: own, perRecipient: each };
}

export interface BuiltJob {
  seq: number;
  projectId: string;
  createdAt: number;
  group: { seq: number; domain: string; rows: DueRow[] };
  job: DeliveryJob;
  /** Set when the message cannot be sent at all (no DKIM key): an internal failure. */
  failure: string | null;
}

/** Turns a claimed email and one destination's rows into a worker job (plain data). */
export async function buildJob(
  email: ClaimedEmail,
  group: BuiltJob['group'],
  keys: SigningKeys,
  hostname: string,
  returnPathKey: Buffer,
  tracking?: HtmlTracking,
): Promise<BuiltJob> {
  const e = email.row;
  const html = e.html_body as string | null;
  const raw = (e.raw_message as Buffer | null) ?? null;
  const fromDomain = e.from_email.slice(e.from_email.lastIndexOf('@') + 1).toLowerCase();
  const dkim = (await keys.getSigningKey(fromDomain)) ?? null;
  const returnPaths = group.rows.map((r) => returnPathAddress(returnPathKey, e.id, r.address, fromDomain));
  // Read when needed; the claim keeps each project's for all its emails (engine-claim.ts).
  const settings = () => tracking!.settings(e.project_id as string);
  const { headers, perRecipient } = await headersOf(e, group.rows, fromDomain, tracking, settings);
  const job: DeliveryJob = {
    email_id: e.id,
    destination: group.domain,
    recipients: group.rows.map((r) => r.address),
    // Each recipient's return path names the email and is signed for that recipient
    // (return-path.ts), so asynchronous bounces can be matched, and forged ones refused.
    envelope_from: returnPaths[0]!,
    return_paths: returnPaths.length > 1 ? returnPaths : null,
    message_id: (e.message_id as string | null) ?? `${e.id}@${hostname}`,
    // A scheduled email is dated when it goes out as asked, not when it was accepted.
    date: (e.scheduled_at as string | null) ?? e.created_at,
    from_email: e.from_email,
    from_name: e.from_name as string | null,
    to: parse<string[]>(e.to_emails),
    cc: parse<string[] | null>(e.cc_emails),
    reply_to: parse<string[] | null>(e.reply_to),
    subject: e.subject as string,
    // A message passed through is never rewritten: tracking applies to relayed mail only when the
    // project asks (relay_tracking), and the relay then stores it composed (smtp/relay.ts).
    html: html !== null && tracking ? await tracking.prepareHtml(e.id, await settings(), html) : html,
    text: e.text_body as string | null,
    headers,
    recipient_headers: perRecipient,
    attachments: email.attachments.map((a) => ({
      filename: a.filename,
      content_type: a.content_type,
      content: new Uint8Array(a.content),
      content_id: a.content_id,
    })),
    // A copy: a view would send the whole buffer it is cut from to the worker.
    raw: raw ? new Uint8Array(raw) : null,
    dkim,
  };
  const failure = dkim ? null : `no DKIM key for ${fromDomain}: the domain is not verified`;
  return {
    seq: email.seq,
    projectId: e.project_id as string,
    // Retries and --delivery-max-age count from when the email was due: its schedule, or its acceptance.
    createdAt: Date.parse((e.scheduled_at as string | null) ?? e.created_at),
    group,
    job,
    failure,
  };
}
