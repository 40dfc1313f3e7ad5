// The delivery side of the app (what createApp assembles, app.ts): the delivery engine with
// its outbound TLS policies, TLS reporting, and svc doctor's checks. Wired as app-parts.ts's.
import type { Agent } from 'undici';
import { deliveryOptions, outboundCaOf } from './app-options.ts';
import {
  createDnssecResolver,
  createResolver,
  createStoredStsPolicies,
  probeDane,
  RETURN_PATH_SECRET,
  type DeliveryEngine,
} from './delivery/index.ts';
import {
  createDoctor,
  createDoctorDns,
  startDoctorMonitor,
  type DoctorDeps,
  type DoctorMonitor,
} from './doctor/index.ts';
import { iso } from './lib/clock.ts';
import { NODE_STALE_MS } from './nodes/index.ts';
import {
  createReportMailer,
  createReportPoster,
  createTlsReports,
  createTxtLookup,
  type ObservedTls,
} from './tlsrpt/index.ts';
import { resolverFromDns } from './webhooks/index.ts';
import { serverOnly, type Wiring, type wireAccess, type wireInbound, type wireSending } from './app-parts.ts';

/** The delivery engine, made on first use: `svc serve` starts it; admin commands never do. */
export function wireDelivery(
  w: Wiring,
  { domains, tracking }: Pick<ReturnType<typeof wireSending>, 'domains' | 'tracking'>,
  observeTls?: (outcomes: ObservedTls[]) => void,
) {
  const { config, clock, logger, store, settings, server, metrics, overrides } = w;
  let engine: DeliveryEngine | undefined;
  // MTA-STS (RFC 8461) applies to direct delivery; through a smarthost the relay is the next hop.
  let sts: ReturnType<typeof createStoredStsPolicies> | undefined;
  const stsPolicies = () =>
    (sts ??= createStoredStsPolicies({
      resolver: createResolver(settings.dnsServers),
      clock,
      ca: outboundCaOf(config) ?? [],
      ...(overrides.mtaStsPort ? { port: overrides.mtaStsPort } : {}),
      store: store.delivery,
      warn: (message, err) => logger.warn({ err }, message),
    }));
  // DANE (RFC 7672): on only when the named resolver validates, probed once and said once.
  let dane: Promise<boolean> | undefined;
  const daneOn = () =>
    (dane ??= probeDane(
      config.relay ? undefined : config.daneResolver,
      Boolean(config.relay),
      config.daneResolver && !config.relay ? createDnssecResolver(config.daneResolver, clock) : null,
      logger,
    ).catch((err: unknown) => {
      logger.warn({ err }, 'DANE is off: the validating resolver could not be asked');
      return false;
    }));
  const delivery = () =>
    (engine ??= serverOnly(server, 'app.delivery()').createDeliveryEngine(
      {
        daneOn,
        ...(config.relay ? {} : { stsPolicy: (domain: string) => stsPolicies().policyFor(domain) }),
        repo: store.delivery,
        suppressions: store.suppressions,
        clock,
        logger,
        keys: domains,
        tracking,
        returnPathKey: () => store.secrets.get(RETURN_PATH_SECRET),
        // Several nodes share one database on PostgreSQL: each sends its share of every
        // destination's limit. The heartbeat keeps `nodes` fresh every 10 s at most.
        ...(store.kind === 'postgres'
          ? {
              liveNodes: async () => Math.max(1, (await store.nodes.fresh(iso(clock.now() - NODE_STALE_MS))).length),
            }
          : {}),
        ...(observeTls ? { observeTls } : {}),
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
  return {
    delivery,
    /** The MTA-STS policies delivery has found (for `svc top` and metrics). */
    stsPolicies,
    /** Whether DANE is on; the first call probes the named resolver and logs the answer once. */
    daneOn,
    /** The engine if it was made (a LIVE email wakes it; admin commands have none). */
    started: () => engine,
  };
}

/**
 * TLS reporting (RFC 8460): the engine's TLS outcomes counted, and each day's reports sent to
 * the rua of `_smtp._tls` records, by HTTPS through a guarded agent as webhooks are, and by
 * mail through the accept path as the --tls-reports-from domain's project. `svc serve` starts it.
 */
export function wireTlsReports(
  w: Wiring,
  { accounts }: Pick<ReturnType<typeof wireAccess>, 'accounts'>,
  { emails, dnsResolver }: Pick<ReturnType<typeof wireSending>, 'emails' | 'dnsResolver'>,
) {
  const { config, overrides, clock, logger, store, settings, server, metrics } = w;
  let agent: Agent | undefined;
  const reportAgent = async () =>
    (agent ??= (server ?? (await import('./webhooks/url-guard.ts'))).createWebhookAgent({
      resolve: resolverFromDns(dnsResolver),
      allowInsecure: settings.allowInsecureWebhooks,
      ...(overrides.webhookCa ? { ca: overrides.webhookCa } : {}),
    }));
  const tlsReports = createTlsReports({
    repo: store.tlsrpt,
    clock,
    logger,
    enabled: config.tlsReports,
    submitter: settings.hostname,
    from: config.tlsReportsFrom,
    lookupTxt: createTxtLookup(createResolver(settings.dnsServers)),
    post: createReportPoster(reportAgent),
    mail: createReportMailer({
      findDomainByName: (name) => store.domains.findDomainByName(name),
      listProjectIds: (id) => store.domains.listProjectIds(id),
      getProjectById: (id) => accounts.getProjectById(id),
      getOrg: (id) => accounts.getOrg(id),
      send: (sender, body) => emails.send(sender, body),
    }),
    count: (policyType, result) => metrics?.tlsSession(policyType, result),
  });
  return {
    tlsReports,
    async stop() {
      await tlsReports.stop();
      await agent?.close();
    },
  };
}

type DoctorOptions = Pick<DoctorDeps, 'addresses' | 'connect' | 'probeDomain'>;

/** svc doctor's checks, on the server's resolver, host name and MX port; `svc serve` runs them hourly. */
export function wireDoctor(w: Wiring, { dmarc }: Pick<ReturnType<typeof wireInbound>, 'dmarc'>) {
  const { clock, logger, store, settings } = w;
  const doctor = (o: DoctorOptions = {}) =>
    createDoctor({
      clock,
      dns: createDoctorDns(settings.dnsServers),
      hostname: settings.hostname,
      domains: store.domains,
      reports: (id) => dmarc.listReportDays(id),
      mxPort: settings.mxPort,
      relay: settings.relayHost !== null,
      ...o,
    });
  let monitor: DoctorMonitor | undefined;
  return {
    /** `svc doctor`'s checks of this server (its host name, reverse DNS, port 25, blocklists, domains). */
    doctor,
    /** Runs the doctor now and hourly (`svc serve`); its latest report is in /readyz and /metrics. */
    startDoctor: (o: DoctorOptions & { intervalMs?: number } = {}) =>
      (monitor ??= startDoctorMonitor(doctor(o), {
        clock,
        logger,
        ...(o.intervalMs ? { intervalMs: o.intervalMs } : {}),
      })),
    /** The latest report of the doctor `svc serve` runs; undefined before its first run. */
    doctorReport: () => monitor?.latest(),
    stop: () => monitor?.stop(),
  };
}
