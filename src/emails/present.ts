import type { EmailRow, EventRow } from './store.ts';

const JSON_FIELDS = ['to_emails', 'cc_emails', 'bcc_emails', 'reply_to', 'tags', 'headers', 'metadata'] as const;
const BOOL_FIELDS = [
  'dkim_aligned',
  'spf_aligned',
  'spf_authorized_ip',
  'dmarc_aligned',
  'one_click_unsubscribe',
] as const;
const OPTIONAL = [
  'bounce_category',
  'bounce_rule',
  'bounce_type',
  'dkim_aligned',
  'dkim_d',
  'dkim_selector',
  'dkim_signing_status',
  'dmarc_aligned',
  'final_smtp_code',
  'final_smtp_enhanced',
  'final_smtp_text',
  'message_id',
  'one_click_unsubscribe',
  'scheduled_at',
  'source',
  'spf_aligned',
  'spf_authorized_ip',
  'spf_domain',
  'suppression_reason',
] as const;

/** EmailDetail as the contract shows it. */
export function toEmailDetail(r: EmailRow): Record<string, unknown> {
  const v = (k: string) => r[k] ?? null;
  const out: Record<string, unknown> = {
    id: r.id,
    project_id: r.project_id,
    from_email: v('from_email'),
    from_name: v('from_name'),
    to_emails: null,
    cc_emails: null,
    bcc_emails: null,
    reply_to: null,
    subject: v('subject'),
    status: v('status'),
    tags: null,
    headers: null,
    html_body: v('html_body'),
    text_body: v('text_body'),
    created_at: v('created_at'),
    sent_at: v('sent_at'),
    delivered_at: v('delivered_at'),
    failed_at: v('failed_at'),
  };
  for (const k of JSON_FIELDS) out[k] = r[k] == null ? null : JSON.parse(r[k] as string);
  for (const k of OPTIONAL) out[k] = v(k);
  for (const k of BOOL_FIELDS) out[k] = r[k] == null ? null : r[k] === 1;
  return out;
}

const DETAIL_ONLY = [
  'from_name',
  'cc_emails',
  'bcc_emails',
  'reply_to',
  'html_body',
  'text_body',
  'headers',
  'failed_at',
];

/** EmailListItem: the detail without bodies, headers and the other detail-only fields. */
export function toEmailListItem(r: EmailRow): Record<string, unknown> {
  const d = toEmailDetail(r);
  for (const k of DETAIL_ONLY) delete d[k];
  return d;
}

/** An event as the Public API presents it (GET /v1/emails/{id}/events). */
export type PublicEvent = {
  id: string;
  type: EventRow['type'];
  data: Record<string, unknown>;
  timestamp: string;
  ip_address: string | null;
  user_agent: string | null;
};

export function toEventPublic(e: EventRow): PublicEvent {
  return {
    id: e.id,
    type: e.type,
    data: JSON.parse(e.data) as Record<string, unknown>,
    timestamp: e.created_at,
    ip_address: e.ip_address,
    user_agent: e.user_agent,
  };
}
