import { outputSchemas as out } from '../emails/index.ts';
import { memberHandler } from './org-route.ts';

/** Resend from the dashboard (decisions.md, "Management endpoints that the specification only names"). */
export const resendEmail = memberHandler(
  {
    summary:
      'Send a stored email again as a new email, through the send rules as they stand now; ' +
      'the answer is that of POST /v1/emails (the onboarding-trial email: 422 trial_restricted)',
    response: out.sendResponseSchema,
  },
  ({ org, params, actor }, app) => app.emails.resend(org.id, params.project_id!, params.email_id!, actor),
);
