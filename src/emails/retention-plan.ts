// One batch of email retention, decided once for both stores (issue 30, item 3: "the
// retention steps"): each store reads the rows, this says which emails to act on and where
// the next batch starts, and the store acts on them in the same transaction.
import type { RetentionBatch, RetentionPage } from './store.ts';

/** An email as a retention batch reads it. */
export interface RetentionRow {
  seq: number;
  created_at: string;
  status: string;
}

/** What a batch does: act on `act` (by seq); the rest of a RetentionBatch but `changed`. */
export type RetentionPlan = Omit<RetentionBatch, 'changed'> & { act: number[] };

/**
 * The plan of one batch of `page`: `again` are the emails it held back before, read again;
 * `rows` are up to `page.limit` emails after `page.after`, in seq order. An email still
 * QUEUED or SENDING is held for the next pass, never acted on; the walk stops at the first
 * email created at or after `cutoff` (seqs follow creation), and is done then or when the
 * page came back short.
 */
export function planRetentionBatch(
  cutoff: string,
  page: RetentionPage,
  again: readonly RetentionRow[],
  rows: readonly RetentionRow[],
): RetentionPlan {
  const act: number[] = [];
  const held: number[] = [];
  const visit = (r: RetentionRow) => (r.status === 'QUEUED' || r.status === 'SENDING' ? held : act).push(r.seq);
  again.forEach(visit);
  let next = page.after;
  for (const r of rows) {
    if (r.created_at >= cutoff) return { act, next, held, done: true };
    next = r.seq;
    visit(r);
  }
  return { act, next, held, done: rows.length < page.limit };
}
