import { z } from 'zod';
import { topFilterSchema } from './filter.ts';

/** Counts by event type. */
const counts = z.record(z.string(), z.number().int());
const perMinute = z.array(z.number().int()).length(60);

/** One destination domain: what waits for it, what it took in the last minute, its throttle. */
export const destinationSchema = z.object({
  domain: z.string(),
  /** Recipients waiting for it. */
  waiting: z.number().int(),
  /** Of those, the ones waiting after an attempt that did not succeed (deferred). */
  deferred: z.number().int(),
  /** Recipients delivered to it, and bounced or failed, in the last minute. */
  delivered: z.number().int(),
  bounced: z.number().int(),
  throttled: z.boolean(),
  concurrency: z.number().int().nullable(),
  paused_until: z.string().nullable(),
  reason: z.string().nullable(),
  /** The destination's MTA-STS policy mode (RFC 8461) as delivery last fetched it; null: none. */
  mta_sts: z.string().nullable(),
});

export const latestEmailSchema = z.object({
  id: z.string(),
  status: z.string(),
  from_email: z.string(),
  to: z.array(z.string()),
  subject: z.string(),
  created_at: z.string(),
});

/** What `svc top` shows: one reading (GET /v1/top's `data`). */
export const snapshotSchema = z.object({
  at: z.string(),
  /** The project read, or null for the whole server (the data dir). */
  project_id: z.string().nullable(),
  /** Events of the last minute, by type. */
  last_minute: counts,
  /** Per second over the last minute, oldest first: emails accepted, recipients delivered, bounced or failed. */
  per_second: z.object({ accepted: perMinute, delivered: perMinute, bounced: perMinute }),
  /** Events of this UTC hour and the one before, by type (the stats rollup). */
  this_hour: counts,
  previous_hour: counts,
  queue: z.object({ recipients: z.number().int(), oldest_seconds: z.number().int() }),
  /** Destinations with recipients waiting or mail in the last minute, the busiest first (10 at most). */
  destinations: z.array(destinationSchema),
  /** The filter of `latest`. */
  filter: topFilterSchema,
  latest: z.array(latestEmailSchema),
  webhooks: z.object({
    pending_events: z.number().int(),
    failed_last_hour: z.number().int(),
    auto_disabled: z.array(z.object({ id: z.string(), url: z.string() })),
  }),
  /** Servers running on this store (seen in the last 30 s) and the SMTP relay sessions they hold. */
  relay: z.object({ nodes: z.number().int(), sessions: z.number().int() }),
});

/** An email in the detail pane (GET /v1/top/emails/{id}'s `data`): its events, and why it waits. */
export const emailDetailSchema = z.object({
  id: z.string(),
  status: z.string(),
  events: z.array(z.object({ type: z.string(), at: z.string(), recipient: z.string().nullable(), detail: z.string() })),
  /** Per recipient, where it stands and why it waits (as `svc emails show` says it). */
  waiting: z.array(z.string()),
});

export type Destination = z.output<typeof destinationSchema>;
export type LatestEmail = z.output<typeof latestEmailSchema>;
export type Snapshot = z.output<typeof snapshotSchema>;
export type EmailDetail = z.output<typeof emailDetailSchema>;
