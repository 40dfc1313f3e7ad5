// Type-aware lint: the rules style.md asks for, plus the import boundaries
// (the layers of ARCHITECTURE.md's "Dependency rules").
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const doors = ['**/http/**', '**/smtp/**', '**/cli/**', '**/tui/**'];

/** One no-restricted-imports block: `patterns` for `files` (minus `ignores`). */
function restrictImports(files, patterns, ignores = []) {
  return { files, ignores, rules: { 'no-restricted-imports': ['error', { patterns }] } };
}

export default tseslint.config(
  { ignores: ['dist/**', '.bench-tmp/**', 'svc-data/**', 'node_modules/**', 'coverage/**', 'eslint.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // The layers, lowest first (ARCHITECTURE.md, "Dependency rules"): lib/ and the core files,
  // store/, the domains, the composition root (app.ts and the other src/app-*.ts), the
  // doors, main.ts. An import runs down, never up; one domain reaches another only through
  // its index.ts; a door calls services, never a repository. Each file gets exactly one of
  // the blocks below (flat config replaces a rule, it does not merge it).
  // (A gitignore pattern cannot re-include a file whose folder it excluded, hence '../*/*'
  // with exceptions rather than '../*'.)
  restrictImports(
    ['src/lib/**/*.ts'],
    [{ group: ['../*/*', '../*.ts', '!../errors.ts'], message: 'lib/ imports nothing of the domain' }],
  ),
  restrictImports(
    ['src/store/**/*.ts'],
    [
      {
        group: ['../*/*', '!../lib/*', '../*.ts', '!../errors.ts'],
        message: 'store/ knows nothing of the domains: the composition root (src/app-store.ts) wires the repositories',
      },
    ],
  ),
  restrictImports(
    ['src/**/*.ts'],
    [
      {
        group: doors.map((d) => d.replace('**/', '../').replace('/**', '/*')),
        message: 'a domain never imports a door',
      },
      { group: ['../app*.ts', '../main.ts'], message: 'a domain never imports the composition root' },
      {
        group: ['../*/*', '!../*/index.ts', '!../lib/*', '!../store/*'],
        message: "a domain imports another domain only through that domain's index.ts",
      },
    ],
    // Tests may look inside (a domain's test reads test/ fixtures and other domains' parts).
    ['src/lib/**', 'src/store/**', ...doors.map((d) => d.replace('**/', 'src/')), 'src/*.ts', 'src/**/*.test.ts'],
  ),
  restrictImports(
    ['src/app*.ts'],
    [
      {
        group: doors.map((d) => d.replace('**/', './').replace('/**', '/*')),
        message: 'the composition root never imports a door',
      },
    ],
  ),
  restrictImports(
    doors.map((d) => d.replace('**/', 'src/')),
    [
      {
        group: ['../*/repo.ts', '../*/repo-pg.ts', '../*/*-repo.ts', '../*/*-repo-pg.ts'],
        message: 'a door calls services, never a repository',
      },
    ],
  ),
  {
    files: ['scripts/**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    rules: { ...tseslint.configs.disableTypeChecked.rules, 'no-undef': 'off' },
  },
  {
    files: ['test/**/*.ts', 'src/**/*.test.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
);
