// An email and its recipient rows built from a send's request (API, relay, raw, forward),
// with the rules on its sender: the content resolved or rendered, the headers and size
// checked, a LIVE sender's DPA and verified domain, or else the onboarding trial.
import { AppError } from '../errors.ts';
import { iso, type Clock } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import type { DomainsStore } from '../domains/index.ts';
import { checkHeaders, checkMessageSize, decodeAttachments, type Attachment } from './content.ts';
import type { Envelope } from './header-fields.ts';
import type { NewEmail, Recipient } from './store.ts';
import { createTrialRule } from './trial.ts';
import { scheduleTime } from './schedule.ts';
import type { RawFields, SendRequest } from './schema.ts';
import type { AccountsPort, RenderPort, Sender, TemplateSource } from './ports.ts';

/** Which door an email came through, the Message-ID its client gave, and its parts' Content-IDs. */
export interface Origin {
  source: NewEmail['source'];
  messageId: string | null;
  /** Per attachment, in order (the SMTP relay; the API's attachments have none). */
  contentIds?: readonly (string | null)[];
}
export const API_ORIGIN: Origin = { source: 'API', messageId: null };
export const SMTP_ORIGIN: Origin = { source: 'SMTP', messageId: null };

/** What POST /v1/emails/raw's body sets over the message's own X-Service-* fields. */
export interface RawOverrides {
  tags?: string[] | null | undefined;
  one_click_unsubscribe?: boolean | null | undefined;
  scheduled_at?: string | null | undefined;
  metadata?: Record<string, string> | null | undefined;
}

/**
 * The reader of messages passed through as written (raw-request.ts) and its MIME helpers
 * (libmime: ~100 ms and 12 MB to load) come with the first such message, not at start, as
 * mailparser does for the relay's rebuild.
 */
export const rawReader = () => import('./raw-request.ts');

/** The overrides that are given (null or absent leaves the message's own). */
const definedOf = (over: RawOverrides | undefined) =>
  Object.fromEntries(Object.entries(over ?? {}).filter(([, v]) => v != null)) as RawOverrides;

export interface EmailBuilderDeps {
  clock: Clock;
  templates: TemplateSource;
  renderer: RenderPort;
  domains: Pick<DomainsStore, 'isVerifiedForProject' | 'findDomainByName'>;
  accounts: AccountsPort;
  /** The server's onboarding-trial domain (`--sandbox-domain`), if any. */
  sandboxDomain?: string | undefined;
}

