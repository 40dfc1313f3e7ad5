import { readFile } from 'node:fs/promises';
import { withApp, type GlobalOptions } from './context.ts';
import { print, record, table } from './io.ts';
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
  };
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
    }),
  );
  print(opts, t, () => show({ ...t }));
}

export async function list(_args: string[], opts: Opts): Promise<void> {
  const ts = await withProject(opts, (app, pid) => app.templates.list(pid));
  print(opts, ts, () => table(ts as never, ['id', 'slug', 'name', 'version', 'updated_at']));
}

export async function show_([ref]: string[], opts: Opts): Promise<void> {
  const t = await withProject(opts, (app, pid) => app.templates.getTemplate(pid, ref!));
  print(opts, t, () => show({ ...t }));
}
export { show_ as show };

export async function update([ref]: string[], opts: Opts): Promise<void> {
  const fields = await fieldsFromFlags(opts);
  const patch = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
  const t = await withProject(opts, (app, pid) => app.templates.update(pid, ref!, patch));
  print(opts, t, () => show({ ...t }));
}

export async function remove([ref]: string[], opts: Opts): Promise<void> {
  const t = await withProject(opts, (app, pid) => app.templates.remove(pid, ref!));
  print(opts, t, () => `deleted template ${t.slug} (${t.id})`);
}
