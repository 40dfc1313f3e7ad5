import { z } from 'zod';
import type { App } from '../app.ts';
import { dashboardListQuerySchema, outputSchemas as out } from '../emails/index.ts';
import { usageOut } from '../limits/index.ts';
import { statsOut, statsQuerySchema } from '../stats/index.ts';
import { parseInput } from '../validation.ts';
import { ORG, PROJECT, sendCsv, type OrgRoute } from './org-route.ts';

const emailWithEvents = out.emailDetailSchema.extend({ events: z.array(out.eventSchema) });

/** The dashboard's reads: an organization's usage, a project's stats, and its emails (with a CSV export). */
export function registerDashboardRoutes(orgRoute: OrgRoute, app: App): void {
  orgRoute(
    'GET',
    `${ORG}/usage`,
    { summary: "This month's and today's recipients and the domains, against the plan", response: usageOut },
    ({ org }) => app.usage.usageOf(org.id),
  );

  orgRoute(
    'GET',
    `${PROJECT}/stats`,
    { summary: 'Event counts per UTC day or hour', query: statsQuerySchema, response: statsOut },
    ({ params, query }) => app.stats.projectStats(params.project_id!, query),
  );

  orgRoute(
    'GET',
    `${PROJECT}/emails`,
    {
      summary: 'The emails of the project, newest first (as GET /v1/emails); format=csv exports every match',
      query: dashboardListQuerySchema,
      response: z.array(out.emailListItemSchema),
      csv: true,
    },
    async ({ params, query, reply }) => {
      const { format } = parseInput(dashboardListQuerySchema, query);
      const filters: Record<string, unknown> = { ...(query as Record<string, unknown>) };
      delete filters.format;
      if (format === 'json') return app.emails.list(params.project_id!, filters);
      const csv = await app.emailsExport.csv(params.project_id!, filters);
      return sendCsv(reply, `emails-${params.project_id}.csv`, csv);
    },
  );

  orgRoute(
    'GET',
    `${PROJECT}/emails/:email_id`,
    { summary: 'One email of the project with its events', response: emailWithEvents },
    async ({ params }) => {
      const [email, events] = await Promise.all([
        app.emails.get(params.project_id!, params.email_id!),
        app.emails.events(params.project_id!, params.email_id!),
      ]);
      return { ...email, events };
    },
  );
}
