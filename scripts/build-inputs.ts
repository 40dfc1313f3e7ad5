// What dist/svc is built from, as one hash: the sources, the build scripts, the lockfile and
// the Node that runs the build (pkg packs the pinned Node 24). scripts/build.mjs writes it
// beside the executable once the build succeeded; test/e2e/exe.test.ts reuses an executable
// whose hash matches the tree's (CI has just built it) and builds one otherwise, so it never
// drives a stale one.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const DIRS = ['src', 'bin', 'scripts'];
const FILES = ['package.json', 'package-lock.json'];

/** Hex SHA-256 of every input file's path and bytes, in a fixed order, under `root`. */
export function buildInputsHash(root: string): string {
  const hash = createHash('sha256').update(process.version);
  const files = [...FILES, ...DIRS.flatMap((d) => walk(root, d))].sort();
  for (const f of files) hash.update(`\0${f}\0`).update(readFileSync(join(root, f)));
  return hash.digest('hex');
}

function walk(root: string, dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(root, join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : [],
  );
}

/** Where build.mjs records the hash of what dist/svc was built from. */
export const BUILD_INPUTS_FILE = 'dist/svc.inputs';
