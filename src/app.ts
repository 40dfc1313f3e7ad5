import { createTopService } from './top/service.ts';
import { createNodesRepo } from './nodes/repo.ts';
import { statSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { Config } from './config/schema.ts';
import { iso, systemClock, type Clock } from './lib/clock.ts';
import { silentLogger, type Logger } from './lib/logger.ts';
import { openDatabase, StoreOpenError, type Db } from './store/db.ts';
import { DATABASE_FILE, findExposedPaths } from './store/data-dir.ts';
import { createOpsMetrics } from './http/metrics.ts';
import { createCommitter, type Committer } from './store/committer.ts';
import { createSecrets } from './store/secrets.ts';
import { createInboundService } from './inbound/index.ts';
import { createAccountsRepo, createAccountsService, createMembersService } from './accounts/index.ts';
import { createKeysRepo, createKeysService } from './keys/index.ts';
import { createAuditRepo, createAuditWriter } from './audit/index.ts';
import { createLoginThrottle, createSessionsRepo, createSessionsService } from './sessions/index.ts';
import { createSuppressionsRepo, createSuppressionsService } from './suppressions/index.ts';
import { createTemplatesRepo, createTemplatesService, createRenderer, type Renderer } from './templates/index.ts';
import { createDnsResolver, createDomainsRepo, createDomainsService, hostnameProblem } from './domains/index.ts';
import { createEmailsExport, createEmailsRepo, createEmailsService, createRetention } from './emails/index.ts';
import { createIdempotencySql } from './idempotency/index.ts';
import { createRateLimiter, createUsageReport, createUsageSql, LIMITS } from './limits/index.ts';
import { createDeliveryEngine, createDeliveryRepo, RETURN_PATH_SECRET, type DeliveryEngine } from './delivery/index.ts';
import { createTrackingRepo, createTrackingService } from './tracking/index.ts';
import { createStatsRepo, createStatsService } from './stats/index.ts';
import { createServerSettings, resolveHostname } from './config/server-settings.ts';
import {
  createWebhookAgent,
  createWebhookDispatcher,
  createWebhooksRepo,
  createWebhooksService,
  resolverFromDns,
  type WebhookDispatcher,
} from './webhooks/index.ts';
import { createDispatchWorker } from './webhooks/worker-host.ts';

export interface AppOverrides {
  clock?: Clock;
  logger?: Logger;
  /** The server runs WAL checkpoints in a worker; short CLI runs do not need to. */
  checkpointWorker?: boolean;
  /** Create a missing data dir and database (`svc init`, `svc serve`); other commands refuse one. */
  createDataDir?: boolean;
  /** Extra certificates webhook targets may present (PEM): the tests' own CA. */
  webhookCa?: string[];
  /** Run the webhook dispatcher in its own thread (`svc serve`); tests run it in-process on their clock. */
  webhookThread?: boolean;
}

/**
 * The one composition root: opens the store and wires every domain service.
 * Doors (HTTP, CLI, SMTP) receive an App and call its services.
 */
export function createApp(config: Config, overrides: AppOverrides = {}) {
  const clock = overrides.clock ?? systemClock;
  const logger = overrides.logger ?? silentLogger;
  if (config.database) {
    // The PostgreSQL store has its schema (svc migrate) but not yet its repositories.
    throw new StoreOpenError(
      'svc runs on PostgreSQL only for svc migrate so far: leave out --database (SVC_DATABASE_URL) to use the data dir',
    );
  }
  const store = openDatabase(config.dataDir, {
    checkpointWorker: overrides.checkpointWorker ?? false,
    create: overrides.createDataDir ?? false,
  });
  const db: Db = store.db;
  const metrics = createOpsMetrics();
  const tx: Committer = createCommitter(db, { windowMs: 2, maxBatch: 500, onCommit: (s) => metrics.committed(s) });
  const serverSettings = createServerSettings(db, tx);
  // `svc serve` passes its own (configured or OS) host name; an admin command given none
  // uses the one the server last ran with, so both name and check the same host.
  const stored = serverSettings.stored();
  const hostname = resolveHostname(config.hostname, stored.hostname);
  // Likewise the resolver: `svc domains verify` in another shell asks the one the server asks.
  const dnsServers = config.dnsServers ?? stored.dnsServers;
  let renderer: Renderer | undefined;
  // The render pool starts on first use, so admin commands never spawn threads.
  const lazyRenderer = {
    render: (...args: Parameters<Renderer['render']>) => (renderer ??= makeRenderer(config)).render(...args),
  };

  // Every management write commits with its audit row (issue 11).
  const auditWriter = createAuditWriter(db);
  const accountsRepo = createAccountsRepo(db, tx, auditWriter);
  const accounts = createAccountsService({
    repo: accountsRepo,
    clock,
    defaultPlan: config.defaultPlan,
  });
  const keys = createKeysService({ repo: createKeysRepo(db, tx, auditWriter), clock });
  const suppressionsRepo = createSuppressionsRepo(db, tx, auditWriter);
  const suppressions = createSuppressionsService({ repo: suppressionsRepo, clock });
  const templates = createTemplatesService({ repo: createTemplatesRepo(db, tx, auditWriter), clock });
  const idempotency = createIdempotencySql(db);
  const domainsRepo = createDomainsRepo(db, tx, auditWriter);
  const dnsResolver = createDnsResolver(dnsServers);
  const domains = createDomainsService({
    repo: domainsRepo,
    accounts,
    clock,
    logger,
    dns: dnsResolver,
    hostname,
    gracePeriodMs: config.domainGracePeriod,
  });
  const emailsRepo = createEmailsRepo(db, tx, {
    suppressions: suppressionsRepo,
    usage: createUsageSql(db),
    idempotency,
    audit: auditWriter,
  });
  const emails = createEmailsService({
    repo: emailsRepo,
    clock,
    templates,
    renderer: lazyRenderer,
    domains: domainsRepo,
    idempotency,
    accounts: accountsRepo,
    sandboxDomain: config.sandboxDomain,
    onAccepted: (env, source) => metrics.accepted(env, source),
  });
  const secrets = createSecrets(db, tx, () => iso(clock.now()));
  const tracking = createTrackingService({
    key: () => secrets.get('tracking'),
    repo: createTrackingRepo(db, tx),
    clock,
    publicUrl: publicUrlOf(config),
    settings: (projectId) => accounts.getProjectSettings(projectId),
  });
  const rateLimiter = createRateLimiter(clock);
  const deliveryRepo = createDeliveryRepo(db, tx, {
    suppress: (projectId, email, _emailId, at, reason) => suppressionsRepo.addSync(projectId, email, reason, at),
  });
  const inbound = createInboundService({
    delivery: deliveryRepo,
    findEmail: (id) => emailsRepo.findById(id),
    returnPathKey: () => secrets.get(RETURN_PATH_SECRET),
    clock,
    logger,
    observe: (outcome, category, type, source) => metrics.outcome(outcome, category, type, source),
  });
  metrics.watchStore({
    queue: () => {
      const q = deliveryRepo.queueStats();
      return { recipients: q.recipients, oldestSeconds: q.oldest ? (clock.now() - Date.parse(q.oldest)) / 1000 : 0 };
    },
    throttled: () => deliveryRepo.throttledNow(),
    storeBytes: () => {
      const size = (f: string) => {
        try {
          return statSync(f).size;
        } catch {
          return 0;
        }
      };
      const file = join(config.dataDir, DATABASE_FILE);
      return { database: size(file), wal: size(`${file}-wal`) };
    },
  });
  let engine: DeliveryEngine | undefined;
  // The delivery engine is made on first use: `svc serve` starts it; admin commands never do.
  const delivery = () =>
    (engine ??= createDeliveryEngine(
      {
        repo: deliveryRepo,
        clock,
        logger,
        keys: domains,
        tracking,
        returnPathKey: () => secrets.get(RETURN_PATH_SECRET),
        observe: (decisions) => {
          for (const d of decisions) {
            if (d.kind === 'retry') metrics.outcome('deferred', d.category, null, 'smtp');
            else if (d.kind === 'bounced') metrics.outcome('bounced', d.category, d.bounce_type, 'smtp');
            else metrics.outcome(d.kind, null, null, 'smtp');
          }
        },
      },
      deliveryOptions(config, hostname),
    ));
  const sessions = createSessionsService({
    repo: createSessionsRepo(db, tx),
    clock,
    throttle: createLoginThrottle(clock),
    users: accountsRepo,
  });
  // Every webhook POST goes through one guarded keep-alive agent, resolving with the server's resolver.
  const webhookAgent = createWebhookAgent({
    resolve: resolverFromDns(dnsResolver),
    allowInsecure: config.allowInsecureWebhooks,
    ...(overrides.webhookCa ? { ca: overrides.webhookCa } : {}),
  });
  const webhooksRepo = createWebhooksRepo(db, tx, auditWriter);
  const retention = createRetention({
    repo: emailsRepo,
    webhooks: webhooksRepo,
    clock,
    logger,
    bodyRetentionMs: config.bodyRetention,
    emailRetentionMs: config.emailRetention,
  });
  const webhooks = createWebhooksService({
    repo: webhooksRepo,
    clock,
    planOf: async (projectId) =>
      (await accounts.getOrg((await accounts.getProjectById(projectId)).organization_id)).plan,
    agent: webhookAgent,
    allowInsecure: config.allowInsecureWebhooks,
  });
  const dispatcherOptions = {
    retrySchedule: config.webhookRetrySchedule,
    allowInsecure: config.allowInsecureWebhooks,
    // New events wait at most this long for their first attempt; a backlog drains without waiting.
    tickMs: 100,
    concurrency: 128,
    maxLagMs: 30_000,
  };
  let dispatcher:
    Pick<WebhookDispatcher, 'start' | 'stop' | 'runOnce' | 'stats' | 'pending' | 'autoDisabled'> | undefined;
  // Made on first use: `svc serve` starts it (in its own thread); admin commands never do.
  const webhookDispatcher = () =>
    (dispatcher ??= overrides.webhookThread
      ? createDispatchWorker(
          {
            dataDir: config.dataDir,
            dnsServers,
            log: { level: config.logLevel, format: config.logFormat ?? (process.stderr.isTTY ? 'pretty' : 'json') },
            ca: overrides.webhookCa,
            options: dispatcherOptions,
          },
          { repo: webhooksRepo, logger },
        )
      : createWebhookDispatcher({ repo: webhooksRepo, clock, logger, agent: webhookAgent }, dispatcherOptions));
  // Expired idempotency records and session tokens are purged once an hour.
  const purge = clock.setInterval(() => {
    void tx.write(() => idempotency.purgeExpired(iso(clock.now()))).catch(() => {});
    void sessions.purgeExpired().catch(() => {});
  }, 3_600_000);

  return {
    config,
    clock,
    logger,
    db,
    accounts,
    members: createMembersService({ repo: accountsRepo, clock, accounts }),
    sessions,
    audit: createAuditRepo(db),
    keys,
    suppressions,
    templates,
    domains,
    emails,
    /** The counters and gauges an operator alerts on (merged into /metrics). */
    metrics,
    /** Drops old emails' bodies and attachments (`--body-retention`); `svc serve` starts it. */
    retention,
    /** This server's row in `nodes` (relay sessions, liveness); `svc serve` keeps it fresh. */
    nodes: createNodesRepo(db, tx),
    /** svc top through the server (GET /v1/top). */
    top: createTopService(db, clock),
    /** Bounces mailed back to return paths (the inbound listener, `svc inbound process`). */
    inbound,
    /** The dashboard's CSV export of a project's emails, on top of the list use case. */
    emailsExport: createEmailsExport(emails),
    /** An organization's use of its plan (GET .../usage). */
    usage: createUsageReport({ usage: createUsageSql(db), clock, orgs: accounts, domains: domainsRepo }),
    /** Sending statistics from the hourly rollup that migration 0010's trigger keeps (GET .../stats). */
    stats: createStatsService({ repo: createStatsRepo(db), clock }),
    rateLimiter,
    delivery,
    tracking,
    webhooks,
    webhookDispatcher,
    /** The host name this app works with (EHLO, Message-ID, SPF and return-path records). */
    hostname,
    /** Records the server's host name and resolver for admin commands run later on this data dir. */
    recordServerSettings: () =>
      serverSettings.record({ hostname, dnsServers: config.dnsServers ?? [] }, iso(clock.now())),
    /** What the operator should fix, for `svc serve` to say at start: files others can read, an unusable host name. */
    startupWarnings: () => startupWarnings(config.dataDir, hostname),
    /** Why an email's recipients are still waiting (read-only; safe from any process). */
    explainQueue: (emailId: string) => deliveryRepo.explain(emailId),
    /** True when the database answers a write: used by /readyz. */
    async ready(): Promise<boolean> {
      try {
        await tx.write((d) => d.prepare('SELECT 1').get());
        return true;
      } catch {
        return false;
      }
    },
    /** Commits what is queued, stops the pools and closes the database. */
    async close(): Promise<void> {
      purge.cancel();
      await engine?.stop();
      await dispatcher?.stop();
      await webhookAgent.close();
      tx.close();
      await renderer?.close();
      await store.close();
    },
  };
}

function makeRenderer(config: Config): Renderer {
  return createRenderer({
    timeoutMs: config.templateTimeout,
    maxOutputBytes: LIMITS.renderOutputBytes,
    maxThreads: config.workers ?? Math.max(1, cpus().length),
  });
}

export type App = ReturnType<typeof createApp>;

/** One line for the log, with the fields a log search wants. */
export interface StartupWarning {
  message: string;
  fields: Record<string, string>;
}

function startupWarnings(dataDir: string, hostname: string): StartupWarning[] {
  const exposed = findExposedPaths(dataDir).map(({ path, mode, fix }) => ({
    message: `${path} is readable by others (mode ${mode}), and it holds secrets: run ${fix}`,
    fields: { path, mode, fix },
  }));
  const problem = hostnameProblem(hostname);
  return problem ? [...exposed, { message: problem, fields: { hostname } }] : exposed;
}

/** Base URL of links in emails (cli.md `--public-url`); by default the server's own listen address. */
function publicUrlOf(config: Config): string {
  if (config.publicUrl) return config.publicUrl;
  const host = config.httpHost.includes(':') ? `[${config.httpHost}]` : config.httpHost;
  return `${config.tlsCert && config.tlsKey ? 'https' : 'http'}://${host}:${config.httpPort}`;
}

function deliveryOptions(config: Config, hostname: string) {
  const threads = config.workers ?? Math.max(1, cpus().length);
  return {
    worker: {
      hostname,
      mxPort: config.mxPort,
      dnsServers: config.dnsServers ?? null,
      relay: config.relay ?? null,
      tlsInsecure: config.smtpTlsInsecure,
      connectTimeoutMs: config.deliveryConnectTimeout,
      socketTimeoutMs: config.deliveryTimeout,
    },
    threads,
    perThread: 16,
    leaseMs: 10 * 60_000,
    tickMs: 250,
    policy: { schedule: config.deliveryRetrySchedule, maxAgeMs: config.deliveryMaxAge },
    throttle: {
      maxConcurrency: config.deliveryConcurrency,
      basePauseMs: 30_000,
      maxPauseMs: 15 * 60_000,
      recoverAfter: 20,
    },
  };
}
