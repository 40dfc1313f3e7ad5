// The dashboard's client (dashboard/src) bundled by esbuild: written beside the executable's
// bundle by `npm run build` (bundle.ts), or built in memory by a server run from source
// (src/http/dashboard-assets.ts). One set of options, so both serve the same bytes.
import { build, type BuildOptions } from 'esbuild';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const OPTIONS: BuildOptions = {
  absWorkingDir: ROOT,
  entryPoints: [
    { in: 'dashboard/src/main.tsx', out: 'app' },
    { in: 'dashboard/src/app.css', out: 'app' },
  ],
  bundle: true,
  minify: true,
  format: 'esm',
  // Browsers of the last two years; no polyfills.
  target: ['es2022', 'chrome110', 'firefox110', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  tsconfig: 'dashboard/tsconfig.json',
  logLevel: 'warning',
};

/** Writes app.js and app.css into `outdir`. */
export async function writeDashboard(outdir: string): Promise<void> {
  await build({ ...OPTIONS, outdir });
}

/** The assets by file name, built in memory. */
export async function buildDashboard(): Promise<Map<string, Uint8Array>> {
  const r = await build({ ...OPTIONS, outdir: 'dashboard-out', write: false });
  return new Map(r.outputFiles.map((f) => [f.path.slice(f.path.lastIndexOf('/') + 1), f.contents]));
}
