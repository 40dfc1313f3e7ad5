import { withApp, type GlobalOptions } from './context.ts';
import { print, record, table } from './io.ts';

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

export async function show([id]: string[], opts: Opts): Promise<void> {
  const email = await withApp(opts, (app) => app.emails.getAny(id!));
  print(opts, email, () => record(email));
}

export async function events([id]: string[], opts: Opts): Promise<void> {
  const evs = await withApp(opts, (app) => app.emails.eventsAny(id!));
  print(opts, evs, () => table(evs, ['timestamp', 'type', 'data']));
}
