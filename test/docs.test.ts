import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliReference, readmeWithSettings, ROOT } from '../scripts/docs.ts';

/** The repository's own Markdown: what a user or contributor reads in a clone. */
function markdownFiles(): string[] {
  const top = ['README.md', 'ARCHITECTURE.md'].map((f) => join(ROOT, f));
  const inDir = (d: string) =>
    existsSync(join(ROOT, d))
      ? readdirSync(join(ROOT, d), { recursive: true, encoding: 'utf8' })
          .filter((f) => f.endsWith('.md'))
          .map((f) => join(ROOT, d, f))
      : [];
  return [...top, ...inDir('docs'), ...inDir('bench')];
}

const rel = (f: string) => relative(ROOT, f);

describe('the documents', () => {
  it('docs/cli.md is the command tree as it is (npm run docs)', () => {
    expect(readFileSync(join(ROOT, 'docs/cli.md'), 'utf8')).toBe(cliReference());
  });

  it("the README's settings section is the settings table as it is (npm run docs)", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toBe(readmeWithSettings(readme));
  });

  it.each(markdownFiles().map((f) => [rel(f), f]))('%s links only to files in the repository', (_name, file) => {
    const text = readFileSync(file, 'utf8');
    // A clone has no sibling folders: the design notes beside the checkout are not there.
    expect(text).not.toMatch(/\.\.\/shared\/|\/work\//);
    const broken: string[] = [];
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?:|mailto:|#)/.test(target!)) continue;
      const path = resolve(dirname(file), target!.replace(/#.*$/, ''));
      if (!path.startsWith(ROOT) || !existsSync(path)) broken.push(target!);
    }
    // Markdown files named in code spans (`docs/x.md`) are links too, read from the root.
    for (const [, named] of text.matchAll(/`([\w./-]+\.md)`/g)) {
      if (!existsSync(join(ROOT, named!)) && !existsSync(resolve(dirname(file), named!))) broken.push(named!);
    }
    expect(broken).toEqual([]);
  });
});
