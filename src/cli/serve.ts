import { startHeartbeat } from '../nodes/heartbeat.ts';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { hostname } from 'node:os';
import { createApp, type App } from '../app.ts';
import { ConfigError, loadConfig, type Config } from '../config/index.ts';
import { takeEarlySignal } from '../lib/early-signals.ts';
import { openLogger, type Logger } from '../lib/logger.ts';
import { initializeFirstStart } from '../accounts/index.ts';
import { startDomainChecks } from '../domains/index.ts';
import { createHttpServer } from '../http/server.ts';
import {
  createInboundListener,
  createSmtpRelay,
  isLoopback,
  RELAY_DEFAULTS,
  type InboundListener,
  type SmtpRelay,
} from '../smtp/index.ts';
import type { GlobalOptions } from './context.ts';
import { markServing } from '../store/backup.ts';

type Opts = Record<string, unknown> & GlobalOptions;
const CONFIG_FLAGS = new Set(['dataDir', 'config', 'json']);

/** svc serve: one process with the HTTP API, the SMTP relay, delivery, webhooks and the schedulers. */
export async function serve(_args: string[], opts: Opts): Promise<void> {
  const flags = Object.fromEntries(Object.entries(opts).filter(([k]) => !CONFIG_FLAGS.has(k) || k === 'dataDir'));
  const loaded = loadConfig({ env: process.env, file: opts.config, flags });
  // The server's host name defaults to the OS's and its resolver to the system's (cli.md),
  // never to ones recorded by an earlier run.
  const config = { ...loaded, hostname: loaded.hostname ?? hostname(), dnsServers: loaded.dnsServers ?? [] };
  const logger = await openLogger({
    level: config.logLevel,
    format: config.logFormat ?? (process.stderr.isTTY ? 'pretty' : 'json'),
  });
  // Listening from the start: a SIGTERM during start-up still stops cleanly once started.
  const stopSignal = untilSignal(logger);
  // Before anything is created: a port in use leaves no data dir, no owner, no credentials printed.
  await probePorts(config);
  const app = await createApp(config, { logger, checkpointWorker: true, createDataDir: true, webhookThread: true });
  // svc restore refuses to replace the database under a running server (the data dir's file;
  // on PostgreSQL there is no file to guard).
  const unmark = app.storeKind === 'sqlite' ? markServing(config.dataDir) : () => {};
  // Whatever has started is stopped again, in reverse, on a clean stop or a failed start
  // (a port in use must not leave the HTTP API answering over a closed store).
  const started: (() => Promise<unknown>)[] = [];
  try {
    await app.recordServerSettings();
    for (const w of app.startupWarnings()) logger.warn(w.fields, w.message);
    // DANE is on only with a validating resolver the operator named: said once, at start.
    await app.daneOn();
    const https =
      config.tlsCert && config.tlsKey
        ? { cert: readFileSync(config.tlsCert), key: readFileSync(config.tlsKey) }
        : undefined;
    const server = createHttpServer(app, https ? { https } : {});
    started.push(() => server.close());
    await listening('the HTTP API', '--http-port', config.httpHost, config.httpPort, () =>
      server.listen({ host: config.httpHost, port: config.httpPort }),
    );
    const relay = await startRelay(app, config, https, started);
    await startInbound(app, config, https, started);
    // Only once every port is ours: the credentials printed once belong to a server that runs.
    await firstStart(app);
    const address = server.server.address();
    const port = typeof address === 'object' && address ? address.port : config.httpPort;
    const url = `${https ? 'https' : 'http'}://${config.httpHost}:${port}`;
    const store = app.storeKind === 'sqlite' ? { data_dir: app.storeWhere } : { database: app.storeWhere };
    logger.info({ url, ...store, hostname: app.hostname }, 'svc is serving');
    await app.delivery().start();
    await app.webhookDispatcher().start();
    const retention = app.retention.start();
    const heartbeat = startHeartbeat({
      repo: app.nodes,
      clock: app.clock,
      logger,
      relaySessions: () => relay?.sessions() ?? 0,
    });
    const checks = startDomainChecks({
      service: app.domains,
      clock: app.clock,
      logger,
      intervalMs: config.domainCheckInterval,
      exclusive: (run) => app.runExclusive('domain-checks', run),
    });
    // svc doctor's checks, now and hourly: /readyz, /metrics and a warning when one turns bad.
    app.startDoctor();
    // TLS reports (--tls-reports): counts flushed each minute, each day's reports after midnight.
    app.tlsReports.start();
    await stopSignal;
    // Before the store closes: a domain check waiting on DNS is cancelled, not waited for.
    await checks.stop();
    await retention.stop();
    await heartbeat.stop();
  } finally {
    // Stop accepting first; app.close() then lets deliveries in flight finish or return to the queue.
    await Promise.allSettled(started.map((close) => close()));
    await app.close();
    unmark();
    logger.info('stopped');
  }
}

