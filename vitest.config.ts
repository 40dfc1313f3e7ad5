import { defineConfig } from 'vitest/config';

/**
 * The suites that also run on PostgreSQL (issue 17): the same files, with SVC_TEST_STORE=postgres
 * making test/harness.ts open a fresh PostgreSQL database instead of a data dir. A suite joins
 * this list once it reads the store only through the app or the harness's store-neutral helpers
 * (`env.query`, `count`, `verifyDomain`), never through the SQLite connection (`app.db`).
 */
export const BOTH_STORES = [
  'test/http-batch.test.ts',
  'test/http-content.test.ts',
  'test/http-idempotency.test.ts',
  'test/http-management.test.ts',
  'test/http-read.test.ts',
  'test/http-send.test.ts',
  'test/http-live.test.ts',
  'test/http-envelope.test.ts',
  'test/http-templates.test.ts',
  'test/http-sessions.test.ts',
  'test/domains.test.ts',
  'test/delivery.test.ts',
  'test/tracking.test.ts',
  'test/http-audit.test.ts',
  'test/http-dashboard-emails.test.ts',
  'test/http-domains-suppressions.test.ts',
  'test/http-members.test.ts',
  'test/http-organizations.test.ts',
  'test/http-templates-management.test.ts',
  'test/http-resend.test.ts',
  'test/cli.test.ts',
  'test/cli-projects.test.ts',
  'test/cli-send.test.ts',
  'test/cli-domains.test.ts',
  'test/cli-webhooks.test.ts',
  'test/delivery-modes.test.ts',
  'test/inbound.test.ts',
  'test/http-auth.test.ts',
  'test/http-stats.test.ts',
  'test/trial.test.ts',
  'test/webhooks.test.ts',
  'test/smtp-relay.test.ts',
  'test/metrics.test.ts',
  'test/top.test.ts',
  'test/retention.test.ts',
  'test/domains-live.test.ts',
  'test/serve-start.test.ts',
  'test/http-unknown-fields.test.ts',
  'test/http-retry-after.test.ts',
  'test/webhook-status.test.ts',
  'test/delivery-wake.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: Number(process.env.SVC_TEST_WORKERS ?? 3),
    env: {
      // The `svc` children the CLI suites start compile the sources once, not once per command.
      NODE_COMPILE_CACHE: new URL('node_modules/.cache/svc-compile', import.meta.url).pathname,
    },
    // One PostgreSQL server for the run; each test file that needs it takes a database of its own.
    globalSetup: ['test/postgres/global-setup.ts'],
    projects: [
      { extends: true, test: { name: 'sqlite', include: ['src/**/*.test.ts', 'test/**/*.test.ts'] } },
      { extends: true, test: { name: 'postgres', include: BOTH_STORES, env: { SVC_TEST_STORE: 'postgres' } } },
    ],
  },
});
