// Scheduled sending (issue 35; decisions.md, "Scheduled sending"): when a send asks to go out
// later. `scheduled_at` is an ISO-8601 date-time with its offset, or an offset from now as
// people write it ("in 1 hour", "in 30 min", "in 2 days"). At most 30 days ahead.
import { fieldError } from '../validation.ts';

/** The furthest a send may be scheduled. */
export const SCHEDULE_MAX_MS = 30 * 86_400_000;

/**
 * A time a little in the past is taken as now: the client's clock and this server's differ
 * by a few seconds, and "send at 12:00:00" sent at 12:00:01 means send now.
 */
export const SCHEDULE_PAST_GRACE_MS = 60_000;

const UNITS: Record<string, number> = {
  s: 1000,
  sec: 1000,
  secs: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  min: 60_000,
  mins: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hrs: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
  w: 7 * 86_400_000,
  week: 7 * 86_400_000,
  weeks: 7 * 86_400_000,
};

const OFFSET = /^in\s+(\d{1,6})\s*([a-z]+)$/;
const AN_OFFSET = /^in\s+an?\s+([a-z]+)$/;
/** RFC 3339 / ISO-8601 with a date, a time and an offset (Z or ±hh:mm): a time with no zone is ambiguous. */
const ISO = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})$/;

const FIELD = 'scheduled_at';

/**
 * The time (ms) `value` names, checked against `now`: in the past beyond the grace, more than
 * 30 days ahead, or not a time at all is a 422 naming `field`. A time within the grace is now.
 */
export function scheduleTime(value: string, now: number, field = FIELD): number {
  const at = parse(value.trim().toLowerCase(), now);
  if (at === undefined) {
    throw fieldError(
      field,
      `"${value.slice(0, 60)}" is not a time: send an ISO-8601 date-time with its offset (2026-12-01T09:00:00Z) or "in 1 hour"`,
    );
  }
  if (at < now - SCHEDULE_PAST_GRACE_MS) {
    throw fieldError(field, `${new Date(at).toISOString()} is in the past; leave ${field} out to send now`);
  }
  if (at > now + SCHEDULE_MAX_MS) {
    throw fieldError(field, `${new Date(at).toISOString()} is more than 30 days ahead`);
  }
  return Math.max(at, now);
}

function parse(v: string, now: number): number | undefined {
  if (v === 'now') return now;
  const n = OFFSET.exec(v);
  if (n) {
    const unit = UNITS[n[2]!];
    return unit === undefined ? undefined : now + Number(n[1]) * unit;
  }
  const one = AN_OFFSET.exec(v);
  if (one) {
    const unit = UNITS[one[1]!];
    return unit === undefined ? undefined : now + unit;
  }
  if (!ISO.test(v)) return undefined;
  const t = Date.parse(v.toUpperCase().replace(' ', 'T'));
  return Number.isFinite(t) ? t : undefined;
}
