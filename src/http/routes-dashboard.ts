import { z } from 'zod';
import { recipientTimelines, recipientTimelineSchema } from '../delivery/index.ts';
import { dashboardListQuerySchema, outputSchemas as out } from '../emails/index.ts';
import { usageOut } from '../limits/index.ts';
import { statsOut, statsQuerySchema } from '../stats/index.ts';
import { parseInput } from '../validation.ts';
import { AppError } from '../errors.ts';
import { memberHandler, sendCsv, sendFile } from './org-route.ts';

/** The dashboard's reads: an organization's usage, a project's stats, and its emails (with a CSV export). */

/** One email as the dashboard shows it: the Public API's detail, its events, each recipient's delivery, its attachments. */
const emailView = out.emailDetailSchema.extend({
  events: z.array(out.eventSchema),
  recipients: z.array(recipientTimelineSchema),
  attachments: z.array(out.attachmentInfoSchema),
});

export const getUsage = memberHandler(
  { summary: "This month's and today's recipients and the domains, against the plan", response: usageOut },
  ({ org }, app) => app.usage.usageOf(org.id),
);

export const getProjectStats = memberHandler(
  { summary: 'Event counts per UTC day or hour', query: statsQuerySchema, response: statsOut },
  ({ params, query }, app) => app.stats.projectStats(params.project_id!, query),
);

export const listProjectEmails = memberHandler(
  {
    summary:
      'The emails of the project, newest first (as GET /v1/emails, and by subject, source or API key); format=csv exports every match',
    query: dashboardListQuerySchema,
    response: z.array(out.emailListItemSchema),
    csv: true,
  },
  async ({ params, query, reply }, app) => {
    const { format } = parseInput(dashboardListQuerySchema, query);
    const filters: Record<string, unknown> = { ...(query as Record<string, unknown>) };
    delete filters.format;
    if (format === 'json') return app.emails.search(params.project_id!, filters);
    const csv = await app.emailsExport.csv(params.project_id!, filters);
    return sendCsv(reply, `emails-${params.project_id}.csv`, csv);
  },
);

export const getProjectEmailAttachment = memberHandler(
  {
    summary: 'One attachment of an email, by its position (0 first), as a file to save (never shown inline)',
    file: true,
  },
  async ({ params, reply }, app) => {
    const position = z.coerce.number().int().min(0).max(9999).safeParse(params.position);
    if (!position.success) throw new AppError('not_found', 'The email has no attachment there');
    const a = await app.emails.attachment(params.project_id!, params.email_id!, position.data);
    return sendFile(reply, a.filename, a.content);
  },
);

export const getProjectEmail = memberHandler(
  {
    summary:
      'One email of the project with its events, each recipient with its attempts (MX host, reply, rule) and why it waits, and its attachments (no content)',
    response: emailView,
  },
  async ({ params }, app) => {
    const [project, id] = [params.project_id!, params.email_id!];
    // The email is read first: one of another project is a 404 before its queue is read.
    const [email, events, attachments] = await Promise.all([
      app.emails.get(project, id),
      app.emails.events(project, id),
      app.emails.attachments(project, id),
    ]);
    return { ...email, events, recipients: recipientTimelines(await app.explainQueue(id), events), attachments };
  },
);
