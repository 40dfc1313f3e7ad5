// The accept of an email, decided once for both stores (issue 30, item 3: "the accept plan").
// The plan is a generator: it asks its store for what it must read or write, in order, and
// the store answers: SQLite synchronously inside its group transaction (runPlan), PostgreSQL
// with a round trip per ask (runPlanAsync). The steps, their order and every refusal live
// here; how each store reads and writes stays in repo.ts and repo-pg.ts.
import { AppError } from '../errors.ts';
import { AuthEpochMoved } from '../keys/index.ts';
import { dropSuppressed } from './suppression-step.ts';
import type { AcceptOptions, AcceptResult, NewEmail, Recipient, SendResponse } from './store.ts';

/** A committed idempotency record: the request it answered and its response. */
export interface PriorRequest {
  request_hash: string;
  response: string;
}

/** What the plan asks its store, one step at a time, with the answer each expects. */
export type AcceptAsk =
  /** Whether the sender's kept key still stands: `confirmedNow(opts.auth)` inside the transaction (keys/epoch.ts): boolean. */
  | { step: 'epoch' }
  /** The record of `opts.idempotency.key` (PostgreSQL claims the key here): PriorRequest | undefined. */
  | { step: 'prior' }
  /** Whether the project has sent its one trial email already: boolean. */
  | { step: 'trial' }
  /** The suppression reasons for these lower-cased addresses: (address) => reason | undefined. */
  | { step: 'reasons'; addresses: string[] }
  /** Reserve `count` recipients of the organization's volume (throws when over): nothing. */
  | { step: 'reserve'; count: number }
  /** Insert the email with these recipients, its body, tags, attachments and first event: nothing. */
  | { step: 'insert'; recipients: Recipient[] }
  /** Save the idempotency record with this response: nothing. */
  | { step: 'save'; response: SendResponse };

export type AcceptPlan = Generator<AcceptAsk, AcceptResult, unknown>;

export function trialUsed(): AppError {
  return new AppError('trial_restricted', 'This project has already sent its one onboarding-trial email', {
    reason: 'trial_used',
  });
}

/** The replay of a committed request; a key reused for another request is refused. */
export function replayOf(prior: PriorRequest, hash: string): AcceptResult {
  if (prior.request_hash !== hash) throw new AppError('idempotency_key_reused');
  return { replay: true, response: JSON.parse(prior.response) as SendResponse };
}

/**
 * Accepts one email (store.ts, acceptEmail): a kept key's auth epoch, replay of an idempotent
 * request, the trial's one email, the suppression list, the volume, then the email and its
 * idempotency record.
 * The store runs every ask inside one transaction, so a refusal leaves nothing written.
 */
export function* acceptPlan(e: NewEmail, recipients: Recipient[], opts: AcceptOptions): AcceptPlan {
  // First, before a replay or a refusal: a key revoked since it was kept writes nothing and
  // learns nothing (the request runs again on fresh data, http/auth.ts runKept).
  if (opts.auth && !((yield { step: 'epoch' }) as boolean)) throw new AuthEpochMoved();
  if (opts.idempotency) {
    const prior = (yield { step: 'prior' }) as PriorRequest | undefined;
    if (prior) return replayOf(prior, opts.idempotency.hash);
  }
  // Inside the write: of two trial sends at once, the second sees the first's row.
  if (e.trial && ((yield { step: 'trial' }) as boolean)) throw trialUsed();
  let kept = recipients;
  let skipped: SendResponse['skipped_recipients'] = [];
  if (opts.suppress) {
    const addresses = recipients.map((r) => r.address.toLowerCase());
    const reasonOf = (yield { step: 'reasons', addresses }) as (address: string) => string | undefined;
    ({ kept, skipped } = dropSuppressed(e, recipients, reasonOf));
  }
  if (opts.volume) yield { step: 'reserve', count: kept.length };
  yield { step: 'insert', recipients: kept };
  const response: SendResponse = { id: e.id, status: e.status, skipped_recipients: skipped };
  if (opts.idempotency) yield { step: 'save', response };
  return { replay: false, response };
}

/** Runs a plan, answering each ask synchronously (SQLite, inside its transaction). */
export function runPlan(plan: AcceptPlan, answer: (ask: AcceptAsk) => unknown): AcceptResult {
  let next = plan.next();
  while (!next.done) next = plan.next(answer(next.value));
  return next.value;
}

/** Runs a plan, answering each ask in turn (PostgreSQL, one transaction's round trips). */
export async function runPlanAsync(
  plan: AcceptPlan,
  answer: (ask: AcceptAsk) => Promise<unknown>,
): Promise<AcceptResult> {
  let next = plan.next();
  while (!next.done) next = plan.next(await answer(next.value));
  return next.value;
}
