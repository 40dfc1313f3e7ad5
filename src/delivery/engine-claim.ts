import type { DueRow, RecipientOutcome, Stamp } from './repo.ts';
import type { ClaimedEmail } from './store.ts';
import type { Suppression } from '../suppressions/index.ts';
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

/**
 * Builds each group's job, leases its rows in one claim, and queues what the claim got. A
 * scheduled email goes to no address that joined its project's suppression list after it was
 * accepted (decisions.md, "Scheduled sending"): the list applies at acceptance, as for every
 * send, and again as it goes out, since up to 30 days may lie between (an unsubscribe must
 * hold). Its job is built for the other recipients (none left: no job), and the listed ones are
 * recorded under the claim's lease as CANCELED with a `canceled` event naming the entry
 * (outcome.ts, 'suppressed').
 */
async function claim(s: EngineState, groups: Group[], now: number): Promise<void> {
  const { repo } = s.deps;
  const { keys, tracking } = readOncePerPass(s);
  const returnPathKey = await s.deps.returnPathKey();
  const host = s.opts.worker.hostname;
  const emails = await repo.findEmails(groups.map((g) => g.seq));
  const listed = await Promise.all(groups.map((g, i) => listedOf(s, emails[i]!, g)));
  const jobs = await Promise.all(
    groups.flatMap((g, i) => {
      const rows = g.rows.filter((r) => !listed[i]!.has(lower(r)));
      return rows.length ? [buildJob(emails[i]!, { ...g, rows }, keys, host, returnPathKey, tracking)] : [];
    }),
  );
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
  for (const [i, g] of groups.entries()) {
    if (listed[i]!.size)
      await recordSuppressed(
        s,
        emails[i]!,
        g.rows.filter((r) => claimed.has(r.id)),
        listed[i]!,
        lease,
      );
  }
  const late = queueClaimed(s, jobs, claimed, lease);
  if (late.length) await repo.release(late, lease);
}

/**
 * The signing keys and the projects' settings, each read once for the emails of one claim:
 * they are as they were when the claim read them, as if read at its start. A claim of 20
 * emails from one domain and project makes 2 reads instead of 40 (issue 36: statements per
 * email on PostgreSQL).
 */
function readOncePerPass(s: EngineState): Pick<EngineState['deps'], 'keys' | 'tracking'> {
  const { keys, tracking } = s.deps;
  const memo = <T>(read: (k: string) => Promise<T>) => {
    const seen = new Map<string, Promise<T>>();
    return (k: string) => {
      let p = seen.get(k);
      if (!p) seen.set(k, (p = read(k)));
      return p;
    };
  };
  const getSigningKey = memo((domain) => keys.getSigningKey(domain));
  return {
    keys: { getSigningKey },
    ...(tracking ? { tracking: { ...tracking, settings: memo((id) => tracking.settings(id)) } } : {}),
  };
}

/** A scheduled email's recipients now on its project's suppression list, by address; other sends read nothing. */
async function listedOf(s: EngineState, email: ClaimedEmail, g: Group): Promise<Map<string, Suppression>> {
  if (email.row.scheduled_at == null) return new Map();
  const found = await s.deps.suppressions.findMany(email.row.project_id as string, g.rows.map(lower));
  return new Map(found.map((x) => [x.email, x]));
}

/** Records the claimed `rows` that `listed` names as not sent (outcome.ts, 'suppressed'). */
async function recordSuppressed(
  s: EngineState,
  email: ClaimedEmail,
  rows: DueRow[],
  listed: Map<string, Suppression>,
  lease: string,
): Promise<void> {
  const now = s.deps.clock.now();
  const e = email.row;
  // Waited since it was due: its schedule.
  const due = Date.parse((e.scheduled_at as string | null) ?? e.created_at);
  const outcomes = rows.flatMap((r): RecipientOutcome[] => {
    const entry = listed.get(lower(r));
    if (!entry) return [];
    return [
      {
        recipient_id: r.id,
        address: r.address,
        attempts: r.attempts + 1,
        decision: { kind: 'suppressed', suppression_reason: entry.reason, since: entry.created_at, reply: null },
        detail: `not sent: the address is on the suppression list (${entry.reason} since ${entry.created_at})`,
        delay_notified: r.delay_notified,
        waited_ms: now - due,
      },
    ];
  });
  if (outcomes.length)
    await s.deps.repo.record(email.seq, e.project_id as string, e.id, null, outcomes, now, lease, null);
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
