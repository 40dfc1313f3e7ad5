import { defineConfig } from 'vitest/config';

/**
 * The suites that also run on PostgreSQL (issue 17): the same files, with SVC_TEST_STORE=postgres
 * making test/harness.ts open a fresh PostgreSQL database instead of a data dir. A suite joins
 * this list once it reads the store only through the app or the harness's store-neutral helpers
 * (`env.query`, `count`, `verifyDomain`), never through the SQLite connection (`app.db`).
 */
export const BOTH_STORES = [
  'test/receiving.test.ts',
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
  'test/domain-auth.test.ts',
  'test/tracking.test.ts',
  'test/http-audit.test.ts',
  'test/http-dashboard-emails.test.ts',
  'test/http-domains-suppressions.test.ts',
  'test/http-members.test.ts',
  'test/http-organizations.test.ts',
  'test/http-templates-management.test.ts',
  'test/template-versions.test.ts',
  'test/http-resend.test.ts',
  'test/cli.test.ts',
  'test/cli-projects.test.ts',
  'test/cli-send.test.ts',
  'test/cli-domains.test.ts',
  'test/cli-webhooks.test.ts',
  'test/delivery-modes.test.ts',
  'test/inbound.test.ts',
  'test/inbound-reports.test.ts',
  'test/bounce-attribution.test.ts',
  'test/dmarc-reports.test.ts',
  'test/dmarc-reports-bad.test.ts',
  'test/http-auth.test.ts',
  'test/http-stats.test.ts',
  'test/trial.test.ts',
  'test/webhooks.test.ts',
  'test/smtp-relay.test.ts',
  'test/smtp-relay-messages.test.ts',
  'test/metrics.test.ts',
  'test/top.test.ts',
  'test/retention.test.ts',
  'test/domains-live.test.ts',
  'test/serve-start.test.ts',
  'test/http-unknown-fields.test.ts',
  'test/http-retry-after.test.ts',
  'test/webhook-status.test.ts',
  'test/delivery-wake.test.ts',
  'test/doctor.test.ts',
  'test/dkim-rotation.test.ts',
  'test/dkim-ed25519.test.ts',
  'test/unsubscribe.test.ts',
  'test/unsubscribe-mailto.test.ts',
  'test/mta-sts-delivery.test.ts',
  'test/tls-reports.test.ts',
  'test/http-raw.test.ts',
  'test/relay-passthrough.test.ts',
  'test/scheduling.test.ts',
  'test/metadata.test.ts',
  'test/delivery-delayed.test.ts',
  'test/resource-events.test.ts',
];

/**
 * The suites that need PostgreSQL beyond the matrix: its own (migrate, db copy, two nodes, the
 * group commit) and the store contract, which holds both stores to the same answers.
 */
const POSTGRES_SUITES = ['test/postgres-*.test.ts', 'test/store-contract.test.ts', 'test/contract/*.test.ts'];

/**
 * Files that replace a module of src/ with vi.mock: they need a module registry of their own,
 * where the other files of a project share their worker's (isolate: false, below).
 */
const MOCKS_MODULES = ['test/memory-budget.test.ts'];

/**
 * The projects, each runnable alone (README, Develop): `unit` (the colocated src/ tests),
 * `sqlite` and `sqlite-isolated` (test/ on the embedded default), and PostgreSQL's: `postgres`
 * (the matrix above on PostgreSQL) and `postgres-suites`. One PostgreSQL server serves the run,
 * started only when a PostgreSQL project is in it (test/global-setup.ts).
 *
 * `isolate: false` lets a worker keep the modules it imported for the next file: importing
 * src/ again for each of ~150 files took a tenth of the run (issue 27). It holds because no
 * file or helper keeps state at module level that another file could see: every file makes
 * its own app, store, temp dir and servers, and registers its hooks in itself.
 */
export default defineConfig({
  test: {
    // Guards against a hang, not a measure of speed: a CLI test runs a dozen `svc` children, and
    // a machine under load may take seconds for each (speed is measured in bench/, never here).
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // expect.poll waits up to 10 s (vitest's default is 1 s): a browser under a loaded CI's two
    // cores may take longer than a second to show an answer. A poll still ends at its first pass.
    expect: { poll: { timeout: 10_000 } },
    pool: 'forks',
    // vitest's default is one worker per core but one here (2 cores): most files wait on sockets
    // and child processes, so three keep both cores busy (docs/performance.md, issue 27).
    maxWorkers: Number(process.env.SVC_TEST_WORKERS ?? 3),
    env: {
      // The `svc` children the CLI suites start compile the sources once, not once per command.
      NODE_COMPILE_CACHE: new URL('node_modules/.cache/svc-compile', import.meta.url).pathname,
    },
    globalSetup: ['test/global-setup.ts'],
    reporters: ['default', './test/slowest-files.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts'] } },
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: ['test/**/*.test.ts'],
          exclude: [...POSTGRES_SUITES, ...MOCKS_MODULES],
          isolate: false,
        },
      },
      { extends: true, test: { name: 'sqlite-isolated', include: MOCKS_MODULES } },
      {
        extends: true,
        test: { name: 'postgres', include: BOTH_STORES, env: { SVC_TEST_STORE: 'postgres' }, isolate: false },
      },
      { extends: true, test: { name: 'postgres-suites', include: POSTGRES_SUITES } },
    ],
  },
});
