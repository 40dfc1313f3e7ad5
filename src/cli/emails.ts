import { withApp, type GlobalOptions } from './context.ts';
import { print, record, table, UsageError } from './io.ts';
import { allProjects, listAcrossProjects } from './scope.ts';
import { LIMITS } from '../limits/index.ts';
import { waitingLine } from '../delivery/index.ts';

type Opts = Record<string, unknown> & GlobalOptions;
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
const QUERY = [
  'status',
  'from_email',
  'to_email',
  'tag',
  'metadata',
  'from',
  'to',
  'limit',
  'before',
  'after',
] as const;
const camel = (k: string) => k.replace(/_(.)/g, (_m, c: string) => c.toUpperCase());

const COLUMNS = ['id', 'status', 'from_email', 'to_emails', 'subject', 'created_at'];

/**
 * One project's emails, or with --all-projects the newest of every project's (each
 * row naming its project); the before/after cursors belong to one project.
 */
export async function list(_args: string[], opts: Opts): Promise<void> {
  const query: Record<string, string> = {};
  for (const k of QUERY) {
    const v = str(opts[camel(k)]);
    if (v !== undefined) query[k] = v;
  }
  const all = allProjects(opts);
  if (all && (query.before ?? query.after) !== undefined)
    throw new UsageError('--before and --after page through one project: give --project');
  const rows = await withApp(opts, async (app) => {
    if (!all) return app.emails.list((await app.accounts.getProject(str(opts.project)!)).id, query);
    const rows = await listAcrossProjects(app, (pid) => app.emails.list(pid, query));
    return newestFirst(rows, Number(query.limit ?? LIMITS.listDefault));
  });
  print(opts, rows, () => table(rows, all ? ['project', ...COLUMNS] : COLUMNS));
}

/** The `limit` newest rows of several projects' pages, as one project's list orders them. */
const newestFirst = (rows: Record<string, unknown>[], limit: number) =>
  rows
    .sort(
      (a, b) => String(b.created_at).localeCompare(String(a.created_at)) || String(b.id).localeCompare(String(a.id)),
    )
    .slice(0, limit);

/** Events that settle a recipient, and where each came from: the SMTP reply, a DSN or an ARF report. */
const OUTCOMES = new Set(['delivered', 'bounced', 'complained', 'failed']);

interface Outcome {
  type: string;
  source: string;
  at: string;
}

/** Per recipient (lower-case), its latest outcome event. */
function outcomesOf(events: Record<string, unknown>[]): Map<string, Outcome> {
  const out = new Map<string, Outcome>();
  for (const e of events) {
    const data = (e.data ?? {}) as { recipient?: string; source?: string };
    if (!OUTCOMES.has(String(e.type)) || !data.recipient) continue;
    const source = data.source ?? (e.type === 'failed' ? 'svc' : 'smtp');
    out.set(data.recipient.toLowerCase(), { type: String(e.type), source, at: String(e.timestamp) });
  }
  return out;
}

export async function show([id]: string[], opts: Opts): Promise<void> {
  const { email, queue, events } = await withApp(opts, async (app) => ({
    email: await app.emails.getAny(id!),
    queue: await app.explainQueue(id!),
    events: await app.emails.eventsAny(id!),
  }));
  const outcomes = outcomesOf(events);
  const delivery = queue.map((q) => ({
    recipient: q.address,
    status: q.status,
    outcome: outcomes.get(q.address.toLowerCase()) ?? null,
    attempts: q.attempts,
    next_attempt_at: q.status === 'QUEUED' || q.status === 'SENDING' ? q.next_attempt_at : null,
    last_attempt_at: q.last_attempt_at,
    last_error: q.last_error,
    bounce_rule: q.bounce_rule,
    destination: {
      domain: q.domain,
      throttled: q.throttle_concurrency !== null,
      concurrency: q.throttle_concurrency,
      paused_until: q.throttle_paused_until,
      reason: q.throttle_reason,
      mta_sts: q.sts_mode ? { mode: q.sts_mode, policy_id: q.sts_policy_id, expires_at: q.sts_expires_at } : null,
    },
  }));
  const lines = queue.map((q) => {
    const o = outcomes.get(q.address.toLowerCase());
    // Which classifier rule decided its bounce or its retry, so an operator can report a wrong one.
    const rule = q.bounce_rule ? `\n    rule: ${q.bounce_rule}` : '';
    return '  ' + waitingLine(q) + (o ? `; ${o.type} (from ${o.source}) at ${o.at}` : '') + rule;
  });
  print(opts, { ...email, delivery }, () => `${record(email)}\ndelivery:\n${lines.join('\n')}`);
}

export async function events([id]: string[], opts: Opts): Promise<void> {
  const evs = await withApp(opts, (app) => app.emails.eventsAny(id!));
  print(opts, evs, () => table(evs, ['timestamp', 'type', 'data']));
}

/** Cancels a scheduled email of any project before it starts (POST /v1/emails/{id}/cancel's rule). */
export async function cancel([id]: string[], opts: Opts): Promise<void> {
  const out = await withApp(opts, async (app) =>
    app.emails.cancel(String((await app.emails.getAny(id!)).project_id), id!),
  );
  print(opts, out, () => `${out.id} ${out.status}`);
}

/** Moves a scheduled email of any project to `--at` before it starts (PATCH /v1/emails/{id}'s rule). */
export async function reschedule([id]: string[], opts: Opts): Promise<void> {
  const at = str(opts.at);
  const out = await withApp(opts, async (app) =>
    app.emails.reschedule(String((await app.emails.getAny(id!)).project_id), id!, { scheduled_at: at }),
  );
  print(opts, out, () => `${out.id} ${out.status}, scheduled at ${out.scheduled_at ?? '(now)'}`);
}
