import { AppError, errorRegistry, toAppError } from '../errors.ts';
import { iso, type Clock } from '../lib/clock.ts';
import { isUuid, newId } from '../lib/ids.ts';
import { requestHash } from '../idempotency/index.ts';
import type { IdempotencyGate } from '../idempotency/index.ts';
import { LIMITS, PLAN_LIMITS, type Plan } from '../limits/index.ts';
import type { DomainsStore } from '../domains/index.ts';
import type { Actor, Audited } from '../audit/index.ts';
import type { AuthCheck } from '../keys/index.ts';
import { parseInput } from '../validation.ts';
import { checkHeaders, checkMessageSize, decodeAttachments, type Attachment } from './content.ts';
import type { Envelope } from './header-fields.ts';
import { toEmailDetail, toEmailListItem, toEventPublic } from './present.ts';
import { readRawView } from './raw-view.ts';
import type { AcceptOptions, EmailRow, EmailsStore, NewEmail, Recipient, SendResponse } from './store.ts';
import { assertResendable, copyEmail, resendAudited } from './resend.ts';
import { createTrialRule } from './trial.ts';
import { scheduleTime } from './schedule.ts';
import { createScheduling } from './scheduling.ts';
import {
  batchRequestSchema,
  idempotencyKeySchema,
  listQuerySchema,
  rawSendSchema,
  searchQuerySchema,
  sendRequestSchema,
  type RawFields,
  type SendRequest,
} from './schema.ts';

/** Which door an email came through, the Message-ID its client gave, and its parts' Content-IDs. */
interface Origin {
  source: NewEmail['source'];
  messageId: string | null;
  /** Per attachment, in order (the SMTP relay; the API's attachments have none). */
  contentIds?: readonly (string | null)[];
}
const API_ORIGIN: Origin = { source: 'API', messageId: null };
const SMTP_ORIGIN: Origin = { source: 'SMTP', messageId: null };

