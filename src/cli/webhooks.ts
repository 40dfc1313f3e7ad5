import type { App } from '../app.ts';
import type { Webhook } from '../webhooks/index.ts';
import { withApp, type GlobalOptions } from './context.ts';
import { EXIT_FAILED, print, record, table, UsageError } from './io.ts';
import { allProjects, listAcrossProjects } from './scope.ts';

type Opts = Record<string, unknown> & GlobalOptions;
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

/**
 * Opens the store like withApp, then resolves --project. The URL guard and the resolver of
 * `test` are the server's, as it recorded them (`svc serve --allow-insecure-webhooks`,
 * `--dns-servers`); `test --dns-servers` asks another resolver.
 */
async function withProject<T>(opts: Opts, fn: (app: App, projectId: string) => Promise<T>): Promise<T> {
  const flags = { dnsServers: str(opts.dnsServers) };
  return withApp(opts, async (app) => fn(app, (await app.accounts.getProject(str(opts.project)!)).id), { flags });
}

/** `a, b,c` as ['a', 'b', 'c']; undefined when the flag was not given. */
const eventList = (v: unknown) =>
  str(v)
    ?.split(',')
    .map((e) => e.trim())
    .filter(Boolean);

const showHook = (w: Webhook) => record({ ...w });

/** Prints a webhook with its secret, and on a terminal says that it is not shown again. */
function printWithSecret(opts: Opts, w: Webhook): void {
  print(opts, w, () => showHook(w));
  if (!opts.json && process.stdout.isTTY) {
    process.stderr.write(`The secret is shown once: keep it. svc webhooks rotate-secret ${w.id} makes a new one.\n`);
  }
}

export async function create(_args: string[], opts: Opts): Promise<void> {
  const input = { url: str(opts.url), events: eventList(opts.events) };
  const w = await withProject(opts, (app, pid) => app.webhooks.create(pid, input));
  printWithSecret(opts, w);
}

export async function list(_args: string[], opts: Opts): Promise<void> {
  const columns = ['id', 'url', 'events', 'is_active', 'auto_disabled', 'updated_at'];
  if (allProjects(opts)) {
    const all = await withApp(opts, (app) => listAcrossProjects(app, (pid) => app.webhooks.list(pid)));
    return print(opts, all, () => table(all, ['project', ...columns]));
  }
  const ws = await withProject(opts, (app, pid) => app.webhooks.list(pid));
  print(opts, ws, () => table(ws, columns));
}

export async function show([id]: string[], opts: Opts): Promise<void> {
  const w = await withProject(opts, (app, pid) => app.webhooks.get(pid, id!));
  print(opts, w, () => showHook(w));
}

/** Only the flags given change; `--active true` also reactivates an auto-disabled webhook. */
export async function update([id]: string[], opts: Opts): Promise<void> {
  const fields = {
    url: str(opts.url),
    events: eventList(opts.events),
    is_active: opts.active === undefined ? undefined : opts.active === 'true',
  };
  const patch = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
  if (Object.keys(patch).length === 0) throw new UsageError('give --url, --events or --active');
  const w = await withProject(opts, (app, pid) => app.webhooks.update(pid, id!, patch));
  print(opts, w, () => showHook(w));
}

/** Prints the webhook with its new secret (cli.md: a Webhook with `secret` on rotate). */
export async function rotateSecret([id]: string[], opts: Opts): Promise<void> {
  const w = await withProject(opts, async (app, pid) => {
    const { secret } = await app.webhooks.rotateSecret(pid, id!);
    return { ...(await app.webhooks.get(pid, id!)), secret };
  });
  printWithSecret(opts, w);
}

/** Exits 1 unless the receiver answered 2xx, so a script can check its endpoint. */
export async function test([id]: string[], opts: Opts): Promise<void> {
  const { url, result } = await withProject(opts, async (app, pid) => ({
    url: (await app.webhooks.get(pid, id!)).url,
    result: await app.webhooks.test(pid, id!),
  }));
  print(opts, result, () => record({ ...result }));
  if (result.success) return;
  if (!opts.json) process.stderr.write(`test.ping to ${url} failed: ${result.error ?? `HTTP ${result.http_status}`}\n`);
  process.exitCode = EXIT_FAILED;
}

export async function deliveries([id]: string[], opts: Opts): Promise<void> {
  // The flags as the HTTP API's query: the service parses and checks them (limit 1 to 100, ISO times).
  const query: Record<string, string> = {};
  for (const k of ['status', 'from', 'to', 'limit', 'offset']) {
    const v = str(opts[k]);
    if (v !== undefined) query[k] = v;
  }
  const ds = await withProject(opts, (app, pid) => app.webhooks.deliveries(pid, id!, query));
  // The id first: it is what `redeliver` takes.
  const columns = ['id', 'created_at', 'attempt', 'status', 'http_status', 'event_type', 'error'];
  print(opts, ds, () => table(ds, columns));
}

export async function redeliver([id, deliveryId]: string[], opts: Opts): Promise<void> {
  const r = await withProject(opts, (app, pid) => app.webhooks.redeliver(pid, id!, deliveryId!));
  print(opts, r, () => `${record({ ...r })}\nqueued: the running server (svc serve) sends it`);
}

export async function remove([id]: string[], opts: Opts): Promise<void> {
  const w = await withProject(opts, async (app, pid) => {
    const found = await app.webhooks.get(pid, id!);
    await app.webhooks.remove(pid, id!);
    return found;
  });
  print(opts, w, () => `deleted webhook ${w.url} (${w.id})`);
}
