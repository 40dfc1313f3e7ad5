// A scheduled email cancelled or moved (issue 35; decisions.md, "Scheduled sending"): the rule
// of when that is still possible, for both stores, in one place. Each store runs it in one
// transaction with its own statements (repo.ts, repo-pg.ts).

/**
 * The recipients a change may still touch: never attempted, not claimed, still queued. Delivery's
 * claim sets `attempts` and a lease in its own transaction, so a change and a claim of the same
 * email cannot both succeed: whichever commits first wins, the other sees the rows changed.
 */
export const UNSTARTED_RECIPIENT = 'attempts = 0 AND lease_until IS NULL AND next_attempt_at IS NOT NULL';

/** Only a LIVE email still QUEUED may change; any other status is its answer. */
export const CHANGEABLE_STATUS = 'QUEUED';
