import { withApp, type GlobalOptions } from './context.ts';
import { print, record, table } from './io.ts';
import type { QueueRecipient } from '../delivery/index.ts';

type Opts = Record<string, unknown> & GlobalOptions;
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
const QUERY = ['status', 'from_email', 'to_email', 'tag', 'from', 'to', 'limit', 'before', 'after'] as const;
const camel = (k: string) => k.replace(/_(.)/g, (_m, c: string) => c.toUpperCase());

export async function list(_args: string[], opts: Opts): Promise<void> {
  const query: Record<string, string> = {};
  for (const k of QUERY) {
    const v = str(opts[camel(k)]);
    if (v !== undefined) query[k] = v;
  }
  const rows = await withApp(opts, async (app) =>
    app.emails.list((await app.accounts.getProject(str(opts.project)!)).id, query),
  );
  print(opts, rows, () => table(rows, ['id', 'status', 'from_email', 'to_emails', 'subject', 'created_at']));
}

/** One line per recipient: where it stands and why it waits. */
function queueLine(q: QueueRecipient): string {
  const parts = [`${q.address}: ${q.status}`, `attempts ${q.attempts}`];
  if (q.next_attempt_at && (q.status === 'QUEUED' || q.status === 'SENDING'))
    parts.push(`next attempt ${q.next_attempt_at}`);
  if (q.last_error) parts.push(`last: ${q.last_error}`);
  if (q.throttle_concurrency !== null) {
    const until = q.throttle_paused_until ? `, paused until ${q.throttle_paused_until}` : '';
    parts.push(`${q.domain} throttled (concurrency ${q.throttle_concurrency}${until}: ${q.throttle_reason ?? ''})`);
  }
  return '  ' + parts.join('; ');
}

export async function show([id]: string[], opts: Opts): Promise<void> {
  const { email, queue } = await withApp(opts, async (app) => ({
    email: await app.emails.getAny(id!),
    queue: await app.explainQueue(id!),
  }));
  const delivery = queue.map((q) => ({
    recipient: q.address,
    status: q.status,
    attempts: q.attempts,
    next_attempt_at: q.status === 'QUEUED' || q.status === 'SENDING' ? q.next_attempt_at : null,
    last_attempt_at: q.last_attempt_at,
    last_error: q.last_error,
    destination: {
      domain: q.domain,
      throttled: q.throttle_concurrency !== null,
      concurrency: q.throttle_concurrency,
      paused_until: q.throttle_paused_until,
      reason: q.throttle_reason,
    },
  }));
  print(opts, { ...email, delivery }, () => `${record(email)}\ndelivery:\n${queue.map(queueLine).join('\n')}`);
}

export async function events([id]: string[], opts: Opts): Promise<void> {
  const evs = await withApp(opts, (app) => app.emails.eventsAny(id!));
  print(opts, evs, () => table(evs, ['timestamp', 'type', 'data']));
}
