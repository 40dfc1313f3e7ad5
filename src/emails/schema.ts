import { z } from 'zod';
import { emailAddress } from '../accounts/index.ts';
import { LIMITS } from '../limits/index.ts';
import { slugSchema } from '../templates/index.ts';

export const EMAIL_STATUSES = [
  'QUEUED',
  'SENDING',
  'SENT',
  'DELIVERED',
  'BOUNCED',
  'COMPLAINED',
  'FAILED',
  'SIMULATED',
  // A scheduled email cancelled before it started: an extension (decisions.md, "Scheduled sending").
  'CANCELED',
] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];

export { EVENT_TYPES, type EventType } from '../events/index.ts';

const noLineBreaks = (s: string) => !/[\r\n]/.test(s);

/** True for an address the send request takes as a recipient (the SMTP relay checks each RCPT TO). */
export const isEmailAddress = (s: string): boolean => emailAddress.safeParse(s).success;

/** `Name <address>` as client libraries write it (decisions.md, "Names where users type them"). */
const NAME_ADDRESS = /^\s*"?([^"<]*?)"?\s*<([^<>\s]+@[^<>\s]+)>\s*$/;

/**
 * What to send in place of `Name <address>`: the contract keeps the name apart (`from_name`)
 * and has none for a recipient, so the form is refused with the exact fields to send instead.
 */
function nameAddressHint(field: 'from' | 'recipient', input: unknown): string | undefined {
  const m = typeof input === 'string' ? NAME_ADDRESS.exec(input) : null;
  if (!m) return undefined;
  const [, name, address] = m;
  if (field === 'from') {
    return `must be the address alone: send "from": ${JSON.stringify(address)}, "from_name": ${JSON.stringify(name!.trim())}`;
  }
  return `must be the address alone: send ${JSON.stringify(address)} (recipients have no display name here)`;
}

/** An address of a send: a "Name <address>" is refused naming what to send instead. */
const sendAddress = (field: 'from' | 'recipient') =>
  z.email({ error: (iss) => nameAddressHint(field, iss.input) ?? 'must be an email address' }).max(320);

/** A list of recipients: a single string is refused naming the array to send instead. */
const addresses = (max: number) =>
  z
    .array(sendAddress('recipient'), {
      error: (iss) =>
        typeof iss.input === 'string'
          ? `must be an array of addresses: send [${JSON.stringify(NAME_ADDRESS.exec(iss.input)?.[2] ?? iss.input)}]`
          : 'must be an array of addresses',
    })
    .max(max);

/** RFC 2045 token: printable ASCII except space and the tspecials. */
const TOKEN = "[!#$%&'*+\\-.^_`{|}~0-9A-Za-z]+";
/** A MIME type (`type/subtype`, then `; name=value` parameters, values bare or quoted), on one line. */
const MIME_TYPE = new RegExp(
  `^${TOKEN}/${TOKEN}(?:[ \\t]*;[ \\t]*${TOKEN}=(?:${TOKEN}|"(?:[\\x20\\x21\\x23-\\x5b\\x5d-\\x7e]|\\\\[\\x20-\\x7e])*"))*$`,
);

/** True for a MIME type the message may carry as an attachment's Content-Type (`text/csv; charset=utf-8`). */
export const isMimeType = (s: string): boolean => MIME_TYPE.test(s);

// The limit is on the decoded bytes; the base64 (with line breaks) may be a third longer.
const ATTACHMENT_MIB = LIMITS.attachmentBytes / (1024 * 1024);

export const attachmentSchema = z.strictObject({
  filename: z.string().min(1).max(LIMITS.attachmentFilenameChars),
  content_type: z
    .string()
    .min(1)
    .max(LIMITS.contentTypeChars)
    .refine(isMimeType, 'must be a MIME type such as application/pdf (type/subtype; parameters)')
    .optional(),
  content_base64: z.string().max(LIMITS.attachmentBase64Chars, `is larger than ${ATTACHMENT_MIB} MiB per attachment`),
});

