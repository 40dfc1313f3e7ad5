// Type-aware lint: the rules style.md asks for, plus the import boundaries
// (lib/ knows no domain; domains never import a door).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const doors = ['**/http/**', '**/smtp/**', '**/cli/**', '**/tui/**'];

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
  {
    files: ['src/lib/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['../*', '!../lib/*'], message: 'lib/ imports nothing of the domain' }] },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/http/**', 'src/smtp/**', 'src/cli/**', 'src/tui/**', 'src/app.ts', 'src/main.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: doors.map((d) => d.replace('**/', '../').replace('/**', '/*')),
              message: 'a domain never imports a door',
            },
          ],
        },
      ],
    },
  },
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
