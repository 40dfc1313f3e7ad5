// The esbuild step of `npm run build`, shared with the benchmarks (BENCH_DIST=1),
// so what they measure is bundled exactly as what ships.
import { build, type Plugin } from 'esbuild';
import { cpSync, existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeDashboard } from './dashboard.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

// Files started as threads. Each must be its own entry emitted flat beside main.js:
// src loads them with `new URL('./<name>.js', import.meta.url)`, and their chunks
// must sit in the same folder. Missing ones are skipped (src may not have them yet).
// Inside the executable, pkg's Worker patch only recognises a string path, not a URL.
export const WORKER_ENTRIES = [
  'src/store/checkpoint-worker.ts',
  'src/templates/render-worker.ts',
  'src/delivery/worker.ts',
  'src/webhooks/dispatch-worker.ts',
  'src/inbound/dmarc-worker.ts',
];

// ink imports react-devtools-core only when DEV=true; it is not installed, so resolve it to nothing.
const emptyDevtools: Plugin = {
  name: 'empty-react-devtools-core',
  setup(b) {
    b.onResolve({ filter: /^react-devtools-core$/ }, () => ({ path: 'react-devtools-core', namespace: 'empty' }));
    b.onLoad({ filter: /.*/, namespace: 'empty' }, () => ({ contents: 'export default {}', loader: 'js' }));
  },
};

/**
 * Bundles `bin/svc.ts` (as main.js), the worker entries and `extra` (paths from the
 * repository root) into a flat `outDir` (absolute, or from the root), replacing
 * it, with the SQL migrations in `outDir/migrations/`. Returns main.js's path.
 */
export async function bundleInto(outDir: string, extra: string[] = []): Promise<string> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    version: string;
    dependencies: Record<string, string>;
  };
  const out = resolve(ROOT, outDir);
  rmSync(out, { recursive: true, force: true });
  const workers = WORKER_ENTRIES.filter(
    (f) => existsSync(join(ROOT, f)) || console.warn(`build: no ${f} yet, skipped`),
  );
  await build({
    absWorkingDir: ROOT,
    // bin/svc.ts, the executable's entry, comes out as main.js.
    entryPoints: [{ in: 'bin/svc.ts', out: 'main' }, ...extra, ...workers],
    outdir: out,
    entryNames: '[name]',
    chunkNames: '[name]-[hash]',
    bundle: true,
    // ESM because ink 8 and yoga-layout use top-level await; splitting so the
    // lazily imported subcommands stay out of the `svc --version` path.
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    // Kept as real files inside the executable: a native addon, and piscina,
    // which starts its workers from its own files.
    external: Object.keys(pkg.dependencies),
    // Bundled CommonJS dependencies call require('events') etc., which ESM lacks.
    banner: {
      js: "import { createRequire as __svcCreateRequire } from 'node:module';\nconst require = __svcCreateRequire(import.meta.url);",
    },
    // Whitespace and syntax minified, names kept (stack traces still name every function):
    // each isolate keeps the source of what it loaded, and the executable maps the whole
    // bundle. 14 MB of JavaScript became 9.7 MB, and bench:deliver's peak RSS on the
    // executable went from 288–300 MB to 281–284 MB (docs/performance.md, issue 36).
    minifyWhitespace: true,
    minifySyntax: true,
    plugins: [emptyDevtools],
    logLevel: 'warning',
  });
  // db.ts reads them at run time from ./migrations/ beside the bundle; pkg embeds them
  // as assets ("pkg.assets"). Its virtual fs answers string paths only, not URL objects.
  // pg.ts reads PostgreSQL's from ./migrations-pg/ the same way.
  for (const dir of ['migrations', 'migrations-pg']) {
    cpSync(join(ROOT, 'src/store', dir), join(out, dir), {
      recursive: true,
      filter: (f) => f.endsWith('.sql') || statSync(f).isDirectory(),
    });
  }
  // The dashboard's client, read by src/http/dashboard-assets.ts from ./dashboard/ (a pkg asset).
  await writeDashboard(join(out, 'dashboard'));
  return join(out, 'main.js');
}
