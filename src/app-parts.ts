// The parts of the app by concept, each wired from the store, the configuration and the
// parts before it: what createApp (app.ts) assembles. Only app.ts and its other parts
// (app-delivery.ts, app-receiving.ts) import this file.
import type { Agent } from 'undici';
import type { Store } from './app-store.ts';
import { makeRenderer, publicUrlOf } from './app-options.ts';
import { createAccountsService, createMembersService } from './accounts/index.ts';
import type { Config, ServerSettings } from './config/index.ts';
import { RETURN_PATH_SECRET } from './delivery/index.ts';
import { localOutboundAddresses } from './doctor/index.ts';
import { createDnsResolver, createDomainsService } from './domains/index.ts';
import { createEmailsService, createRetention } from './emails/index.ts';
import type { OpsMetrics } from './metrics/index.ts';
import { createIdempotencyGate } from './idempotency/index.ts';
import { createDmarcReports, createInboundService, createLazyReportReader, serverAddresses } from './inbound/index.ts';
import { createKeysService } from './keys/index.ts';
import { iso, type Clock } from './lib/clock.ts';
import type { Logger } from './lib/logger.ts';
import type { PasswordCost } from './lib/password.ts';
import { notOverlapping } from './lib/periodic.ts';
import { createLoginThrottle, createSessionsService, LOGIN_LIMITS } from './sessions/index.ts';
import { createSuppressionsService } from './suppressions/index.ts';
import { createTemplatesService } from './templates/index.ts';
import { createTrackingService } from './tracking/index.ts';
import {
  createWebhookDispatcher,
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
  /** The HTTPS port of MTA-STS policy hosts: 443; another only in tests (no fixed ports there). */
  mtaStsPort?: number;
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
 * The modules behind an app's synchronous accessors that only a server uses: the delivery
 * engine (piscina), prom-client's metrics and the webhook agent (undici). An app loads them
 * up front unless it is an admin command's, which works without them and starts in a
 * fraction of the time (decisions.md, "CLI admin commands load lazily").
 */
export async function loadServerModules() {
  const [engine, metrics, guard] = await Promise.all([
    import('./delivery/engine.ts'),
    import('./metrics/index.ts'),
    import('./webhooks/url-guard.ts'),
  ]);
  return {
    createDeliveryEngine: engine.createDeliveryEngine,
    createOpsMetrics: metrics.createOpsMetrics,
    createWebhookAgent: guard.createWebhookAgent,
  };
}

export type ServerModules = Awaited<ReturnType<typeof loadServerModules>>;

/** The server's modules, or a clear error for the part of the app an admin command has not loaded. */
export function serverOnly(server: ServerModules | undefined, part: string): ServerModules {
  if (!server) throw new Error(`${part} belongs to a server: an admin command's app does not load it`);
  return server;
}

/** What every part is wired from. */
export interface Wiring {
  config: Config;
  overrides: AppOverrides;
  clock: Clock;
  logger: Logger;
  store: Store;
  /** The settings this app works with (effectiveSettings): the server's own, or the ones it recorded. */
  settings: ServerSettings;
  server: ServerModules | undefined;
  metrics: OpsMetrics | undefined;
}

/** Who may do what: accounts and members, keys, login sessions (with their throttle). */
export function wireAccess({ config, overrides, clock, store }: Wiring) {
  const accounts = createAccountsService({
    repo: store.accounts,
    clock,
    defaultPlan: config.defaultPlan,
    passwordCost: overrides.passwordCost,
  });
  return {
    accounts,
    members: createMembersService({ repo: store.accounts, clock, accounts }),
    keys: createKeysService({ repo: store.keys, clock }),
    sessions: createSessionsService({
      repo: store.sessions,
      clock,
      throttle: createLoginThrottle(store.failureWindows('login', LOGIN_LIMITS.windowMs)),
      users: store.accounts,
      passwordCost: overrides.passwordCost,
    }),
  };
}

/**
 * What a send goes through: templates (the render pool starts on first use, so admin commands
 * never spawn threads), suppressions, sending domains, the emails service and link tracking.
 * `wake` starts delivery of a committed LIVE email at once.
 */
export function wireSending(w: Wiring, { accounts }: ReturnType<typeof wireAccess>, wake: () => void) {
  const { config, clock, logger, store, settings, metrics } = w;
  const renderer = makeRenderer(config);
  const templates = createTemplatesService({ repo: store.templates, clock, renderer });
  const dnsResolver = createDnsResolver(settings.dnsServers);
  const domains = createDomainsService({
    repo: store.domains,
    accounts,
    clock,
    logger,
    dns: dnsResolver,
    hostname: settings.hostname,
    gracePeriodMs: config.domainGracePeriod,
    dkimGraceMs: config.dkimRotationGrace,
    dkimRotateMonths: config.dkimRotateMonths,
    setReceiving: (id, on, a) => store.receiving.setReceiving(id, on, a),
  });
  const emails = createEmailsService({
    repo: store.emails,
    clock,
    templates,
    renderer,
    domains: store.domains,
    idempotency: createIdempotencyGate(),
    accounts: store.accounts,
    sandboxDomain: config.sandboxDomain,
    onAccepted: (env, source) => {
      metrics?.accepted(env, source);
      if (env === 'LIVE') wake();
    },
  });
  const tracking = createTrackingService({
    key: () => store.secrets.get('tracking'),
    repo: store.tracking,
    clock,
    publicUrl: publicUrlOf(config),
    settings: (projectId) => accounts.getProjectSettings(projectId),
    // List-Unsubscribe's mailto goes to the inbound listener: only while there is one.
    ...(config.inboundPort !== 0 ? { mailto: { findEmail: (id: string) => store.emails.findById(id) } } : {}),
  });
  const suppressions = createSuppressionsService({ repo: store.suppressions, clock });
  return { renderer, templates, dnsResolver, domains, emails, tracking, suppressions };
}

/**
 * Mail that comes back: bounces to return paths and DMARC aggregate reports, read against
 * svc's own addresses (the report reader's thread starts on first use).
 */
export function wireInbound(
  w: Wiring,
  { dnsResolver, tracking }: Pick<ReturnType<typeof wireSending>, 'dnsResolver' | 'tracking'>,
) {
  const { clock, logger, store, settings, metrics } = w;
  const reportReader = createLazyReportReader();
  const dmarc = createDmarcReports({
    repo: store.dmarc,
    findDomain: (name) => store.domains.findDomainByName(name),
    reader: reportReader,
    ownAddresses: () => serverAddresses(dnsResolver, settings, localOutboundAddresses),
    clock,
    logger,
  });
  const inbound = createInboundService({
    dmarc,
    delivery: store.delivery,
    findEmail: (id) => store.emails.findById(id),
    returnPathKey: () => store.secrets.get(RETURN_PATH_SECRET),
    unsubscribe: tracking,
    clock,
    logger,
    observe: (outcome, category, type, source) => metrics?.outcome(outcome, category, type, source),
  });
  return { reportReader, dmarc, inbound };
}

/**
 * Webhooks and retention (which deletes webhook deliveries with their emails). Every webhook
 * POST goes through one guarded keep-alive agent, resolving with the server's resolver, made
 * for the first POST with a server's modules or once undici has loaded. The dispatcher is made
 * on first use: `svc serve` starts it (in its own thread on SQLite, with its own connection);
 * admin commands never do. On PostgreSQL it claims with leases in-process.
 */
export function wireWebhooks(
  w: Wiring,
  { accounts }: Pick<ReturnType<typeof wireAccess>, 'accounts'>,
  { dnsResolver }: Pick<ReturnType<typeof wireSending>, 'dnsResolver'>,
) {
  const { config, overrides, clock, logger, store, settings, server } = w;
  let agent: Agent | undefined;
  const webhookAgent = (guard: Pick<ServerModules, 'createWebhookAgent'>) =>
    (agent ??= guard.createWebhookAgent({
      resolve: resolverFromDns(dnsResolver),
      allowInsecure: settings.allowInsecureWebhooks,
      ...(overrides.webhookCa ? { ca: overrides.webhookCa } : {}),
    }));
  const retention = createRetention({
    repo: store.emails,
    webhooks: store.webhooks,
    received: store.receiving,
    clock,
    logger,
    bodyRetentionMs: config.bodyRetention,
    emailRetentionMs: config.emailRetention,
    exclusive: (fn) => store.runExclusive('retention', fn),
  });
  const webhooks = createWebhooksService({
    repo: store.webhooks,
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
  const webhookDispatcher = () =>
    (dispatcher ??=
      overrides.webhookThread && store.kind === 'sqlite'
        ? createDispatchWorker(
            {
              dataDir: config.dataDir,
              dnsServers: settings.dnsServers,
              log: { level: config.logLevel, format: config.logFormat ?? (process.stderr.isTTY ? 'pretty' : 'json') },
              ca: overrides.webhookCa,
              options: dispatcherOptions,
            },
            { repo: store.webhooks, logger },
          )
        : createWebhookDispatcher(
            { repo: store.webhooks, clock, logger, agent: webhookAgent(serverOnly(server, 'app.webhookDispatcher()')) },
            dispatcherOptions,
          ));
  return {
    retention,
    webhooks,
    webhookDispatcher,
    async stop() {
      await dispatcher?.stop();
      await agent?.close();
    },
  };
}

/** Expired idempotency records and session tokens are purged once an hour, by one node at a time. */
export function startPurge({ clock, store }: Wiring, { sessions }: Pick<ReturnType<typeof wireAccess>, 'sessions'>) {
  return clock.setInterval(
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
}
