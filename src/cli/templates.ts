import { readFile } from 'node:fs/promises';
import { withApp, type GlobalOptions } from './context.ts';
import { print, record, table, UsageError } from './io.ts';
import { varsFileOf } from './commands/kit.ts';

type Opts = Record<string, unknown> & GlobalOptions;
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

const fileText = async (f: unknown) => (typeof f === 'string' ? readFile(f, 'utf8') : undefined);

async function fieldsFromFlags(opts: Opts) {
  const vars = await fileText(varsFileOf(opts));
  return {
    name: str(opts.name),
    subject_template: str(opts.subject),
    html_template: await fileText(opts.htmlFile),
    text_template: await fileText(opts.textFile),
    variables: vars === undefined ? undefined : (JSON.parse(vars) as Record<string, unknown>),
    // --layout names a layout by id or slug; --no-layout removes it (commander sets layout false).
    layout_id: opts.layout === false ? null : str(opts.layout),
  };
}

/** A version argument: a whole number from 1 (usage error, exit 2, otherwise); undefined when not given. */
function versionOf(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^[1-9][0-9]{0,8}$/.test(v))
    throw new UsageError(`a version is a whole number from 1, got ${JSON.stringify(v)}`);
  return Number(v);
}

function withProject<T>(
  opts: Opts,
  fn: (app: Parameters<Parameters<typeof withApp>[1]>[0], projectId: string) => Promise<T>,
) {
  return withApp(opts, async (app) => fn(app, (await app.accounts.getProject(str(opts.project)!)).id));
}

const show = (t: Record<string, unknown>) => record(t);

export async function create(_args: string[], opts: Opts): Promise<void> {
  const fields = await fieldsFromFlags(opts);
  const t = await withProject(opts, (app, pid) =>
    app.templates.create(pid, {
      ...fields,
      name: fields.name!,
      subject_template: fields.subject_template!,
      slug: str(opts.slug)!,
      ...(opts.isLayout === true ? { is_layout: true } : {}),
    }),
  );
  print(opts, t, () => show({ ...t }));
}

export async function list(_args: string[], opts: Opts): Promise<void> {
  const ts = await withProject(opts, (app, pid) => app.templates.list(pid));
  print(opts, ts, () => table(ts as never, ['id', 'slug', 'name', 'version', 'updated_at']));
}

export async function show_([ref, v]: string[], opts: Opts): Promise<void> {
  const version = versionOf(v);
  const t = await withProject(opts, async (app, pid): Promise<object> =>
    version === undefined ? app.templates.getTemplate(pid, ref!) : app.templates.getVersion(pid, ref!, version),
  );
  print(opts, t, () => show({ ...t }));
}
export { show_ as show };

export async function update([ref]: string[], opts: Opts): Promise<void> {
  const fields = await fieldsFromFlags(opts);
  const given = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
  const patch = opts.draft === true ? { ...given, draft: true } : given;
  const t = await withProject(opts, (app, pid) => app.templates.update(pid, ref!, patch));
  print(opts, t, () => show({ ...t }));
}

export async function remove([ref]: string[], opts: Opts): Promise<void> {
  const t = await withProject(opts, (app, pid) => app.templates.remove(pid, ref!));
  print(opts, t, () => `deleted template ${t.slug} (${t.id})`);
}

export async function versions([ref]: string[], opts: Opts): Promise<void> {
  const vs = await withProject(opts, (app, pid) => app.templates.listVersions(pid, ref!));
  print(opts, vs, () => table(vs, ['version', 'published', 'layout_id', 'created_at']));
}

export async function publish([ref, v]: string[], opts: Opts): Promise<void> {
  const t = await withProject(opts, (app, pid) => app.templates.publish(pid, ref!, { version: versionOf(v) }));
  print(opts, t, () => `published version ${t.published_version} of template ${t.slug} (latest ${t.version})`);
}
