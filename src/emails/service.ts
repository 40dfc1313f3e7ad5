import { AppError, errorRegistry, toAppError } from '../errors.ts';
import { iso } from '../lib/clock.ts';
import { requestHash } from '../idempotency/index.ts';
import type { IdempotencyGate } from '../idempotency/index.ts';
import { LIMITS, PLAN_LIMITS } from '../limits/index.ts';
import type { Actor, Audited } from '../audit/index.ts';
import type { AuthCheck } from '../keys/index.ts';
import { parseInput } from '../validation.ts';
import { checkHeaders, checkMessageSize } from './content.ts';
import type { Envelope } from './header-fields.ts';
import type { AcceptOptions, EmailsStore, NewEmail, Recipient, SendResponse } from './store.ts';
import { assertResendable, copyEmail, resendAudited } from './resend.ts';
import { createScheduling } from './scheduling.ts';
import { createEmailReads, getEmailRow } from './reads.ts';
import {
  API_ORIGIN,
  createEmailBuilder,
  rawReader,
  recipientsOf,
  SMTP_ORIGIN,
  type EmailBuilderDeps,
  type Origin,
} from './build.ts';
import type { Sender } from './ports.ts';
import {
  batchRequestSchema,
  idempotencyKeySchema,
  rawSendSchema,
  sendRequestSchema,
  type SendRequest,
} from './schema.ts';

export interface EmailsDeps extends EmailBuilderDeps {
  repo: EmailsStore;
  idempotency: IdempotencyGate;
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
  const { buildEmail, buildRawEmail, assemble, checkLiveSender } = createEmailBuilder(deps);

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
    ...createEmailReads(repo),

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

    /**
     * Sends a stored email of the project again, as a new email, through the send rules as
     * they stand now (DPA, verified domain, suppressions, volume); audited with the insert.
     * The onboarding-trial email is never resent, and a resend never uses the trial.
     */
    async resend(orgId: string, projectId: string, emailId: string, actor: Actor): Promise<SendResponse> {
      const row = await getEmailRow(repo, projectId, emailId);
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

export type EmailsService = ReturnType<typeof createEmailsService>;
