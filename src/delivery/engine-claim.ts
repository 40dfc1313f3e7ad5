import type { DueRow, RecipientOutcome, Stamp } from './repo.ts';
import type { ClaimedEmail } from './store.ts';
import { buildJob, type BuiltJob } from './build-job.ts';
import { byLease, drop, hold, type Claimed, type EngineState, type Group } from './engine-state.ts';

/** What one claim pass did: claimed something, and found more due than it could take. */
export interface ClaimPass {
  claimed: boolean;
  more: boolean;
}

function groupRows(rows: DueRow[]): Group[] {
  const groups = new Map<string, Group>();
  for (const r of rows) {
    const k = `${r.email_seq}|${r.domain}`;
    const g = groups.get(k) ?? { seq: r.email_seq, domain: r.domain, rows: [] };
    g.rows.push(r);
    groups.set(k, g);
  }
  return [...groups.values()];
}

/**
 * The groups of due rows to claim, at most `free`: none already ours, and per destination at
 * most one round of its slots ahead of its transactions, none while it is paused.
 */
function pickGroups(s: EngineState, rows: DueRow[], free: number, now: number): Group[] {
  const groups: Group[] = [];
  const picked = new Map<string, number>();
  for (const g of groupRows(rows)) {
    if (groups.length === free) break;
    if (g.rows.some((r) => s.held.has(r.id))) continue;
    const waiting = (s.ready.get(g.domain)?.length ?? 0) + (picked.get(g.domain) ?? 0);
    if (!s.throttle.mayClaim(g.domain, now, waiting)) continue;
    picked.set(g.domain, (picked.get(g.domain) ?? 0) + 1);
    groups.push(g);
  }
  return groups;
}

/** Finds due rows and claims up to `free` transactions of them, which then wait in `ready` for a slot. */
export async function claimDue(s: EngineState, free: number): Promise<ClaimPass> {
  const now = s.deps.clock.now();
  const rows = await s.deps.repo.findDue(now, free * 8);
  const groups = pickGroups(s, rows, free, now);
  if (!groups.length) return { claimed: false, more: false };
  await claim(s, groups, now);
  return { claimed: true, more: rows.length >= free * 8 || groups.length === free };
}

/** What a claim stamps on its email: the identifiers the message goes out with. */
function stampOf(j: BuiltJob): Stamp {
  return {
    message_id: j.job.message_id,
    dkim: j.job.dkim && { d: j.job.dkim.domain, s: j.job.dkim.selector },
    spf_domain: j.job.envelope_from.slice(j.job.envelope_from.lastIndexOf('@') + 1),
    from_domain: j.job.from_email.slice(j.job.from_email.lastIndexOf('@') + 1).toLowerCase(),
  };
}

/** Builds each group's job, leases its rows in one claim, and queues what the claim got. */
async function claim(s: EngineState, groups: Group[], now: number): Promise<void> {
  const { repo, keys, tracking } = s.deps;
  const returnPathKey = await s.deps.returnPathKey();
  const host = s.opts.worker.hostname;
  const build = (email: ClaimedEmail, g: Group) => buildJob(email, g, keys, host, returnPathKey, tracking);
  const emails = await Promise.all(groups.map((g) => repo.findEmail(g.seq)));
  const jobs = await Promise.all(groups.map((g, i) => build(emails[i]!, g)));
  const stamp = new Map<number, Stamp>(jobs.map((j) => [j.seq, stampOf(j)]));
  const got = await repo.claim(
    groups.flatMap((g) => g.rows),
    now,
    s.opts.leaseMs,
    stamp,
  );
  // One claim, one token: every row it got carries the same.
  const lease = got[0]?.lease ?? '';
  const claimed = new Set(got.map((r) => r.id));
  const sendable = await withoutSuppressed(s, jobs, claimed, lease, (i, rows) =>
    build(emails[i]!, { ...groups[i]!, rows }),
  );
  const late = queueClaimed(s, sendable, claimed, lease);
  if (late.length) await repo.release(late, lease);
}

/**
 * A scheduled email goes to no address that joined its project's suppression list after it
 * was accepted (decisions.md, "Scheduled sending"): the list applies at acceptance, as for
 * every send, and again as it goes out, since up to 30 days may lie between (an unsubscribe
 * must hold). Those recipients are recorded under the claim's lease as CANCELED with a
 * `canceled` event naming the entry (outcome.ts, 'suppressed'), and the job is built again
 * for the rest. Sends that are not scheduled went out as they were accepted: no read here.
 */
