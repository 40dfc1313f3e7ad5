import { z } from 'zod';
import { dashboardListQuerySchema, outputSchemas as out } from '../emails/index.ts';
import { usageOut } from '../limits/index.ts';
import { statsOut, statsQuerySchema } from '../stats/index.ts';
import { parseInput } from '../validation.ts';
import { memberHandler, sendCsv } from './org-route.ts';

/** The dashboard's reads: an organization's usage, a project's stats, and its emails (with a CSV export). */

const emailWithEvents = out.emailDetailSchema.extend({ events: z.array(out.eventSchema) });

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

export const getProjectEmail = memberHandler(
  { summary: 'One email of the project with its events', response: emailWithEvents },
  async ({ params }, app) => {
    const [email, events] = await Promise.all([
      app.emails.get(params.project_id!, params.email_id!),
      app.emails.events(params.project_id!, params.email_id!),
    ]);
    return { ...email, events };
  },
);
