import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { finished } from 'node:stream/promises';
import { readSuppressionCsv, writeSuppressionCsv } from '../suppressions/index.ts';
import { SingleBar, Presets } from 'cli-progress';
import { withApp, type GlobalOptions } from './context.ts';
import { count, EXIT_FAILED, print, record, table } from './io.ts';
import type { App } from '../app.ts';
import { allProjects, everyProject, withProjectOf } from './scope.ts';

type Opts = Record<string, unknown> & GlobalOptions;
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

function withProject<T>(opts: Opts, fn: (app: App, projectId: string) => Promise<T>) {
  return withApp(opts, async (app) => fn(app, (await app.accounts.getProject(str(opts.project)!)).id));
}

export async function add([email]: string[], opts: Opts): Promise<void> {
  const s = await withProject(opts, (app, pid) =>
    app.suppressions.add(pid, { email: email!, reason: str(opts.reason) }),
  );
  print(opts, s, () => record({ ...s }));
}

/** One project's list in address order, or with --all-projects every project's, project by project. */
export async function list(_args: string[], opts: Opts): Promise<void> {
  const given = Number(opts.limit ?? 100);
  const limit = Number.isFinite(given) ? given : 100;
  const columns = ['email', 'reason', 'created_at'];
  if (!allProjects(opts)) {
    const rows = await withProject(opts, (app, pid) => app.suppressions.list(pid, limit));
    return print(opts, rows, () => table(rows as never, columns));
  }
  const rows = await withApp(opts, async (app) => {
    const out: object[] = [];
    for (const p of await everyProject(app)) {
      if (out.length >= limit) break;
      out.push(...withProjectOf(p, await app.suppressions.list(p.id, limit - out.length)));
    }
    return out;
  });
  print(opts, rows, () => table(rows as never, ['project', ...columns]));
}

export async function remove([email]: string[], opts: Opts): Promise<void> {
  const r = await withProject(opts, (app, pid) => app.suppressions.remove(pid, email!));
  print(opts, r, () => `removed ${r.email}`);
}

/** Imports a CSV file with a progress bar (on a TTY) and a summary; exits 1 when any line was refused. */
export async function importCsv([file]: string[], opts: Opts): Promise<void> {
  const total = statSync(file!).size;
  const bar =
    !opts.json && process.stderr.isTTY
      ? new SingleBar({ format: 'import [{bar}] {percentage}% | {value}/{total} bytes' }, Presets.shades_classic)
      : undefined;
  bar?.start(total, 0);
  let read = 0;
  try {
    const result = await withProject(opts, (app, pid) =>
      app.suppressions.importRows(
        pid,
        readSuppressionCsv(createReadStream(file!).on('data', (c) => bar?.update((read += c.length)))),
        () => {},
      ),
    );
    bar?.update(total);
    bar?.stop();
    // Every good line is imported; a refused one still fails the command, so a script notices.
    print(
      opts,
      result,
      () => `imported ${count(result.imported, 'address', 'addresses')}, refused ${result.invalid.length}`,
    );
    if (!opts.json)
      for (const i of result.invalid) process.stderr.write(`refused line ${i.line}: ${i.email}: ${i.message}\n`);
    if (result.invalid.length > 0) process.exitCode = EXIT_FAILED;
  } finally {
    bar?.stop();
  }
}

/** Exports the list as CSV to --output or stdout. */
export async function exportCsv(_args: string[], opts: Opts): Promise<void> {
  const out = str(opts.output) ? createWriteStream(str(opts.output)!) : process.stdout;
  await withProject(opts, async (app, pid) => {
    const csv = writeSuppressionCsv(app.suppressions.iterate(pid));
    csv.pipe(out);
    await finished(csv);
    if (out !== process.stdout) {
      out.end();
      await finished(out);
    }
  });
}
