// Cancelling and moving a scheduled email (issue 35; decisions.md, "Scheduled sending"): the
// use cases of POST /v1/emails/{id}/cancel and PATCH /v1/emails/{id}. When a change is still
// possible is schedule-change.ts's rule; each store applies it in one transaction.
import { z } from 'zod';
import type { Actor, Audited } from '../audit/index.ts';
import { AppError } from '../errors.ts';
import { iso, type Clock } from '../lib/clock.ts';
import { isUuid, newId } from '../lib/ids.ts';
import { parseInput } from '../validation.ts';
import { scheduleTime } from './schedule.ts';
import type { EmailsStore, ScheduleChange } from './store.ts';

/** PATCH /v1/emails/{id}: only the time may change (the content was accepted and counted as it is). */
export const rescheduleSchema = z.strictObject({ scheduled_at: z.string().min(1).max(100) });

/** What a change answers: the email's id, status and time. */
export const scheduleViewSchema = z.object({
  id: z.uuid(),
  status: z.string(),
  scheduled_at: z.iso.datetime().nullable(),
});
export type ScheduleView = z.infer<typeof scheduleViewSchema>;

export function createScheduling(deps: { repo: Pick<EmailsStore, 'changeSchedule'>; clock: Clock }) {
  /**
   * A change by `actor` (a member, from the dashboard) is audited with it: what it asked. An
   * API key's change is not, as its sends are not (the email's events record it).
   */
  async function change(
    projectId: string,
    id: string,
    c: ScheduleChange,
    now: number,
    actor?: Actor,
  ): Promise<ScheduleView> {
    const audited: Audited | undefined = actor && {
      actor,
      atMs: now,
      entry: {
        action: 'cancel' in c ? 'email.cancel' : 'email.reschedule',
        project_id: projectId,
        target_type: 'email',
        target_id: id,
        before: null,
        after: 'cancel' in c ? { status: 'CANCELED' } : { scheduled_at: c.at },
      },
    };
    const out = isUuid(id)
      ? await deps.repo.changeSchedule(projectId, id, c, iso(now), audited)
      : ({ outcome: 'missing' } as const);
    if (out.outcome === 'missing') throw new AppError('not_found', `no email ${id}`);
    if (out.outcome === 'started') {
      throw new AppError('email_not_changeable', notChangeable(out.status), { status: out.status });
    }
    return { id, status: out.status, scheduled_at: out.scheduled_at };
  }

  return {
    /** Cancels an email that has not started: it leaves the queue as CANCELED, with a `canceled` event. */
    cancel(projectId: string, id: string, actor?: Actor): Promise<ScheduleView> {
      const now = deps.clock.now();
      return change(projectId, id, { cancel: { eventId: newId(now) } }, now, actor);
    },

    /** Moves an email that has not started to another time (up to 30 days from now). */
    reschedule(projectId: string, id: string, body: unknown, actor?: Actor): Promise<ScheduleView> {
      const now = deps.clock.now();
      const b = parseInput(rescheduleSchema, body);
      return change(projectId, id, { at: iso(scheduleTime(b.scheduled_at, now)) }, now, actor);
    },
  };
}

function notChangeable(status: string): string {
  if (status === 'CANCELED') return 'The email was cancelled already';
  if (status === 'SIMULATED') return 'A TEST email is simulated at once: there is nothing to cancel or move';
  if (status === 'QUEUED') return 'The email has started sending: it can no longer be cancelled or moved';
  return `The email is ${status}: it can no longer be cancelled or moved`;
}