export function createEmailBuilder(deps: EmailBuilderDeps) {
  const { clock } = deps;
  const trial = createTrialRule({ sandboxDomain: deps.sandboxDomain, users: deps.accounts, domains: deps.domains });

  /** Bodies from the request, or rendered from the named template with request overrides. */
  async function resolveContent(sender: Sender, r: SendRequest) {
    if (!r.template) return { subject: r.subject ?? '', html: r.html ?? null, text: r.text ?? null, template: null };
    const t = await deps.templates.getBySlug(sender.project_id, r.template, r.template_version ?? undefined);
    // A request's subject or text overrides the template's as literal text: it is not rendered.
    const source = {
      subject: r.subject == null ? t.subject_template : '',
      html: t.html_template,
      text: r.text == null ? t.text_template : null,
    };
    const out = await deps.renderer.render(source, r.variables ?? {});
    return { subject: r.subject ?? out.subject, html: out.html, text: r.text ?? out.text, template: t };
  }

  /**
   * LIVE only: a signed DPA, then a verified domain bound to the project (decisions.md
   * order), or else the onboarding trial when `recipients` are given (a send, not a
   * resend). True for a trial send.
   */
  async function checkLiveSender(
    sender: Pick<Sender, 'project_id' | 'dpa_accepted_at' | 'created_by'>,
    from: string,
    recipients: Recipient[] | null,
  ): Promise<boolean> {
    if (!sender.dpa_accepted_at) throw new AppError('dpa_not_signed');
    const domain = from.slice(from.lastIndexOf('@') + 1).toLowerCase();
    if (await deps.domains.isVerifiedForProject(sender.project_id, domain)) return false;
    if (recipients && trial.covers(domain)) {
      await trial.check(sender.created_by ?? null, recipients);
      return true;
    }
    throw new AppError('domain_not_verified', `The domain ${domain} is not verified for this project`, {
      code: 'domain_not_verified',
      domain,
    });
  }

  async function buildEmail(
    sender: Sender,
    r: SendRequest,
    origin: Origin = API_ORIGIN,
  ): Promise<{ email: NewEmail; recipients: Recipient[] }> {
    const headers = r.headers ?? {};
    checkHeaders(headers);
    const attachments = decodeAttachments(r.attachments ?? []).map((a, i) =>
      origin.contentIds?.[i] ? { ...a, content_id: origin.contentIds[i] } : a,
    );
    const content = await resolveContent(sender, r);
    checkMessageSize(content, attachments);
    return assemble(sender, r, { ...content, headers, attachments, raw: null }, origin);
  }

  /**
   * A message passed through as written (issue 33): its fields read from its header block
   * (raw-request.ts), its bytes stored as they are; no body, attachment or template of its own.
   */
  async function buildRawEmail(sender: Sender, raw: Buffer, envelope: Envelope, origin: Origin, over?: RawOverrides) {
    const { fields, messageId } = (await rawReader()).readRawRequest(raw, envelope);
    const r = { ...fields, ...definedOf(over) };
    const content = { subject: r.subject ?? '', html: null, text: null, template: null };
    return assemble(sender, r, { ...content, headers: r.headers, attachments: [], raw }, { ...origin, messageId });
  }

  /** The email and its recipient rows from a send's checked fields and content. */
  async function assemble(
    sender: Sender,
    r: Omit<RawFields, 'headers'>,
    content: {
      subject: string;
      html: string | null;
      text: string | null;
      template: { id: string; version: number } | null;
      headers: Record<string, string>;
      attachments: Attachment[];
      raw: Buffer | null;
    },
    origin: Origin,
  ): Promise<{ email: NewEmail; recipients: Recipient[] }> {
    const recipients = recipientsOf(r);
    const isTrial = sender.env === 'LIVE' && (await checkLiveSender(sender, r.from, recipients));
    const now = clock.now();
    const live = sender.env === 'LIVE';
    // A TEST send checks its schedule and keeps it, but is simulated at once (decisions.md).
    const scheduledAt = r.scheduled_at == null ? null : iso(scheduleTime(r.scheduled_at, now));
    const scheduled = scheduledAt === null ? {} : { scheduled_at: scheduledAt };
    const email: NewEmail = {
      id: newId(now),
      project_id: sender.project_id,
      api_key_id: sender.id,
      env: sender.env,
      source: origin.source,
      status: live ? 'QUEUED' : 'SIMULATED',
      from_email: r.from,
      from_name: r.from_name ?? null,
      to: r.to,
      cc: r.cc ?? null,
      bcc: r.bcc ?? null,
      reply_to: r.reply_to ?? null,
      subject: content.subject,
      tags: r.tags ?? [],
      headers: content.headers,
      html: content.html,
      text: content.text,
      raw: content.raw,
      template_id: content.template?.id ?? null,
      template_version: content.template?.version ?? null,
      created_at: iso(now),
      attachments: content.attachments,
      event: { id: newId(now), type: live ? 'queued' : 'simulated', data: scheduled },
      trial: isTrial,
      message_id: origin.messageId,
      one_click_unsubscribe: r.one_click_unsubscribe ?? null,
      scheduled_at: scheduledAt,
      metadata: r.metadata ?? null,
    };
    return { email, recipients };
  }

  return { buildEmail, buildRawEmail, assemble, checkLiveSender };
}

/** One row per distinct address (case-insensitive), to before cc before bcc. */
export function recipientsOf(r: SendRequest | Pick<NewEmail, 'to' | 'cc' | 'bcc'>): Recipient[] {
  const seen = new Set<string>();
  const out: Recipient[] = [];
  const add = (list: string[] | null | undefined, kind: Recipient['kind']) => {
    for (const address of list ?? []) {
      const k = address.toLowerCase();
      if (seen.has(k)) continue;
      seen.add(k);
      out.push({ address, kind });
    }
  };
  add(r.to, 'to');
  add(r.cc, 'cc');
  add(r.bcc, 'bcc');
  return out;
}
