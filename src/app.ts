import { notOverlapping } from './lib/periodic.ts';
import type { Config } from './config/schema.ts';
import { iso, systemClock, type Clock } from './lib/clock.ts';
import type { Logger } from './lib/logger.ts';
import { silentLogger } from './lib/silent-logger.ts';
import type { PasswordCost } from './lib/password.ts';
import { createByteBudget } from './lib/byte-budget.ts';
import type { Db } from './store/db.ts';
import { findExposedPaths } from './store/data-dir.ts';
import { openPgStore, openSqliteStore, type Store } from './app-store.ts';
import type { OpsMetrics } from './http/metrics.ts';
import { createTopService } from './top/service.ts';
import { NODE_STALE_MS } from './nodes/heartbeat.ts';
import { createDmarcReports, createInboundService, createLazyReportReader, serverAddresses } from './inbound/index.ts';
import { createAccountsService, createMembersService } from './accounts/index.ts';
import { createKeysService } from './keys/index.ts';
import { createLoginThrottle, createSessionsService, LOGIN_LIMITS } from './sessions/index.ts';
import { createSuppressionsService } from './suppressions/index.ts';
import { createTemplatesService } from './templates/index.ts';
import { createDnsResolver, createDomainsService, hostnameProblem } from './domains/index.ts';
import { createEmailsExport, createEmailsService, createRetention } from './emails/index.ts';
import { createIdempotencyGate } from './idempotency/index.ts';
import { createUsageReport } from './limits/index.ts';
import { RETURN_PATH_SECRET, type DeliveryEngine } from './delivery/index.ts';
import { createTrackingService } from './tracking/index.ts';
import { createStatsService } from './stats/index.ts';
import { effectiveSettings } from './config/server-settings.ts';
import { deliveryOptions, makeRenderer, publicUrlOf } from './app-options.ts';
import {
  createWebhookDispatcher,
  createWebhooksService,
  resolverFromDns,
  type WebhookDispatcher,
} from './webhooks/index.ts';
import type { Agent } from 'undici';
import { createDispatchWorker } from './webhooks/worker-host.ts';
import {
  createDoctor,
  createDoctorDns,
  localOutboundAddresses,
  startDoctorMonitor,
  type DoctorDeps,
  type DoctorMonitor,
} from './doctor/index.ts';

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
  /** An admin command: it works with the settings the server recorded (server-settings.ts, effectiveSettings). */
  adminCommand?: boolean;
  /**
   * A cheaper scrypt for new passwords (tests: a suite hashes over a thousand). Not a setting:
   * every server hashes at lib/password.ts's PASSWORD_COST.
   */
  passwordCost?: PasswordCost;
}

/**
 * Opens the store the configuration names: PostgreSQL with `--database` (SVC_DATABASE_URL),
 * else the data dir's SQLite file.
 */
export async function openStore(
  config: Config,
  opts: {
    clock: Clock;
    checkpointWorker?: boolean;
    createDataDir?: boolean;
    onCommit?: (s: number) => void;
    logger?: Logger;
  },
): Promise<Store> {
  if (config.database) {
    const { redactUrl } = await import('./store/pg.ts');
    return openPgStore(config.database, redactUrl(config.database), opts);
  }
  return openSqliteStore(config.dataDir, opts);
}

/**
 * The modules behind an app's synchronous accessors that only a server uses: the delivery
 * engine (piscina), prom-client's metrics and the webhook agent (undici). An app loads them
 * up front unless it is an admin command's, which works without them and starts in a
 * fraction of the time (decisions.md, "CLI admin commands load lazily").
 */
async function loadServerModules() {
  const [engine, metrics, guard] = await Promise.all([
    import('./delivery/engine.ts'),
    import('./http/metrics.ts'),
    import('./webhooks/url-guard.ts'),
  ]);
  return {
    createDeliveryEngine: engine.createDeliveryEngine,
    createOpsMetrics: metrics.createOpsMetrics,
    createWebhookAgent: guard.createWebhookAgent,
  };
}

type ServerModules = Awaited<ReturnType<typeof loadServerModules>>;

/** The server's modules, or a clear error for the part of the app an admin command has not loaded. */
function serverOnly(server: ServerModules | undefined, part: string): ServerModules {
  if (!server) throw new Error(`${part} belongs to a server: an admin command's app does not load it`);
  return server;
}

/**
 * The one composition root: opens the store and wires every domain service.
 * Doors (HTTP, CLI, SMTP) receive an App and call its services.
 */
