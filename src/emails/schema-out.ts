import { z } from 'zod';
import { EMAIL_STATUSES, EVENT_TYPES } from './schema.ts';

/** Response shapes of the Public API, for the OpenAPI document (the service builds the objects). */
const dt = z.iso.datetime();
const status = z.enum(EMAIL_STATUSES);

export const skippedRecipientSchema = z.object({ email: z.string(), reason: z.string() });

export const sendResponseSchema = z.object({
  id: z.uuid(),
  status,
  skipped_recipients: z.array(skippedRecipientSchema),
});

const optional = {
  bounce_category: z.string().nullable().optional(),
  /** Which classifier rule decided the bounce, in one line (not in the contract: decisions.md, issue 29). */
  bounce_rule: z.string().nullable().optional(),
  bounce_type: z.enum(['hard', 'soft']).nullable().optional(),
  dkim_aligned: z.boolean().nullable().optional(),
  dkim_d: z.string().nullable().optional(),
  dkim_selector: z.string().nullable().optional(),
  dkim_signing_status: z.enum(['expected', 'confirmed', 'failed', 'not_signed']).nullable().optional(),
  dmarc_aligned: z.boolean().nullable().optional(),
  final_smtp_code: z.number().int().nullable().optional(),
  final_smtp_enhanced: z.string().nullable().optional(),
  final_smtp_text: z.string().nullable().optional(),
  message_id: z.string().nullable().optional(),
  // The send's own one-click unsubscribe choice; null: the project's setting (decisions.md).
  one_click_unsubscribe: z.boolean().nullable().optional(),
  // When a scheduled send goes out (decisions.md, "Scheduled sending"); null: at once.
  scheduled_at: dt.nullable().optional(),
  // The send's key/value pairs (decisions.md, "Metadata"); null without.
  metadata: z.record(z.string(), z.string()).nullable().optional(),
  source: z.enum(['API', 'SMTP', 'CAMPAIGN']).nullable().optional(),
  spf_aligned: z.boolean().nullable().optional(),
  spf_authorized_ip: z.boolean().nullable().optional(),
  spf_domain: z.string().nullable().optional(),
  suppression_reason: z.enum(['HARD_BOUNCE', 'COMPLAINT', 'UNSUBSCRIBE', 'MANUAL']).nullable().optional(),
};

export const emailListItemSchema = z.object({
  id: z.uuid(),
  project_id: z.uuid(),
  from_email: z.string(),
  to_emails: z.array(z.string()),
  subject: z.string(),
  status,
  tags: z.array(z.string()),
  created_at: dt,
  sent_at: dt.nullable(),
  delivered_at: dt.nullable(),
  ...optional,
});

export const emailDetailSchema = emailListItemSchema.extend({
  from_name: z.string().nullable(),
  cc_emails: z.array(z.string()).nullable(),
  bcc_emails: z.array(z.string()).nullable(),
  reply_to: z.array(z.string()).nullable(),
  headers: z.record(z.string(), z.string()),
  html_body: z.string().nullable(),
  text_body: z.string().nullable(),
  failed_at: dt.nullable(),
});

/** An attachment as the dashboard lists it (not in the contract: issue 31). */
export const attachmentInfoSchema = z.object({
  filename: z.string(),
  content_type: z.string(),
  size: z.number().int(),
  content_id: z.string().nullable(),
});

export const eventSchema = z.object({
  id: z.uuid(),
  type: z.enum(EVENT_TYPES),
  data: z.record(z.string(), z.unknown()),
  timestamp: dt,
  ip_address: z.string().nullable().optional(),
  user_agent: z.string().nullable().optional(),
});

export const batchResponseSchema = z.object({
  results: z.array(
    z.object({
      index: z.number().int(),
      id: z.uuid().nullable(),
      status: status.nullable(),
      skipped_recipients: z.array(skippedRecipientSchema),
      error: z
        .object({
          status_code: z.number().int(),
          code: z.string(),
          message: z.string(),
          details: z.record(z.string(), z.unknown()).optional(),
        })
        .nullable(),
    }),
  ),
  accepted_count: z.number().int(),
  failed_count: z.number().int(),
});

export const errorEnvelopeSchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).nullable(),
    request_id: z.string().nullable(),
  }),
  request_id: z.string().nullable(),
});