/** Binds and releases each configured port (HTTP, relay, inbound) to learn that it is free. */
async function probePorts(config: Config): Promise<void> {
  const ports: [string, string, string, number][] = [
    ['the HTTP API', '--http-port', config.httpHost, config.httpPort],
    ['the SMTP relay', '--smtp-port', config.smtpHost, config.smtpPort],
    ['the inbound MX', '--inbound-port', config.inboundHost, config.inboundPort],
  ];
  for (const [what, flag, host, port] of ports) {
    // Port 0 is any free port; for the relay and the inbound MX it also means off.
    if (port === 0) continue;
    await listening(what, flag, host, port, () => bindAndRelease(host, port));
  }
}

function bindAndRelease(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ host, port }, () => probe.close(() => resolve()));
  });
}

/**
 * Runs `listen`; a port in use or not allowed becomes one line naming the setting
 * to change, instead of the bare socket error.
 */
async function listening<T>(
  what: string,
  flag: string,
  host: string,
  port: number,
  listen: () => Promise<T>,
): Promise<T> {
  try {
    return await listen();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === 'EADDRINUSE'
        ? 'the address is in use by another program'
        : code === 'EACCES'
          ? 'this user may not listen on ports below 1024'
          : code === 'EADDRNOTAVAIL'
            ? 'no interface of this machine has that address'
            : undefined;
    if (!why) throw e;
    throw new ConfigError(`${what} cannot listen on ${host}:${port}: ${why} (choose another ${flag})`);
  }
}

/** The SMTP relay on --smtp-host/--smtp-port (0 = off), with STARTTLS when a certificate is set. */
async function startRelay(
  app: App,
  config: Config,
  tls: { cert: Buffer; key: Buffer } | undefined,
  started: (() => Promise<unknown>)[],
): Promise<SmtpRelay | undefined> {
  if (config.smtpPort === 0) return undefined;
  const relay = createSmtpRelay(app, {
    ...RELAY_DEFAULTS,
    host: config.smtpHost,
    port: config.smtpPort,
    tls,
    plainAuth: isLoopback(config.smtpHost),
    maxSessions: config.smtpMaxSessions,
    idleTimeoutMs: config.smtpIdleTimeout,
  });
  started.push(() => relay.close());
  const port = await listening('the SMTP relay', '--smtp-port', config.smtpHost, config.smtpPort, () => relay.listen());
  app.metrics.watchRelay(() => relay.sessions());
  app.logger.info({ host: config.smtpHost, port, starttls: Boolean(tls) }, 'the SMTP relay is listening');
  return relay;
}

/** The inbound MX for bounces on --inbound-host/--inbound-port (0 = off). */
async function startInbound(
  app: App,
  config: Config,
  tls: { cert: Buffer; key: Buffer } | undefined,
  started: (() => Promise<unknown>)[],
): Promise<InboundListener | undefined> {
  if (config.inboundPort === 0) return undefined;
  const listener = createInboundListener(app, {
    host: config.inboundHost,
    port: config.inboundPort,
    tls,
    maxSessions: config.smtpMaxSessions,
    idleTimeoutMs: config.smtpIdleTimeout,
    closeTimeoutMs: RELAY_DEFAULTS.closeTimeoutMs,
  });
  started.push(() => listener.close());
  const port = await listening('the inbound MX', '--inbound-port', config.inboundHost, config.inboundPort, () =>
    listener.listen(),
  );
  app.logger.info({ host: config.inboundHost, port }, 'the inbound MX is listening');
  return listener;
}

/** On a store with no organization, `init` with generated credentials, printed once. */
async function firstStart(app: App): Promise<void> {
  // Nodes started together on an empty database: one creates the owner, the others go on.
  let first: Awaited<ReturnType<typeof initializeFirstStart>>;
  await app.runExclusive('first-start', async () => {
    first = await initializeFirstStart(app.accounts, app.keys, hostname());
  });
  if (!first) return;
  const { email, password, result: r } = first;
  process.stdout.write(
    [
      `First start on ${app.storeWhere}: created an owner, organization "Default" and project "Default".`,
      `  owner email:    ${email}`,
      `  owner password: ${password}`,
      `  TEST API key:   ${r.api_key.key}`,
      'These are shown once. Keep them somewhere safe.',
      '',
    ].join('\n'),
  );
}

function untilSignal(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      logger.info({ signal }, 'stopping: no new requests, finishing those in flight');
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    // A signal that came while the modules were still loading (main.ts held it).
    const early = takeEarlySignal();
    if (early) stop(early);
  });
}
