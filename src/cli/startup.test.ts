import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../store/db.ts';

const SVC = fileURLToPath(new URL('../../bin/svc.ts', import.meta.url));
// A module hook that names every module the child loads on its stderr, one line each.
const HOOK =
  'data:text/javascript,import{registerHooks}from"node:module";import{writeSync}from"node:fs";' +
  'registerHooks({load(u,c,n){writeSync(2,"loaded "+u+"\\n");return n(u,c)}})';
// What a server uses and an admin command on SQLite does not (decisions.md, "CLI admin commands load lazily").
const SERVER_ONLY = [
  'fast-xml-parser',
  'fastify',
  'fflate',
  'htmlparser2',
  'mailparser',
  'nunjucks',
  'pg',
  'pino',
  'piscina',
  'pino-pretty',
  'prom-client',
  'smtp-server',
  'undici',
];

let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-startup-'));
  // A migrated, empty data dir: the command runs through the whole app and answers not_found.
  await openDatabase(dataDir, { create: true }).close();
});

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** The packages `svc <args>` loads on this data dir, and its exit code and stderr. */
async function packagesLoadedBy(args: string[]) {
  const run = promisify(execFile)(process.execPath, ['--import', HOOK, SVC, ...args], {
    env: { ...withoutDatabaseUrl(process.env), SVC_DATA_DIR: dataDir },
  });
  const { code, stderr } = await run.then(
    (r) => ({ code: 0, stderr: r.stderr }),
    (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
  );
  const packages = new Set([...stderr.matchAll(/^loaded .*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//gm)].map((m) => m[1]));
  return { code, packages, errors: stderr.replace(/^loaded .*\n/gm, '') };
}

/** The environment without SVC_DATABASE_URL: the command runs on the SQLite data dir. */
function withoutDatabaseUrl(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { SVC_DATABASE_URL: _, ...rest } = env;
  return rest;
}

describe('an admin command loads only what it uses', () => {
  it('svc keys list on SQLite loads none of the server’s libraries', async () => {
    const { code, packages, errors } = await packagesLoadedBy(['keys', 'list', '--project', 'Web']);
    // It did run: the store opened, and the project was looked for.
    expect(errors).toMatch(/not_found/);
    expect(code).toBe(1);
    expect(packages).toContain('better-sqlite3');
    expect(SERVER_ONLY.filter((p) => packages.has(p))).toEqual([]);
  });

  // It opens no store either (test/cli-bounces.test.ts); io.ts's error types load better-sqlite3's JS for every command.
  it('svc bounces classify loads none of the server’s libraries', async () => {
    const { code, packages, errors } = await packagesLoadedBy(['bounces', 'classify', '550 5.1.1 User unknown']);
    expect(errors).toBe('');
    expect(code).toBe(0);
    expect(SERVER_ONLY.filter((p) => packages.has(p))).toEqual([]);
  });
});
