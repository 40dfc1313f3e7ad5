import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One PostgreSQL server for the run; each test file that needs it takes a database of its own.
    globalSetup: ['test/postgres/global-setup.ts'],
  },
});
