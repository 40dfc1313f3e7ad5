import { AppError } from '../errors.ts';
import { DEFAULT_BUCKETS, MAX_BUCKETS, type Granularity, type StatsQuery } from './schema.ts';

export const BUCKET_MS: Record<Granularity, number> = { day: 86_400_000, hour: 3_600_000 };

/** A range of whole UTC buckets: `from` inclusive, `to` exclusive, `buckets` of them. */
export interface BucketRange {
  granularity: Granularity;
  from: number;
  to: number;
  buckets: number;
}

/**
 * The buckets a stats query covers: `from` widened down and `to` up to whole
 * UTC buckets (epoch milliseconds are whole days at UTC midnight); to defaults
 * to the end of the current bucket and from to the default span before it.
 * An empty or reversed range, or one of more than MAX_BUCKETS, is a 422.
 */
export function resolveRange(q: StatsQuery, now: number): BucketRange {
  const unit = BUCKET_MS[q.granularity];
  const floor = (t: number) => t - (((t % unit) + unit) % unit);
  const to = q.to === undefined ? floor(now) + unit : floor(Date.parse(q.to) + unit - 1);
  const from = q.from === undefined ? to - DEFAULT_BUCKETS[q.granularity] * unit : floor(Date.parse(q.from));
  if (from >= to) throw invalid('from', 'must be before to', 'invalid_range');
  const buckets = (to - from) / unit;
  const max = MAX_BUCKETS[q.granularity];
  if (buckets > max) throw invalid('to', `the range spans ${buckets} ${q.granularity}s; at most ${max}`, 'too_big');
  return { granularity: q.granularity, from, to, buckets };
}

function invalid(field: string, message: string, code: string): AppError {
  return new AppError('request_validation_failed', 'The request failed validation', {
    fields: [{ field, message, code }],
  });
}