/** A metadata key: letters, digits, `_` and `-` (it is also a list filter's `key:value`). */
const METADATA_KEY = /^[A-Za-z0-9_-]+$/;

/**
 * An extension (decisions.md, "Metadata"): string values under short keys, stored with the email,
 * returned, filterable in the list and carried in each of its webhooks.
 */
export const metadataSchema = z
  .record(
    z.string().min(1).max(LIMITS.metadataKeyChars).regex(METADATA_KEY, 'a key is letters, digits, _ and - only'),
    z.string().max(LIMITS.metadataValueChars, `a value is at most ${LIMITS.metadataValueChars} characters`),
  )
  .refine((m) => Object.keys(m).length <= LIMITS.metadataKeys, `at most ${LIMITS.metadataKeys} keys`)
  .refine(
    (m) => Buffer.byteLength(JSON.stringify(m)) <= LIMITS.metadataBytes,
    `at most ${LIMITS.metadataBytes} bytes as JSON`,
  );

/** The fields of a send that name who sends, who receives and what it is about. */
const addressingFields = {
  from: sendAddress('from'),
  to: addresses(LIMITS.recipientsPerEmail).min(1),
  cc: addresses(LIMITS.recipientsPerEmail).nullish(),
  bcc: addresses(LIMITS.recipientsPerEmail).nullish(),
  from_name: z.string().max(LIMITS.fromNameChars).refine(noLineBreaks, 'must not contain line breaks').nullish(),
  reply_to: addresses(LIMITS.replyTo).nullish(),
  subject: z.string().max(LIMITS.subjectChars).refine(noLineBreaks, 'must not contain line breaks').nullish(),
  tags: z.array(z.string().min(1).max(LIMITS.tagChars)).max(LIMITS.tags).nullish(),
  // An extension (decisions.md, "One-click unsubscribe"): true or false overrides the project's
  // `one_click_unsubscribe` setting for this email; null or absent keeps it.
  one_click_unsubscribe: z.boolean().nullish(),
  // An extension (decisions.md, "Scheduled sending"): send later, at an ISO-8601 date-time with
  // its offset or "in 1 hour", at most 30 days ahead (schedule.ts reads it against the clock).
  scheduled_at: z.string().max(100).nullish(),
  metadata: metadataSchema.nullish(),
};

/** to, cc and bcc together: at most LIMITS.recipientsPerEmail. */
function checkRecipientTotal(
  r: { to: string[]; cc?: string[] | null | undefined; bcc?: string[] | null | undefined },
  ctx: z.RefinementCtx,
) {
  const total = r.to.length + (r.cc?.length ?? 0) + (r.bcc?.length ?? 0);
  if (total > LIMITS.recipientsPerEmail) {
    ctx.addIssue({
      code: 'custom',
      path: ['to'],
      message: `to, cc and bcc together exceed ${LIMITS.recipientsPerEmail}`,
    });
  }
}

/**
 * EmailSendRequest, with the contract's structural rules; content rules run after it (content.ts).
 * Strict: a misspelt field (`tag`) is refused by name, never dropped (decisions.md).
 */
export const sendRequestSchema = z
  .strictObject({
    ...addressingFields,
    html: z.string().nullish(),
    text: z.string().nullish(),
    template: slugSchema.nullish(),
    // An extension (decisions.md, "Template versions and layouts"): a version of the template
    // other than its published one.
    template_version: z.number().int().min(1).nullish(),
    variables: z.record(z.string(), z.unknown()).nullish(),
    headers: z
      .record(z.string().min(1).max(LIMITS.headerNameChars), z.string().max(LIMITS.headerValueChars))
      .refine((h) => Object.keys(h).length <= LIMITS.headers, `at most ${LIMITS.headers} custom headers`)
      .nullish(),
    attachments: z.array(attachmentSchema).max(LIMITS.attachments).nullish(),
  })
  .superRefine((r, ctx) => {
    checkRecipientTotal(r, ctx);
    if (r.template) {
      // decisions.md: "`html` together with `template` 422 request_validation_failed".
      if (r.html != null)
        ctx.addIssue({ code: 'custom', path: ['html'], message: 'html and template are not sent together' });
      return;
    }
    if (r.subject == null)
      ctx.addIssue({ code: 'custom', path: ['subject'], message: 'subject is required without template' });
    if (r.html == null && r.text == null) {
      ctx.addIssue({ code: 'custom', path: ['html'], message: 'html or text is required without template' });
    }
    if (r.variables != null)
      ctx.addIssue({ code: 'custom', path: ['variables'], message: 'variables need a template' });
    if (r.template_version != null)
      ctx.addIssue({ code: 'custom', path: ['template_version'], message: 'template_version needs a template' });
  });

