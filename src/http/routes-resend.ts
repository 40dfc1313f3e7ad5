import { outputSchemas as out, rescheduleSchema, scheduleViewSchema } from '../emails/index.ts';
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

/** Cancel a scheduled email from the dashboard, as POST /v1/emails/{id}/cancel does, audited. */
export const cancelProjectEmail = memberHandler(
  {
    summary:
      'Cancel an email that has not started (a scheduled one): CANCELED, with a canceled event; ' +
      '409 email_not_changeable once it started',
    response: scheduleViewSchema,
  },
  ({ params, actor }, app) => app.emails.cancel(params.project_id!, params.email_id!, actor),
);

/** Move a scheduled email from the dashboard, as PATCH /v1/emails/{id} does, audited. */
export const rescheduleProjectEmail = memberHandler(
  {
    summary:
      'Move an email that has not started to another time (ISO-8601 with offset, or "in 2 hours"; at most 30 days); ' +
      '409 email_not_changeable once it started',
    body: rescheduleSchema,
    response: scheduleViewSchema,
  },
  ({ params, body, actor }, app) => app.emails.reschedule(params.project_id!, params.email_id!, body, actor),
);
