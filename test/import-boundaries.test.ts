// The layers of ARCHITECTURE.md ("Dependency rules"), as eslint enforces them: each import
// below is written into a real file of its layer and must be refused, and the allowed ones
// must pass. A weakened eslint.config.js fails here, not only in review.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: new URL('..', import.meta.url).pathname });

async function restricted(file: string, importLine: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${importLine}\nexport const probe = 1;\n`, { filePath: file });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('import boundaries', () => {
  it.each([
    ['src/store/db.ts', "export { createEmailsRepo } from '../emails/repo.ts';", 'store/ knows nothing of the domains'],
    ['src/store/db.ts', "export type { App } from '../app.ts';", 'store/ knows nothing of the domains'],
    ['src/lib/clock.ts', "export { LIMITS } from '../limits/index.ts';", 'lib/ imports nothing of the domain'],
    ['src/emails/service.ts', "export { PLANS } from '../limits/plans.ts';", "only through that domain's index.ts"],
    ['src/emails/service.ts', "export type { App } from '../app.ts';", 'never imports the composition root'],
    ['src/emails/service.ts', "export { print } from '../cli/io.ts';", 'a domain never imports a door'],
    ['src/http/server.ts', "export { createEmailsRepo } from '../emails/repo.ts';", 'never a repository'],
    ['src/cli/top.ts', "export { createPgTopReader } from '../top/repo-pg.ts';", 'never a repository'],
    [
      'src/app.ts',
      "export { registerOpsRoutes } from './http/routes-ops.ts';",
      'the composition root never imports a door',
    ],
  ])('%s may not: %s', async (file, line, message) => {
    const messages = await restricted(file, line);
    expect(messages.join('\n')).toContain(message);
  });

  it.each([
    ['src/store/db.ts', "export { iso } from '../lib/clock.ts';"],
    ['src/store/db.ts', "export { AppError } from '../errors.ts';"],
    ['src/emails/service.ts', "export { PLANS } from '../limits/index.ts';"],
    ['src/emails/service.ts', "export type { Db } from '../store/db.ts';"],
    ['src/http/server.ts', "export { createEmailsService } from '../emails/index.ts';"],
    ['src/app-store.ts', "export { createEmailsRepo } from './emails/repo.ts';"],
  ])('%s may: %s', async (file, line) => {
    expect(await restricted(file, line)).toEqual([]);
  });
});