export async function createApp(config: Config, overrides: AppOverrides = {}) {
  const clock = overrides.clock ?? systemClock;
  const server = overrides.adminCommand ? undefined : await loadServerModules();
  // Metrics are a server's, read at each scrape; an admin command's would die unread with it.
  const metrics = server?.createOpsMetrics();
  const store = await openStore(config, {
    clock,
    checkpointWorker: overrides.checkpointWorker ?? false,
    createDataDir: overrides.createDataDir ?? false,
    onCommit: (s) => metrics?.committed(s),
    logger: overrides.logger ?? silentLogger,
  });
  try {
    return await wire(config, overrides, clock, store, { server, metrics });
  } catch (e) {
    await store.close();
    throw e;
  }
}

async function wire(
  config: Config,
  overrides: AppOverrides,
  clock: Clock,
  store: Store,
  { server, metrics }: { server: ServerModules | undefined; metrics: OpsMetrics | undefined },
) {
  const logger = overrides.logger ?? silentLogger;
  // `svc serve` runs with its own settings and records them; an admin command works with the
  // server's (its host name, resolver and webhook URL guard), so both name and check the same.
  const settings = effectiveSettings(config, await store.settings.stored(), overrides.adminCommand ?? false);
  const { hostname, dnsServers } = settings;
  // The render pool starts on first use, so admin commands never spawn threads.
  const renderer = makeRenderer(config);
  // So does the DMARC report reader's (one thread; a report is read off the event loop).
  const reportReader = createLazyReportReader();

  const accountsRepo = store.accounts;
  const accounts = createAccountsService({
    repo: accountsRepo,
    clock,
    defaultPlan: config.defaultPlan,
    passwordCost: overrides.passwordCost,
  });
  const keys = createKeysService({ repo: store.keys, clock });
  const suppressions = createSuppressionsService({ repo: store.suppressions, clock });
  const templates = createTemplatesService({ repo: store.templates, clock });
  const idempotency = createIdempotencyGate();
  const domainsRepo = store.domains;
  const dnsResolver = createDnsResolver(dnsServers);
  const domains = createDomainsService({
    repo: domainsRepo,
    accounts,
    clock,
    logger,
    dns: dnsResolver,
    hostname,
    gracePeriodMs: config.domainGracePeriod,
    dkimGraceMs: config.dkimRotationGrace,
    dkimRotateMonths: config.dkimRotateMonths,
  });
  const emailsRepo = store.emails;
  const emails = createEmailsService({
    repo: emailsRepo,
    clock,
    templates,
    renderer,
    domains: domainsRepo,
    idempotency,
    accounts: accountsRepo,
    sandboxDomain: config.sandboxDomain,
    onAccepted: (env, source) => {
      metrics?.accepted(env, source);
      // A LIVE email starts delivery once committed, not at the next tick (a started engine only).
      if (env === 'LIVE') engine?.wake();
    },
  });
  const secrets = store.secrets;
  const tracking = createTrackingService({
    key: () => secrets.get('tracking'),
    repo: store.tracking,
    clock,
    publicUrl: publicUrlOf(config),
    settings: (projectId) => accounts.getProjectSettings(projectId),
  });
  const rateLimiter = store.rateLimiter();
  const deliveryRepo = store.delivery;
  // DMARC aggregate reports, read against svc's own addresses (inbound/dmarc-service.ts serverAddresses).
  const dmarc = createDmarcReports({
    repo: store.dmarc,
    findDomain: (name) => domainsRepo.findDomainByName(name),
    reader: reportReader,
    ownAddresses: () => serverAddresses(dnsResolver, settings, localOutboundAddresses),
    clock,
    logger,
  });
  const inbound = createInboundService({
    dmarc,
    delivery: deliveryRepo,
    findEmail: (id) => emailsRepo.findById(id),
    returnPathKey: () => secrets.get(RETURN_PATH_SECRET),
    clock,
    logger,
    observe: (outcome, category, type, source) => metrics?.outcome(outcome, category, type, source),
  });
  metrics?.watchStore({
    queue: async () => {
      const q = await deliveryRepo.queueStats();
      return { recipients: q.recipients, oldestSeconds: q.oldest ? (clock.now() - Date.parse(q.oldest)) / 1000 : 0 };
    },
    throttled: () => deliveryRepo.throttledNow(),
    storeBytes: () => store.sizeBytes(),
    storage: () => store.storage(),
  });
  // One budget for both doors: request bodies and relayed messages held in memory at once.
  const inFlight = createByteBudget(config.inFlightBytes);
  metrics?.watchBudget(() => inFlight.stats());
  let engine: DeliveryEngine | undefined;
  // The delivery engine is made on first use: `svc serve` starts it; admin commands never do.
  const delivery = () =>
    (engine ??= serverOnly(server, 'app.delivery()').createDeliveryEngine(
      {
        repo: deliveryRepo,
        clock,
        logger,
        keys: domains,
        tracking,
        returnPathKey: () => secrets.get(RETURN_PATH_SECRET),
        // Several nodes share one database on PostgreSQL: each sends its share of every
        // destination's limit. The heartbeat keeps `nodes` fresh every 10 s at most.
        ...(store.kind === 'postgres'
          ? {
              liveNodes: async () => Math.max(1, (await store.nodes.fresh(iso(clock.now() - NODE_STALE_MS))).length),
            }
          : {}),
        observe: (decisions) => {
          for (const d of decisions) {
            if (d.kind === 'retry') metrics?.outcome('deferred', d.category, null, 'smtp');
            else if (d.kind === 'bounced') metrics?.outcome('bounced', d.category, d.bounce_type, 'smtp');
            else metrics?.outcome(d.kind, null, null, 'smtp');
          }
        },
      },
      deliveryOptions(config, settings),
    ));
  metrics?.watchDeliveryNodes(() => engine?.throttle.sharedAmong() ?? 1);
  // svc doctor's checks, on the server's resolver, host name and MX port; `svc serve` runs them hourly.
  type DoctorOptions = Pick<DoctorDeps, 'addresses' | 'connect' | 'probeDomain'>;
  const doctor = (o: DoctorOptions = {}) =>
    createDoctor({
      clock,
      dns: createDoctorDns(dnsServers),
      hostname,
      domains: domainsRepo,
      reports: (id) => dmarc.listReportDays(id),
      mxPort: settings.mxPort,
      relay: settings.relayHost !== null,
      ...o,
    });
  let doctorMonitor: DoctorMonitor | undefined;
  metrics?.watchDoctor(() => doctorMonitor?.latest());
  const sessions = createSessionsService({
    repo: store.sessions,
    clock,
    throttle: createLoginThrottle(store.failureWindows('login', LOGIN_LIMITS.windowMs)),
    users: accountsRepo,
    passwordCost: overrides.passwordCost,
  });
  // Every webhook POST goes through one guarded keep-alive agent, resolving with the server's
  // resolver. It is made for the first POST, with a server's modules or once undici has loaded.
  let agent: Agent | undefined;
  const webhookAgent = (guard: Pick<ServerModules, 'createWebhookAgent'>) =>
    (agent ??= guard.createWebhookAgent({
      resolve: resolverFromDns(dnsResolver),
      allowInsecure: settings.allowInsecureWebhooks,
      ...(overrides.webhookCa ? { ca: overrides.webhookCa } : {}),
    }));
  const webhooksRepo = store.webhooks;
  const retention = createRetention({
    repo: emailsRepo,
    webhooks: webhooksRepo,
    clock,
    logger,
    bodyRetentionMs: config.bodyRetention,
    emailRetentionMs: config.emailRetention,
    exclusive: (fn) => store.runExclusive('retention', fn),
  });
  const webhooks = createWebhooksService({
    repo: webhooksRepo,
    clock,
    planOf: async (projectId) =>
      (await accounts.getOrg((await accounts.getProjectById(projectId)).organization_id)).plan,
    agent: async () => webhookAgent(server ?? (await import('./webhooks/url-guard.ts'))),
    allowInsecure: settings.allowInsecureWebhooks,
  });
  const dispatcherOptions = {
    retrySchedule: config.webhookRetrySchedule,
    allowInsecure: settings.allowInsecureWebhooks,
    // New events wait at most this long for their first attempt; a backlog drains without waiting.
    tickMs: 100,
    concurrency: 128,
    maxLagMs: 30_000,
  };
  let dispatcher:
    Pick<WebhookDispatcher, 'start' | 'stop' | 'runOnce' | 'stats' | 'pending' | 'autoDisabled'> | undefined;
  // Made on first use: `svc serve` starts it (in its own thread on SQLite, with its own
  // connection); admin commands never do. On PostgreSQL it claims with leases in-process.
  const webhookDispatcher = () =>
    (dispatcher ??=
      overrides.webhookThread && store.kind === 'sqlite'
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
        : createWebhookDispatcher(
            { repo: webhooksRepo, clock, logger, agent: webhookAgent(serverOnly(server, 'app.webhookDispatcher()')) },
            dispatcherOptions,
          ));
  // Expired idempotency records and session tokens are purged once an hour, by one node at a time.
  const purge = clock.setInterval(
    notOverlapping(() =>
      store
        .runExclusive('purge', async () => {
          await store.purgeIdempotency(iso(clock.now()));
          await sessions.purgeExpired();
        })
        .catch(() => {}),
    ),
    3_600_000,
  );

  return {
    config,
    clock,
    logger,
    /** Which store runs: 'sqlite' (the data dir) or 'postgres' (--database). */
    storeKind: store.kind,
    /** Where the data lives, for logs: the data dir, or the database URL without its password. */
    storeWhere: store.where,
    /** The SQLite connection, for tests that look inside the file. */
    get db(): Db {
      if (!store.sqlite) throw new Error('app.db is the SQLite connection; this app runs on PostgreSQL');
      return store.sqlite;
    },
    accounts,
    members: createMembersService({ repo: accountsRepo, clock, accounts }),
    sessions,
    audit: store.audit,
    keys,
    suppressions,
    templates,
    domains,
    emails,
    /** The counters and gauges an operator alerts on (merged into /metrics); a server's only. */
    get metrics(): OpsMetrics {
      if (!metrics) throw new Error("app.metrics belongs to a server: an admin command's app keeps none");
      return metrics;
    },
    /** Drops old emails' bodies and attachments (`--body-retention`); `svc serve` starts it. */
    retention,
    /** This server's row in `nodes` (relay sessions, liveness); `svc serve` keeps it fresh. */
    nodes: store.nodes,
    /** svc top through the server (GET /v1/top). */
    top: createTopService((o) => store.topReader(o), clock),
    /** svc top's reader of the whole server (every project), on whichever store runs. */
    topReader: (o: { projectId?: string } = {}) => store.topReader({ clock, ...o }),
    /** Bounces mailed back to return paths (the inbound listener, `svc inbound process`). */
    inbound,
    /** DMARC aggregate reports received for the domains (`svc domains report`, GET …/domains/:id/reports). */
    dmarc,
    /** The dashboard's CSV export of a project's emails, on top of the list use case. */
    emailsExport: createEmailsExport(emails),
    /** An organization's use of its plan (GET .../usage). */
    usage: createUsageReport({ usage: store.usage, clock, orgs: accounts, domains: domainsRepo }),
    /** Sending statistics from the hourly rollup that migration 0010's trigger keeps (GET .../stats). */
    stats: createStatsService({ repo: store.stats, clock }),
    rateLimiter,
    /** Failure windows of the counter `name` (the SMTP relay's AUTH failures): shared by the nodes on PostgreSQL. */
    failureWindows: (name: string, windowMs: number) => store.failureWindows(name, windowMs),
    delivery,
    tracking,
    webhooks,
    webhookDispatcher,
    /** The host name this app works with (EHLO, Message-ID, SPF and return-path records). */
    hostname,
    /** Records the server's settings (server-settings.ts) for admin commands run beside it or later. */
    recordServerSettings: () => store.settings.record(settings, iso(clock.now())),
    /** What the operator should fix, for `svc serve` to say at start: files others can read, an unusable host name. */
    startupWarnings: () => startupWarnings(store.kind === 'sqlite' ? config.dataDir : undefined, hostname),
    /** Why an email's recipients are still waiting (read-only; safe from any process). */
    explainQueue: (emailId: string) => deliveryRepo.explain(emailId),
    /** Runs `fn` unless another node runs the job `name` now (an advisory lock on PostgreSQL). */
    runExclusive: (name: string, fn: () => Promise<void>) => store.runExclusive(name, fn),
    /** True when the database answers a write: used by /readyz. */
    ready: () => store.ready(),
    /** Whether writes fail for lack of space, and the data dir's free space (/readyz). */
    storage: () => store.storage(),
    /** The bytes of request bodies and relayed messages held in memory at once (--in-flight-bytes). */
    inFlight,
    /** `svc doctor`'s checks of this server (its host name, reverse DNS, port 25, blocklists, domains). */
    doctor,
    /** Runs the doctor now and hourly (`svc serve`); its latest report is in /readyz and /metrics. */
    startDoctor: (o: DoctorOptions & { intervalMs?: number } = {}) =>
      (doctorMonitor ??= startDoctorMonitor(doctor(o), {
        clock,
        logger,
        ...(o.intervalMs ? { intervalMs: o.intervalMs } : {}),
      })),
    /** The latest report of the doctor `svc serve` runs; undefined before its first run. */
    doctorReport: () => doctorMonitor?.latest(),
    /** Commits what is queued, stops the pools and closes the database. */
    async close(): Promise<void> {
      await doctorMonitor?.stop();
      purge.cancel();
      await engine?.stop();
      await dispatcher?.stop();
      await agent?.close();
      await renderer.close();
      await reportReader.close();
      await store.close();
    },
  };
}

export type App = Awaited<ReturnType<typeof createApp>>;

/** One line for the log, with the fields a log search wants. */
export interface StartupWarning {
  message: string;
  fields: Record<string, string>;
}

function startupWarnings(dataDir: string | undefined, hostname: string): StartupWarning[] {
  const exposed = (dataDir === undefined ? [] : findExposedPaths(dataDir)).map(({ path, mode, fix }) => ({
    message: `${path} is readable by others (mode ${mode}), and it holds secrets: run ${fix}`,
    fields: { path, mode, fix },
  }));
  const problem = hostnameProblem(hostname);
  return problem ? [...exposed, { message: problem, fields: { hostname } }] : exposed;
}
