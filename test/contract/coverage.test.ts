// Every repository has one documented interface in its domain (src/<domain>/store.ts), and
// every method of it is called by that domain's contract test (test/contract/<domain>.test.ts)
// on both stores: a method added without a contract test fails here (issue 30, item 4).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;
const SRC = join(ROOT, 'src');

/**
 * Repositories that only run inside another store's transactions, so their two dialects take
 * different transaction handles and share no interface: their contract is the caller's
 * (idempotency: the emails store's replay and refusal, test/contract/emails.test.ts).
 */
const INSIDE_ANOTHER = new Map([['idempotency', 'emails']]);

/**
 * Every repository of src: a domain's `repo.ts` (its interface in `store.ts`, its contract test
 * test/contract/<domain>.test.ts, with its parts <domain>-<part>.test.ts when split) or a domain's second one, `<name>-repo.ts` (`<name>-store.ts`,
 * test/contract/<name>.test.ts), as inbound's DMARC reports.
 */
const repositories = readdirSync(SRC, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) =>
    readdirSync(join(SRC, d.name))
      .map((f) => (f === 'repo.ts' ? d.name : /^(.+)-repo\.ts$/.exec(f)?.[1]))
      .filter((name): name is string => name !== undefined)
      .map((name) => ({
        name,
        domain: d.name,
        store: join(SRC, d.name, name === d.name ? 'store.ts' : `${name}-store.ts`),
      })),
  );
const domainsWithRepo = repositories.map((r) => r.name);
const storeOf = new Map(repositories.map((r) => [r.name, r.store]));

/** The methods of each exported `…Store` interface of a store.ts. */
function storeMethods(file: string): Map<string, string[]> {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out = new Map<string, string[]>();
  for (const node of source.statements) {
    if (!ts.isInterfaceDeclaration(node) || !node.name.text.endsWith('Store')) continue;
    const exported = node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (!exported) continue;
    const methods = node.members
      .filter((m) => ts.isMethodSignature(m) || (ts.isPropertySignature(m) && m.type && ts.isFunctionTypeNode(m.type)))
      .map((m) => (m.name as ts.Identifier).text);
    out.set(node.name.text, methods);
  }
  return out;
}

describe('the store interfaces and their contract tests', () => {
  it('has a store.ts for every repository', () => {
    expect(domainsWithRepo.filter((d) => !INSIDE_ANOTHER.has(d) && !existsSync(storeOf.get(d)!))).toEqual([]);
    for (const [inner, outer] of INSIDE_ANOTHER)
      expect(existsSync(join(SRC, outer, 'store.ts')), `${inner} inside ${outer}`).toBe(true);
  });

  it.each(domainsWithRepo.filter((d) => existsSync(storeOf.get(d)!)))(
    '%s: a contract test calls each method of its store.ts',
    (domain) => {
      const file = storeOf.get(domain)!;
      const interfaces = storeMethods(file);
      expect(interfaces.size, `an exported …Store interface in ${file}`).toBeGreaterThan(0);
      const dir = join(ROOT, 'test', 'contract');
      expect(existsSync(join(dir, `${domain}.test.ts`)), `test/contract/${domain}.test.ts`).toBe(true);
      // The domain's contract test, and its parts when it is split (`<domain>-<part>.test.ts`).
      const test = readdirSync(dir)
        .filter((f) => f === `${domain}.test.ts` || (f.startsWith(`${domain}-`) && f.endsWith('.test.ts')))
        .map((f) => readFileSync(join(dir, f), 'utf8'))
        .join('\n');
      const uncalled = [...interfaces].flatMap(([name, methods]) =>
        methods.filter((m) => !test.includes(`.${m}(`)).map((m) => `${name}.${m}`),
      );
      expect(uncalled, `methods test/contract/${domain}(-*).test.ts never calls`).toEqual([]);
    },
  );
});
