// npm run deps:layers — the import graph of src/ by layer (ARCHITECTURE.md, "Dependency
// rules"): how many import statements run from each layer to each other one, and any that run
// up (eslint refuses those; this prints the picture the architecture document shows).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../src', import.meta.url));
const DOORS = new Set(['http', 'smtp', 'cli', 'tui']);
const CORE = new Set(['errors.ts', 'validation.ts', 'version.ts']);
const COMPOSITION = new Set(['app.ts', 'app-parts.ts', 'app-store.ts', 'app-options.ts']);
const ORDER = ['lib+core', 'store', 'domains', 'composition', 'doors', 'main'] as const;
type Layer = (typeof ORDER)[number];

function layerOf(path: string): Layer | null {
  const r = relative(SRC, path);
  if (r.startsWith('..')) return null;
  const top = r.split('/')[0]!;
  if (top === 'lib' || CORE.has(top)) return 'lib+core';
  if (top === 'store') return 'store';
  if (DOORS.has(top)) return 'doors';
  if (COMPOSITION.has(top)) return 'composition';
  if (top === 'main.ts') return 'main';
  return 'domains';
}

const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
  .map((f) => join(SRC, f));
const edges = new Map<string, number>();
const up: string[] = [];
for (const file of files) {
  const from = layerOf(file)!;
  for (const m of readFileSync(file, 'utf8').matchAll(
    /(?:import|export)\s[^'"]*?from\s+'(\.[^']+)'|import\('(\.[^']+)'\)/g,
  )) {
    const target = resolve(dirname(file), m[1] ?? m[2]!);
    const to = layerOf(target);
    if (!to || to === from) continue;
    const key = `${from} -> ${to}`;
    edges.set(key, (edges.get(key) ?? 0) + 1);
    if (ORDER.indexOf(to) > ORDER.indexOf(from)) up.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
  }
}
for (const [key, n] of [...edges].sort()) console.log(`${String(n).padStart(5)}  ${key}`);
console.log(`imports that run up: ${up.length}`);
for (const u of up) console.log(`  ${u}`);
process.exitCode = up.length === 0 ? 0 : 1;
