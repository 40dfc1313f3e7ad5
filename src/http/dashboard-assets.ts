// The dashboard's assets (decisions.md, "The web dashboard"): app.js and app.css, served from
// memory. The executable carries them beside its bundle (dist/dashboard/, a pkg asset); run
// from source (`npm start`, the tests) the server builds them once with esbuild, a dev
// dependency that is not in the executable.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Beside the bundle: dist/dashboard/ (pkg's virtual fs answers string paths only). */
const BUILT = fileURLToPath(new URL('./dashboard/', import.meta.url));
export const DASHBOARD_FILES = ['app.js', 'app.css'] as const;
export type DashboardFile = (typeof DASHBOARD_FILES)[number];

type Builder = { buildDashboard: () => Promise<Map<string, Uint8Array>> };

/** The assets, read from the bundle's folder or built from dashboard/src. */
export async function loadDashboardAssets(): Promise<Map<DashboardFile, Buffer>> {
  if (existsSync(join(BUILT, 'app.js'))) {
    return new Map(DASHBOARD_FILES.map((f) => [f, readFileSync(join(BUILT, f))]));
  }
  // A specifier in a variable, so the executable's bundle does not take esbuild in.
  const builder = '../../scripts/dashboard.ts';
  const { buildDashboard } = (await import(builder)) as Builder;
  const built = await buildDashboard();
  return new Map(DASHBOARD_FILES.map((f) => [f, Buffer.from(built.get(f) ?? missing(f))]));
}

function missing(f: string): never {
  throw new Error(`the dashboard build made no ${f}`);
}
