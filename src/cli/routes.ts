import { writeFileSync } from 'node:fs';
import type { App } from '../app.ts';
import { withApp, type GlobalOptions } from './context.ts';
import { print, record, table, UsageError } from './io.ts';

type Opts = Record<string, unknown> & GlobalOptions;
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

async function withProject<T>(opts: Opts, fn: (app: App, projectId: string) => Promise<T>): Promise<T> {
  return withApp(opts, async (app) => fn(app, (await app.accounts.getProject(str(opts.project)!)).id));
}

/** The action the flags name: --webhook ID, --forward a,b or --hold, exactly one. */
function actionOf(opts: Opts) {
  const given = [opts.webhook !== undefined, opts.forward !== undefined, opts.hold === true].filter(Boolean).length;
  if (given !== 1) throw new UsageError('name one action: --webhook <id>, --forward <addresses> or --hold');
  if (opts.webhook !== undefined) return { action: 'webhook', webhook_id: str(opts.webhook) };
  if (opts.forward !== undefined) {
    const to = str(opts.forward)!
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean);
    return { action: 'forward', forward_to: to };
  }
  return { action: 'hold' };
}

const ROUTE_COLUMNS = ['id', 'pattern', 'action', 'webhook_id', 'forward_to', 'updated_at'];

export async function add(_args: string[], opts: Opts): Promise<void> {
  const body = { pattern: str(opts.pattern), ...actionOf(opts) };
  const r = await withProject(opts, (app, pid) => app.receiving.createRoute(pid, body));
  print(opts, r, () => record({ ...r }));
}

export async function list(_args: string[], opts: Opts): Promise<void> {
  const rs = await withProject(opts, (app, pid) => app.receiving.listRoutes(pid));
  print(opts, rs, () => table(rs as never, ROUTE_COLUMNS));
}

export async function update([id]: string[], opts: Opts): Promise<void> {
  const r = await withProject(opts, (app, pid) => app.receiving.updateRoute(pid, id!, actionOf(opts)));
  print(opts, r, () => record({ ...r }));
}

export async function remove([id]: string[], opts: Opts): Promise<void> {
  await withProject(opts, (app, pid) => app.receiving.deleteRoute(pid, id!));
  print(opts, { id, deleted: true }, () => `route ${id} deleted`);
}

const RECEIVED_COLUMNS = ['id', 'received_at', 'from', 'envelope', 'subject', 'action', 'outcome', 'webhook'];

/** Received messages, newest first: `--route`, `--outcome`, `--q` (from, subject, recipient), `--limit`. */
export async function receivedList(_args: string[], opts: Opts): Promise<void> {
  const query = Object.fromEntries(
    Object.entries({
      route_id: str(opts.route),
      outcome: str(opts.outcome),
      q: str(opts.q),
      before: str(opts.before),
      limit: str(opts.limit),
    }).filter(([, v]) => v !== undefined),
  );
  const rows = await withProject(opts, (app, pid) => app.receiving.listReceived(pid, query));
  const shown = rows.map((r) => ({
    ...r,
    envelope: r.envelope.rcpt_to.join(', '),
    webhook: r.webhook ? `${r.webhook.status} (${r.webhook.attempts})` : null,
  }));
  print(opts, rows, () => table(shown, RECEIVED_COLUMNS));
}

export async function receivedShow([id]: string[], opts: Opts): Promise<void> {
  const m = await withProject(opts, (app, pid) => app.receiving.getReceived(pid, id!));
  print(opts, m, () => {
    const { text, html, headers, attachments, auth, ...rest } = m as unknown as Record<string, unknown> & {
      attachments: unknown[];
    };
    void html;
    void headers;
    return [
      record({ ...rest, auth: JSON.stringify(auth), attachments: attachments.length }),
      '',
      typeof text === 'string' ? text : '(no text part)',
    ].join('\n');
  });
}

/** Writes the message as it arrived to `--out` (or standard output). */
export async function receivedRaw([id]: string[], opts: Opts): Promise<void> {
  const f = await withProject(opts, (app, pid) => app.receiving.download(pid, { id: id!, index: null }));
  const out = str(opts.out);
  if (out) writeFileSync(out, f.content);
  else process.stdout.write(f.content);
}

export async function receivedDelete([id]: string[], opts: Opts): Promise<void> {
  await withProject(opts, (app, pid) => app.receiving.deleteReceived(pid, id!));
  print(opts, { id, deleted: true }, () => `received email ${id} deleted`);
}