export type SendRequest = z.output<typeof sendRequestSchema>;

/**
 * What a message passed through as written (the SMTP relay, POST /v1/emails/raw; issue 33) gives
 * the send rules, read from its header block: the same addressing rules as a send. Its own
 * header fields are kept for the API's view only (svc writes none of them), so they are not held
 * to the custom-header limits of a send: the header block's size bounds them.
 */
export const rawFieldsSchema = z
  .strictObject({ ...addressingFields, headers: z.record(z.string(), z.string()) })
  .superRefine(checkRecipientTotal);

export type RawFields = z.output<typeof rawFieldsSchema>;

/**
 * POST /v1/emails/raw (issue 33; decisions.md, "Raw sending"): an RFC 5322 message as base64,
 * sent to `recipients` (the envelope) or else to every address of its To, Cc and Bcc fields.
 * `tags` and `one_click_unsubscribe` as a send's; over the message's X-Service-* fields.
 */
export const rawSendSchema = z.strictObject({
  raw: z.string().min(1).max(LIMITS.rawBase64Chars, 'is larger than 25 MiB as base64 decodes'),
  recipients: addresses(LIMITS.recipientsPerEmail).min(1).nullish(),
  tags: addressingFields.tags,
  one_click_unsubscribe: addressingFields.one_click_unsubscribe,
  scheduled_at: addressingFields.scheduled_at,
  metadata: addressingFields.metadata,
});

export const batchRequestSchema = z.strictObject({
  emails: z.array(sendRequestSchema).min(1).max(LIMITS.batchEmails),
});

const dateTime = z.iso.datetime({ offset: true });

export const listQuerySchema = z
  .strictObject({
    status: z.enum(EMAIL_STATUSES).optional(),
    from_email: z.string().min(1).max(320).optional(),
    to_email: z.string().min(1).max(320).optional(),
    tag: z.string().min(1).max(LIMITS.tagChars).optional(),
    /** `key:value`: emails whose metadata holds that value under that key (decisions.md, "Metadata"). */
    metadata: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,40}:/, 'send key:value, the key letters, digits, _ and - only')
      .max(LIMITS.metadataKeyChars + 1 + LIMITS.metadataValueChars)
      .optional(),
    from: dateTime.optional(),
    to: dateTime.optional(),
    limit: z.coerce.number().int().min(1).max(LIMITS.listMax).default(LIMITS.listDefault),
    before: z.uuid().optional(),
    after: z.uuid().optional(),
  })
  .refine((q) => !(q.before && q.after), { message: 'use before or after, not both', path: ['before'] });

/** How an email came in (the contract's EmailSource); a resend keeps its original's, a batch is API. */
export const EMAIL_SOURCES = ['API', 'SMTP', 'CAMPAIGN'] as const;

/**
 * The dashboard's list filters (issue 31): the contract's, plus a subject substring (without
 * regard to ASCII case), the source and the API key that sent it. GET /v1/emails keeps the
 * contract's query; only the dashboard's own route takes these.
 */
export const searchQuerySchema = listQuerySchema.extend({
  subject: z.string().min(1).max(LIMITS.subjectChars).optional(),
  source: z.enum(EMAIL_SOURCES).optional(),
  api_key_id: z.uuid().optional(),
});

/** What a page of the list may be filtered by; the Public API sets only the contract's part. */
export type ListQuery = z.output<typeof searchQuerySchema>;

export const idempotencyKeySchema = z.string().min(1).max(LIMITS.idempotencyKeyChars);
