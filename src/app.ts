import { effectiveSettings, type Config } from './config/index.ts';
import { iso, systemClock, type Clock } from './lib/clock.ts';
import { silentLogger } from './lib/silent-logger.ts';
import { createByteBudget } from './lib/byte-budget.ts';
import type { Db } from './store/db.ts';
import { findExposedPaths } from './store/data-dir.ts';
import { openStore, type Store } from './app-store.ts';
import {
  loadServerModules,
  startPurge,
  wireAccess,
  wireInbound,
  wireSending,
  wireWebhooks,
  type AppOverrides,
  type ServerModules,
  type Wiring,
} from './app-parts.ts';
import { wireDelivery, wireDoctor, wireTlsReports } from './app-delivery.ts';
import type { OpsMetrics } from './metrics/index.ts';
import { createTopService } from './top/index.ts';
import { hostnameProblem } from './domains/index.ts';
import { createEmailsExport } from './emails/index.ts';
import { createUsageReport } from './limits/index.ts';
import { createStatsService } from './stats/index.ts';
import { wireReceiving } from './app-receiving.ts';

export type { AppOverrides } from './app-parts.ts';

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
  const w: Wiring = { config, overrides, clock, logger, store, settings, server, metrics };
  const access = wireAccess(w);
  // A LIVE email starts delivery once committed, not at the next tick (a started engine only).
  const sending = wireSending(w, access, () => engine.started()?.wake());
  const { reportReader, dmarc, inbound } = wireInbound(w, sending);
  const tls = wireTlsReports(w, access, sending);
  const engine = wireDelivery(w, sending, (outcomes) => tls.tlsReports.observe(outcomes));
  const doctor = wireDoctor(w, { dmarc });
  const hooks = wireWebhooks(w, access, sending);
  const receiving = wireReceiving(w, access, sending);
  const purge = startPurge(w, access);
  // One budget for both doors: request bodies and relayed messages held in memory at once.
  const inFlight = createByteBudget(config.inFlightBytes);
  metrics?.watchStore({
    queue: async () => {
      const q = await store.delivery.queueStats();
      // Only emails scheduled ahead: nothing has waited yet.
      const age = q.oldest ? Math.max(0, (clock.now() - Date.parse(q.oldest)) / 1000) : 0;
      return { recipients: q.recipients, oldestSeconds: age };
    },
    throttled: () => store.delivery.throttledNow(),
    storeBytes: () => store.sizeBytes(),
    storage: () => store.storage(),
  });
  metrics?.watchBudget(() => inFlight.stats());
  metrics?.watchDeliveryNodes(() => engine.started()?.throttle.sharedAmong() ?? 1);
  metrics?.watchDoctor(() => doctor.doctorReport());
  const { accounts, sessions } = access;
  const { renderer, domains, emails, tracking } = sending;
  const hostname = settings.hostname;

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
    members: access.members,
    sessions,
    audit: store.audit,
    keys: access.keys,
    suppressions: sending.suppressions,
    templates: sending.templates,
    domains,
    emails,
    /** The counters and gauges an operator alerts on (merged into /metrics); a server's only. */
    get metrics(): OpsMetrics {
      if (!metrics) throw new Error("app.metrics belongs to a server: an admin command's app keeps none");
      return metrics;
    },
    /** Drops old emails' bodies and attachments (`--body-retention`); `svc serve` starts it. */
    retention: hooks.retention,
    /** This server's row in `nodes` (relay sessions, liveness); `svc serve` keeps it fresh. */
    nodes: store.nodes,
    /** svc top through the server (GET /v1/top). */
    top: createTopService((o) => store.topReader(o), clock),
    /** svc top's reader of the whole server (every project), on whichever store runs. */
    topReader: (o: { projectId?: string } = {}) => store.topReader({ clock, ...o }),
    /** Bounces mailed back to return paths (the inbound listener, `svc inbound process`). */
    inbound,
    /** Routes of receiving domains and the messages they took (issue 34). */
    receiving,
    /** DMARC aggregate reports received for the domains (`svc domains report`, GET …/domains/:id/reports). */
    dmarc,
    /** The dashboard's CSV export of a project's emails, on top of the list use case. */
    emailsExport: createEmailsExport(emails),
    /** An organization's use of its plan (GET .../usage). */
    usage: createUsageReport({ usage: store.usage, clock, orgs: accounts, domains: store.domains }),
    /** Sending statistics from the hourly rollup that migration 0010's trigger keeps (GET .../stats). */
    stats: createStatsService({ repo: store.stats, clock }),
    rateLimiter: store.rateLimiter(),
    /** Failure windows of the counter `name` (the SMTP relay's AUTH failures): shared by the nodes on PostgreSQL. */
    failureWindows: (name: string, windowMs: number) => store.failureWindows(name, windowMs),
    delivery: engine.delivery,
    tracking,
    webhooks: hooks.webhooks,
    webhookDispatcher: hooks.webhookDispatcher,
    /** TLS reporting (RFC 8460, --tls-reports): the counts of TLS outcomes and the daily reports; `svc serve` starts it. */
    tlsReports: tls.tlsReports,
    /** The host name this app works with (EHLO, Message-ID, SPF and return-path records). */
    hostname,
    /** Records the server's settings (server-settings.ts) for admin commands run beside it or later. */
    recordServerSettings: () => store.settings.record(settings, iso(clock.now())),
    /** What the operator should fix, for `svc serve` to say at start: files others can read, an unusable host name. */
    startupWarnings: () => startupWarnings(store.kind === 'sqlite' ? config.dataDir : undefined, hostname),
    /** Why an email's recipients are still waiting (read-only; safe from any process). */
    explainQueue: (emailId: string) => store.delivery.explain(emailId),
    /** Whether DANE is on: the first call asks the named resolver and says the answer once (`svc serve` at start). */
    daneOn: engine.daneOn,
    /** Runs `fn` unless another node runs the job `name` now (an advisory lock on PostgreSQL). */
    runExclusive: (name: string, fn: () => Promise<void>) => store.runExclusive(name, fn),
    /** True when the database answers a write: used by /readyz. */
    ready: () => store.ready(),
    /** Whether writes fail for lack of space, and the data dir's free space (/readyz). */
    storage: () => store.storage(),
    /** The bytes of request bodies and relayed messages held in memory at once (--in-flight-bytes). */
    inFlight,
    doctor: doctor.doctor,
    startDoctor: doctor.startDoctor,
    doctorReport: doctor.doctorReport,
    /** Commits what is queued, stops the pools and closes the database. */
    async close(): Promise<void> {
      await doctor.stop();
      purge.cancel();
      await engine.started()?.stop();
      // After delivery: the last attempts' outcomes are counted before the store closes.
      await tls.stop();
      await hooks.stop();
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
