import type { App } from '../app.ts';
import { outputSchemas as out } from '../emails/index.ts';
import { PROJECT, type OrgRoute } from './org-route.ts';

/** Resend from the dashboard (decisions.md, "Management endpoints that the specification only names"). */
export function registerResendRoutes(orgRoute: OrgRoute, app: App): void {
  orgRoute(
    'POST',
    `${PROJECT}/emails/:email_id/resend`,
    {
      summary:
        'Send a stored email again as a new email, through the send rules as they stand now; ' +
        'the answer is that of POST /v1/emails (the onboarding-trial email: 422 trial_restricted)',
      response: out.sendResponseSchema,
    },
    ({ org, params, actor }) => app.emails.resend(org.id, params.project_id!, params.email_id!, actor),
  );
}