async function withoutSuppressed(
  s: EngineState,
  jobs: BuiltJob[],
  claimed: Set<number>,
  lease: string,
  rebuild: (index: number, rows: DueRow[]) => Promise<BuiltJob>,
): Promise<BuiltJob[]> {
  const { repo, clock } = s.deps;
  const out: BuiltJob[] = [];
  for (const [i, j] of jobs.entries()) {
    const rows = j.group.rows.filter((r) => claimed.has(r.id));
    const listed = j.scheduled && rows.length ? await repo.suppressedAmong(j.projectId, rows.map(lower)) : undefined;
    if (!listed?.size) {
      out.push(j);
      continue;
    }
    const now = clock.now();
    const outcomes = rows.flatMap((r): RecipientOutcome[] => {
      const entry = listed.get(lower(r));
      if (!entry) return [];
      const why = `${entry.reason} since ${entry.created_at}`;
      return [
        {
          recipient_id: r.id,
          address: r.address,
          attempts: r.attempts + 1,
          decision: { kind: 'suppressed', suppression_reason: entry.reason, since: entry.created_at, reply: null },
          detail: `not sent: the address is on the suppression list (${why})`,
          delay_notified: r.delay_notified,
          waited_ms: now - j.createdAt,
        },
      ];
    });
    await repo.record(j.seq, j.projectId, j.job.email_id, null, outcomes, now, lease, null);
    const rest = j.group.rows.filter((r) => !listed.has(lower(r)));
    if (rest.some((r) => claimed.has(r.id))) out.push(await rebuild(i, rest));
  }
  return out;
}

const lower = (r: DueRow) => r.address.toLowerCase();

/** Queues each job's claimed rows for a slot; returns those of destinations paused meanwhile. */
function queueClaimed(s: EngineState, jobs: BuiltJob[], claimed: Set<number>, lease: string): number[] {
  const late: number[] = [];
  const at = s.deps.clock.now();
  for (const j of jobs) {
    const rows = j.group.rows.filter((r) => claimed.has(r.id));
    if (!rows.length) continue;
    // The destination was paused (a 421) while this claim was being committed: it goes
    // straight back, as `unclaim` just gave back the rest of that destination's waiting work.
    if (s.throttle.paused(j.group.domain, at)) {
      late.push(...rows.map((r) => r.id));
      continue;
    }
    const c: Claimed = { j, rows, lease };
    hold(s, c);
    const list = s.ready.get(j.group.domain);
    if (list) list.push(c);
    else s.ready.set(j.group.domain, [c]);
  }
  return late;
}

/**
 * Extends the leases of every claim this engine still holds (waiting for a slot, or being
 * sent), every third of the lease: a lease then runs out only for a node that stopped
 * renewing it (killed, or cut off from the database), never under a slow destination or a
 * long queue. Another node would take such rows and send them again, and this node's
 * outcome would be recorded over nothing.
 */
export async function renew(s: EngineState): Promise<void> {
  if (s.inflight.size === 0) return;
  const until = s.deps.clock.now() + s.opts.leaseMs;
  for (const [lease, ids] of byLease([...s.inflight])) {
    await s.deps.repo
      .renew(ids, lease, until)
      .catch((err: unknown) => s.deps.logger.error({ err }, 'renewing the leases of claimed deliveries failed'));
  }
}

/**
 * The limits held across nodes (issue 17): each destination's concurrency is shared out
 * among the live nodes, and a slow-down that any node recorded applies to all.
 */
export async function share(s: EngineState): Promise<void> {
  try {
    s.throttle.shareAmong(await s.deps.liveNodes!());
    for (const t of await s.deps.repo.throttledNow()) s.throttle.adopt(t);
  } catch (err) {
    s.deps.logger.error({ err }, 'reading the other nodes and their slow-downs failed');
  }
}

/**
 * Gives the destination's waiting transactions back to the queue (it was just
 * paused: they would outwait their lease). Their `sending` events stay, as for
 * work returned at shutdown; the next attempt writes its own.
 */
export function unclaim(s: EngineState, domain: string): Promise<void> {
  const list = s.ready.get(domain);
  if (!list) return Promise.resolve();
  s.ready.delete(domain);
  for (const c of list) drop(s, c);
  return release(s, list).catch((e: unknown) =>
    s.deps.logger.error({ err: e, domain }, 'returning claimed deliveries to the queue failed'),
  );
}

/** Gives claimed transactions' rows back to the queue, each under its claim's token. */
export async function release(s: EngineState, list: Claimed[]): Promise<void> {
  for (const [lease, ids] of byLease(list)) await s.deps.repo.release(ids, lease);
}
