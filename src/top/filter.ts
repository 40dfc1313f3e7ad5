import { z } from 'zod';
import { EMAIL_STATUSES, listQuerySchema } from '../emails/index.ts';

/** The filter of svc top's latest emails: the list's own fields (GET /v1/emails), checked the same way. */
export const topFilterSchema = z.strictObject({
  status: listQuerySchema.shape.status,
  to_email: listQuerySchema.shape.to_email,
  tag: listQuerySchema.shape.tag,
});

export type TopFilter = z.output<typeof topFilterSchema>;

/**
 * What is typed after `/` in the live view, as a filter: each word is a status when it
 * names one (`bounced`), a recipient when it has an @, else a tag (`tag:` may say so).
 * An empty text clears the filter.
 */
export function parseFilterText(text: string): TopFilter | { error: string } {
  const f: Record<string, string> = {};
  for (const word of text.trim().split(/\s+/).filter(Boolean)) {
    const status = word.toUpperCase();
    if ((EMAIL_STATUSES as readonly string[]).includes(status)) f.status = status;
    else if (word.startsWith('tag:')) f.tag = word.slice(4);
    else if (word.includes('@')) f.to_email = word;
    else f.tag = word;
  }
  const r = topFilterSchema.safeParse(f);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  return { error: `${issue.path.join('.')}: ${issue.message}` };
}

/** The filter as the words that make it, for the view's header. */
export const filterText = (f: TopFilter) =>
  [f.status?.toLowerCase(), f.to_email, f.tag === undefined ? undefined : `tag:${f.tag}`].filter(Boolean).join(' ');