/** What POST /v1/emails/raw's body sets over the message's own X-Service-* fields. */
interface RawOverrides {
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
const rawReader = () => import('./raw-request.ts');

/** The overrides that are given (null or absent leaves the message's own). */
const definedOf = (over: RawOverrides | undefined) =>
  Object.fromEntries(Object.entries(over ?? {}).filter(([, v]) => v != null)) as RawOverrides;

/** Who is sending: the key's project and organization as the send rules need them. */
export interface Sender {
  /** The API key that sends; null for a member's send from the dashboard (no key sent it). */
  id: string | null;
  project_id: string;
  organization_id: string;
  env: 'LIVE' | 'TEST';
  plan: Plan;
  daily_limit: number | null;
  dpa_accepted_at: string | null;
  /** The user who created the key: the onboarding trial sends only to their address. */
  created_by?: string | null;
}

/**
 * svc's own LIVE send for a project, sent by no key (a route's forward, a TLS report): the
 * project's organization's plan, limit and DPA apply as to any send.
 */
export function projectSender(
  project: { id: string; organization_id: string },
  org: { plan: Plan; daily_limit: number | null; dpa_accepted_at: string | null },
): Sender {
  return {
    id: null,
    project_id: project.id,
    organization_id: project.organization_id,
    env: 'LIVE',
    plan: org.plan,
    daily_limit: org.daily_limit,
    dpa_accepted_at: org.dpa_accepted_at,
  };
}

/** What the send rules read of accounts: the key creator's address, an organization's plan and DPA. */
export interface AccountsPort {
  findUserById(id: string): Promise<{ email: string } | undefined>;
  findOrgById(
    id: string,
  ): Promise<{ id: string; plan: Plan; daily_limit: number | null; dpa_accepted_at: string | null } | undefined>;
}

export interface TemplateSource {
  getBySlug(
    projectId: string,
    slug: string,
    version?: number,
  ): Promise<{
    id: string;
    version: number;
    subject_template: string;
    html_template: string | null;
    text_template: string | null;
  }>;
}

export interface RenderPort {
  render(
    input: { subject: string; html: string | null; text: string | null },
    variables: Record<string, unknown>,
  ): Promise<{ subject: string; html: string | null; text: string | null }>;
}

export interface EmailsDeps {
  repo: EmailsStore;
  clock: Clock;
  templates: TemplateSource;
  renderer: RenderPort;
  domains: Pick<DomainsStore, 'isVerifiedForProject' | 'findDomainByName'>;
  idempotency: IdempotencyGate;
  accounts: AccountsPort;
  /** The server's onboarding-trial domain (`--sandbox-domain`), if any. */
  sandboxDomain?: string | undefined;
  /** Told of every email accepted (not of replays), once committed: /metrics, and LIVE mail wakes delivery. */
  onAccepted?: (env: string, source: string) => void;
}

export interface BatchItemResult {
  index: number;
  id: string | null;
  status: string | null;
  skipped_recipients: { email: string; reason: string }[];
  error: { status_code: number; code: string; message: string; details?: Record<string, unknown> } | null;
}

/** Sending and reading emails: the Public API's use cases, shared by every door. */
export function createEmailsService(deps: EmailsDeps) {
  const { repo, clock } = deps;
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

  function acceptOptions(
    sender: Pick<Sender, 'env' | 'organization_id' | 'plan' | 'daily_limit'>,
    idem: AcceptOptions['idempotency'],
    auth?: AuthCheck,
  ): AcceptOptions {
    const live = sender.env === 'LIVE';
    const now = clock.now();
    const limits = { monthly: PLAN_LIMITS[sender.plan].monthlyVolume, daily: sender.daily_limit };
    return {
      suppress: live,
      volume: live ? { orgId: sender.organization_id, limits, now } : null,
      idempotency: idem,
      ...(auth ? { auth } : {}),
    };
  }

  async function sendParsed(
    sender: Sender,
    r: SendRequest,
    idem: AcceptOptions['idempotency'] = null,
    origin: Origin = API_ORIGIN,
    auth?: AuthCheck,
  ) {
    const { email, recipients } = await buildEmail(sender, r, origin);
    return acceptBuilt(sender, email, recipients, idem, auth);
  }

  async function acceptBuilt(
    sender: Sender,
    email: NewEmail,
    recipients: Recipient[],
    idem: AcceptOptions['idempotency'],
    auth?: AuthCheck,
  ) {
    const result = await repo.acceptEmail(email, recipients, acceptOptions(sender, idem, auth));
    if (!result.replay) deps.onAccepted?.(email.env, email.source);
    return result;
  }

  /**
   * Runs `accept` once per Idempotency-Key and body: a repeat of the same body replays the first
   * response, one in flight waits for it (contract, "Idempotency").
   */
  async function withIdempotency(
    sender: Sender,
    body: unknown,
    idempotencyKey: string | undefined,
    accept: (idem: AcceptOptions['idempotency']) => Promise<{ replay: boolean; response: SendResponse }>,
  ): Promise<{ replay: boolean; response: SendResponse }> {
    if (idempotencyKey === undefined) return accept(null);
    const key = parseIdempotencyKey(idempotencyKey);
    const hash = requestHash(body);
    const prior = await repo.findIdempotent(sender.project_id, key, hash, iso(clock.now()));
    if (prior) return prior;
    const release = deps.idempotency.begin(sender.project_id, key);
    try {
      const expiresAt = iso(clock.now() + LIMITS.idempotencyTtlMs);
      return await accept({ key, hash, expiresAt });
    } finally {
      release();
    }
  }

  return {
    ...createScheduling({ repo, clock }),

    /**
     * Accepts one email (send rules 1–7). With an Idempotency-Key, a repeat of
     * the same body replays the first response; `replay` says which happened.
     */
    async send(
      sender: Sender,
      body: unknown,
      idempotencyKey?: string,
      auth?: AuthCheck,
    ): Promise<{ replay: boolean; response: SendResponse }> {
      const r = parseInput(sendRequestSchema, body);
      return withIdempotency(sender, body, idempotencyKey, (idem) => sendParsed(sender, r, idem, API_ORIGIN, auth));
    },

    /**
     * Accepts one email that came through the SMTP relay, mapped into the same request
     * `send` takes: the same rules, with source SMTP and the client's Message-ID kept. The
     * relay's path when the project tracks relayed mail, whose HTML must then be rewritten.
     */
    async sendRelayed(
      sender: Sender,
      body: unknown,
      relayed: { messageId: string | null; contentIds: readonly (string | null)[] },
    ): Promise<SendResponse> {
      const r = parseInput(sendRequestSchema, body);
      return (await sendParsed(sender, r, null, { source: 'SMTP', ...relayed })).response;
    },

    /**
     * Accepts a message that came through the SMTP relay as written (issue 33): stored and
     * delivered as its client wrote it, through the same rules as a send.
     */
    async sendRelayedRaw(sender: Sender, raw: Buffer, envelope: Envelope): Promise<SendResponse> {
      const { asStored } = await rawReader();
      const { email, recipients } = await buildRawEmail(sender, asStored(raw), envelope, SMTP_ORIGIN);
      return (await acceptBuilt(sender, email, recipients, null)).response;
    },

    /**
     * A received message a route forwards (issue 34): sent as written to `to` from `forwarder`,
     * the route's address, under the send rules (its domain verified and bound to the project,
     * suppressions, volume): svc signs for the forwarder's domain and the return path is its
     * own, so SPF and DKIM hold; the From field stays the original sender's.
     */
    async forwardRaw(sender: Sender, raw: Buffer, forwarder: string, to: string[]): Promise<SendResponse> {
      const { asStored, readForwardRequest } = await rawReader();
      const stored = asStored(raw);
      const { fields, messageId } = readForwardRequest(stored, forwarder, to);
      const content = { subject: fields.subject ?? '', html: null, text: null, template: null, attachments: [] };
      const { email, recipients } = await assemble(
        sender,
        fields,
        { ...content, headers: fields.headers, raw: stored },
        { ...SMTP_ORIGIN, messageId },
      );
      return (await acceptBuilt(sender, email, recipients, null)).response;
    },

    /**
     * POST /v1/emails/raw (issue 33): an RFC 5322 message its client built, as base64, sent to
     * `recipients` or else to every address of its To, Cc and Bcc fields; the rules, limits and
     * idempotency of a send (decisions.md, "Raw sending").
     */
    async sendRaw(
      sender: Sender,
      body: unknown,
      idempotencyKey?: string,
    ): Promise<{ replay: boolean; response: SendResponse }> {
      const r = parseInput(rawSendSchema, body);
      const { asStored, decodeRaw, headerRecipientsOf } = await rawReader();
      const raw = asStored(decodeRaw(r.raw));
      const envelope = { mailFrom: null, rcptTo: r.recipients ?? headerRecipientsOf(raw) };
      const over = {
        tags: r.tags,
        one_click_unsubscribe: r.one_click_unsubscribe,
        scheduled_at: r.scheduled_at,
        metadata: r.metadata,
      };
      const accept = async (idem: AcceptOptions['idempotency']) => {
        const { email, recipients } = await buildRawEmail(sender, raw, envelope, API_ORIGIN, over);
        return acceptBuilt(sender, email, recipients, idem);
      };
      return withIdempotency(sender, body, idempotencyKey, accept);
    },

    /**
     * Why a LIVE send to `address` would skip it (its suppression reason), or null. TEST
     * sends ignore the list (contract, "States and transitions"). The relay asks at RCPT.
     */
    async suppressionOf(sender: Pick<Sender, 'env' | 'project_id'>, address: string): Promise<string | null> {
      return sender.env === 'LIVE' ? repo.suppressionOf(sender.project_id, address) : null;
    },

    /** Accepts up to 100 emails, each on its own (batch rules 1–5). */
    async sendBatch(sender: Sender, body: unknown) {
      const { emails } = parseInput(batchRequestSchema, body);
      // Built side by side, then accepted together in the request's order: the emails are
      // listed and delivered in the order they were sent, on either store.
      const built = await Promise.allSettled(emails.map((r) => buildEmail(sender, r, API_ORIGIN)));
      const ready = built.flatMap((b) =>
        b.status === 'fulfilled' ? [{ ...b.value, opts: acceptOptions(sender, null) }] : [],
      );
      const outcomes = (await repo.acceptEmails(ready)).reverse();
      const results = built.map((b, index): BatchItemResult => {
        const outcome = b.status === 'fulfilled' ? outcomes.pop()! : b;
        if (outcome.status === 'rejected') return batchError(index, outcome.reason);
        if (b.status === 'fulfilled') deps.onAccepted?.(b.value.email.env, b.value.email.source);
        return { index, ...outcome.value.response, error: null };
      });
      const accepted = results.filter((x) => x.error === null).length;
      return { results, accepted_count: accepted, failed_count: results.length - accepted };
    },

    /** Newest first, with the contract's filters and before/after cursors. */
    async list(projectId: string, query: unknown) {
      const q = parseInput(listQuerySchema, query);
      return (await repo.list(projectId, q)).map(toEmailListItem);
    },

    /** The dashboard's list: the contract's filters plus subject, source and API key (issue 31). */
    async search(projectId: string, query: unknown) {
      const q = parseInput(searchQuerySchema, query);
      return (await repo.list(projectId, q)).map(toEmailListItem);
    },

    async get(projectId: string, id: string) {
      return toEmailDetail(await withView(await getRow(projectId, id)));
    },

    async events(projectId: string, id: string) {
      const row = await getRow(projectId, id);
      return (await repo.listEvents(row.seq)).map(toEventPublic);
    },

    /** The email's attachments without their content, for the dashboard's email view; none after body retention. */
    async attachments(projectId: string, id: string) {
      const row = await getRow(projectId, id);
      if (!row.raw_message) return repo.listAttachmentInfo(row.seq);
      return (await readRawView(row.raw_message as Buffer)).attachments.map(
        ({ filename, content_type, size, content_id }) => ({ filename, content_type, size, content_id }),
      );
    },

    /**
     * One attachment of the email with its content, by its position (0 first), for the
     * dashboard's download; not_found when there is none there (or body retention dropped it).
     */
    async attachment(projectId: string, id: string, position: number): Promise<Attachment> {
      const row = await getRow(projectId, id);
      const all = row.raw_message
        ? (await readRawView(row.raw_message as Buffer)).attachments
        : await repo.listAttachments(row.seq);
      const found = all[position];
      if (!found)
        throw new AppError('not_found', 'The email has no attachment there (body retention may have dropped it)');
      return found;
    },

    /** Operator view (CLI): an email of any project. */
    async getAny(id: string) {
      return toEmailDetail(await withView(await getRow(null, id)));
    },

    async eventsAny(id: string) {
      return (await repo.listEvents((await getRow(null, id)).seq)).map(toEventPublic);
    },

    /**
     * Sends a stored email of the project again, as a new email, through the send rules as
     * they stand now (DPA, verified domain, suppressions, volume); audited with the insert.
     * The onboarding-trial email is never resent, and a resend never uses the trial.
     */
    async resend(orgId: string, projectId: string, emailId: string, actor: Actor): Promise<SendResponse> {
      const row = await getRow(projectId, emailId);
      assertResendable(row);
      const org = await deps.accounts.findOrgById(orgId);
      if (!org) throw new AppError('not_found', `no organization ${orgId}`);
      const now = clock.now();
      const email = copyEmail(row, await repo.listAttachments(row.seq), now);
      checkHeaders(email.headers);
      checkMessageSize(email, email.attachments);
      const account = { ...org, organization_id: org.id, project_id: projectId, env: email.env };
      if (email.env === 'LIVE') await checkLiveSender(account, email.from_email, null);
      const audited = resendAudited(actor, now, email);
      const sent = await repo.resendEmail(email, recipientsOf(email), acceptOptions(account, null), audited);
      // A resend is a new email accepted like any other: counted, and a LIVE one delivered at once.
      deps.onAccepted?.(email.env, email.source);
      return sent;
    },
    /**
     * Accepts a send a member asks for in the dashboard (a template's test send): the request
     * of POST /v1/emails in `env` through the same rules (DPA, verified domain, suppressions and
     * volume for LIVE), with no API key and never the onboarding trial; audited as `action`.
     */
    async sendAsMember(
      member: { orgId: string; projectId: string; env: 'LIVE' | 'TEST'; actor: Actor; action: string },
      body: unknown,
    ): Promise<SendResponse> {
      const r = parseInput(sendRequestSchema, body);
      const org = await deps.accounts.findOrgById(member.orgId);
      if (!org) throw new AppError('not_found', `no organization ${member.orgId}`);
      const sender: Sender = {
        ...org,
        id: null,
        organization_id: org.id,
        project_id: member.projectId,
        env: member.env,
      };
      // Checked before the build, with no recipients: the trial is a key creator's, not a member's.
      if (sender.env === 'LIVE') await checkLiveSender(sender, r.from, null);
      const { email, recipients } = await buildEmail(sender, r);
      const audited = (sent: SendResponse): Audited => ({
        actor: member.actor,
        atMs: clock.now(),
        entry: {
          action: member.action,
          project_id: email.project_id,
          target_type: 'email',
          target_id: email.id,
          before: null,
          after: { ...sent, env: email.env, template_id: email.template_id, template_version: email.template_version },
        },
      });
      const sent = await repo.resendEmail(email, recipients, acceptOptions(sender, null), audited);
      deps.onAccepted?.(email.env, email.source);
      return sent;
    },
  };

  /** A batch item's refusal as the batch reports it; an internal error fails the request. */
  function batchError(index: number, e: unknown): BatchItemResult {
    const err = toAppError(e);
    if (err.code === 'internal_error') throw e;
    const error = { status_code: errorRegistry[err.code].status, code: err.code, message: err.message };
    return {
      index,
      id: null,
      status: null,
      skipped_recipients: [],
      error: err.details ? { ...error, details: err.details } : error,
    };
  }

  /** A row with the text and HTML of its stored message, for one passed through as written (raw-view.ts). */
  async function withView(row: EmailRow): Promise<EmailRow> {
    if (!row.raw_message) return row;
    const view = await readRawView(row.raw_message as Buffer);
    return { ...row, html_body: view.html, text_body: view.text };
  }

  async function getRow(projectId: string | null, id: string) {
    const row = isUuid(id) ? await repo.findById(id) : undefined;
    if (!row || (projectId !== null && row.project_id !== projectId)) throw new AppError('not_found', `no email ${id}`);
    return row;
  }
}

function parseIdempotencyKey(key: string): string {
  const r = idempotencyKeySchema.safeParse(key);
  if (r.success) return r.data;
  throw new AppError('request_validation_failed', 'The request failed validation', {
    fields: [
      { field: 'Idempotency-Key', message: `must be 1 to ${LIMITS.idempotencyKeyChars} characters`, code: 'too_big' },
    ],
  });
}

/** One row per distinct address (case-insensitive), to before cc before bcc. */
function recipientsOf(r: SendRequest | Pick<NewEmail, 'to' | 'cc' | 'bcc'>): Recipient[] {
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

export type EmailsService = ReturnType<typeof createEmailsService>;
