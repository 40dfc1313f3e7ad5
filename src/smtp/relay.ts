import { isIP } from 'node:net';
import {
  SMTPServer,
  type SMTPServerAuthentication,
  type SMTPServerDataStream,
  type SMTPServerSession,
} from 'smtp-server';
import type { App } from '../app.ts';
import { AppError } from '../errors.ts';
import { isEmailAddress } from '../emails/index.ts';
import { assertAllowed, type KeyPrincipal } from '../keys/index.ts';
import { LIMITS, requestRateOf } from '../limits/index.ts';
import { parseMessage, type Envelope } from './message.ts';
import { reply, smtpReplyOf, useOwnEnhancedCodes, type SmtpReplyError } from './replies.ts';
import { collectData, createSessionHolds, listenOn } from './server-kit.ts';

/** The contract's SMTP username: the password is an API key (interface.md, "SMTP relay"). */
export const RELAY_USERNAME = 'apikey';

export interface RelayOptions {
  host: string;
  port: number;
  /** A certificate offers STARTTLS. */
  tls?: { cert: Buffer; key: Buffer } | undefined;
  /** AUTH without TLS: `svc serve` allows it only on a loopback listener (isLoopback). */
  plainAuth: boolean;
  /** Sessions at once; the next one is answered 421 and closed. */
  maxSessions: number;
  /** A session idle this long is answered 421 and closed. */
  idleTimeoutMs: number;
  /** How long a stopping relay lets sessions finish before it closes them. */
  closeTimeoutMs: number;
  /** Failed AUTH per client IP in a window, then 454 until the window ends. */
  authFailures: { perIp: number; windowMs: number };
}

/** The defaults of `svc serve`: RFC 5321 §4.5.3.2.7 gives a server 5 minutes of patience. */
export const RELAY_DEFAULTS = {
  idleTimeoutMs: 5 * 60_000,
  closeTimeoutMs: 10_000,
  authFailures: { perIp: 10, windowMs: 15 * 60_000 },
} as const;

export interface SmtpRelay {
  /** Starts listening; resolves with the port (a real one when `port` was 0). */
  listen(): Promise<number>;
  /** Stops taking sessions, lets those in flight finish for closeTimeoutMs, then closes them. */
  close(): Promise<void>;
  /** Sessions open now. */
  sessions(): number;
}

interface RelayUser {
  token: string;
  /** The key found at the current message's MAIL FROM. */
  principal?: KeyPrincipal;
}

const LOOPBACK = new Set(['localhost', '::1']);
/** A listen address only this machine can reach. */
export const isLoopback = (host: string) => LOOPBACK.has(host) || (isIP(host) === 4 && host.startsWith('127.'));

/**
 * The SMTP relay (issue 14): a door like the HTTP API. A session authenticates with
 * user `apikey` and an API key; each message is read for the send rules (its header block
 * and MIME structure) and given to the same send use case as written, and answered 250
 * only once its transaction is committed (issue 33). Every refusal is the error registry's
 * SMTP reply (errors.ts).
 */
export function createSmtpRelay(app: App, opts: RelayOptions): SmtpRelay {
  const failures = app.failureWindows('smtp-auth', opts.authFailures.windowMs);
  const insecureAuth = opts.plainAuth;
  const holds = createSessionHolds(app.inFlight);

  /**
   * The session's key, checked again at each MAIL FROM (one message is one request):
   * a revocation or a narrowed permission applies to an open session's next message.
   */
  async function authorize(session: SMTPServerSession): Promise<KeyPrincipal> {
    const user = session.user as RelayUser | undefined;
    if (!user) throw new AppError('unauthorized', 'Authentication required');
    const principal = await app.keys.authenticate(user.token);
    assertAllowed(principal.permissions, 'send');
    user.principal = principal;
    return principal;
  }

  /** The key as MAIL FROM found it, for the rest of that message. */
  function principalOf(session: SMTPServerSession): KeyPrincipal {
    const principal = (session.user as RelayUser | undefined)?.principal;
    if (!principal) throw new AppError('unauthorized', 'Authentication required');
    return principal;
  }

  function onAuth(
    auth: SMTPServerAuthentication,
    session: SMTPServerSession,
    done: (err: Error | null | undefined, response?: { user: RelayUser }) => void,
  ): void {
    authenticate(auth, session.remoteAddress).then(
      (user) => done(null, { user }),
      // A reply made here goes as it is; anything else (the store unreachable) as the registry says.
      (e: unknown) =>
        done(typeof (e as { responseCode?: unknown }).responseCode === 'number' ? (e as Error) : smtpReplyOf(e)),
    );
  }

  /** The session's user, or the reply that refuses it (a guess is counted against its IP). */
  async function authenticate(auth: SMTPServerAuthentication, ip: string): Promise<RelayUser> {
    const wait = await failures.waitMs(ip, opts.authFailures.perIp);
    if (wait > 0) {
      app.logger.warn({ ip }, 'SMTP relay: AUTH refused, too many failures from this address');
      throw reply(454, '4.7.0', `Too many failed authentications from ${ip}; try again in ${Math.ceil(wait / 1000)} s`);
    }
    const refused = async (e: unknown): Promise<never> => {
      await failures.recordFailure(ip).catch((err: unknown) => app.logger.warn({ err }, 'AUTH failure not counted'));
      app.logger.info({ ip, username: auth.username }, 'SMTP relay: AUTH failed');
      throw smtpReplyOf(e);
    };
    if (auth.username !== RELAY_USERNAME) {
      return refused(new AppError('unauthorized', `The username is "${RELAY_USERNAME}" and the password an API key`));
    }
    let principal: KeyPrincipal;
    try {
      principal = await app.keys.authenticate(auth.password ?? undefined);
    } catch (e) {
      return refused(e);
    }
    try {
      assertAllowed(principal.permissions, 'send');
    } catch {
      // The key is right, it only may not send: not a guess, so not counted.
      throw reply(535, '5.7.8', `This API key is ${principal.permissions} and cannot send email`);
    }
    return { token: auth.password! };
  }

  function onMailFrom(
    address: { args?: unknown },
    session: SMTPServerSession,
    done: (err?: Error | null) => void,
  ): void {
    const check = async () => {
      // Held before the key is looked up: a session closing during that wait gives it back.
      holds.declare(session, address.args);
      const principal = await authorize(session);
      // One message is one request against the key's rate (decisions.md, "Plans, volume and rate limits").
      const limit = requestRateOf(principal.plan, principal.rate_limit_per_second, app.config.rateLimitPerSecond);
      if (limit !== null && !(await app.rateLimiter.hit(principal.id, limit)).allowed) {
        throw new AppError('rps_exceeded', `More than ${limit} messages per second for this key; try again shortly`);
      }
    };
    check().then(
      () => done(),
      (e: unknown) => {
        // A refused MAIL FROM holds nothing.
        holds.release(session);
        done(smtpReplyOf(e));
      },
    );
  }

  function onRcptTo(
    address: { address: string },
    session: SMTPServerSession,
    done: (err?: Error | null) => void,
  ): void {
    let principal: KeyPrincipal;
    try {
      principal = principalOf(session);
    } catch (e) {
      return done(smtpReplyOf(e));
    }
    // Refused here rather than after the whole DATA: the API would refuse the message for it.
    if (!isEmailAddress(address.address)) {
      return done(reply(553, '5.1.3', `${address.address} is not an address svc can send to`));
    }
    // A suppressed recipient is refused here, so the client learns it per address
    // (the API lists it in skipped_recipients; all suppressed is 550 5.1.1 there too).
    app.emails.suppressionOf(principal, address.address).then(
      (reason) =>
        done(reason ? reply(550, '5.1.1', `${address.address} is on the suppression list (${reason})`) : null),
      (e: unknown) => done(smtpReplyOf(e)),
    );
  }

  function onData(
    stream: SMTPServerDataStream,
    session: SMTPServerSession,
    done: (err?: Error | null, message?: string) => void,
  ): void {
    const envelope = {
      mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address || null : null,
      rcptTo: session.envelope.rcptTo.map((r) => r.address),
    };
    // Held until the message is answered: it is in memory until parsed and committed.
    const hold = holds.forData(session);
    collectData(
      stream,
      (err, message) => {
        holds.release(session);
        done(err, message);
      },
      async (raw) => `Ok: queued as ${await accept(raw, envelope, session)}`,
      (e) => failureOf(e, session),
      hold,
    );
  }

  /**
   * A message passes through as written (issue 33): stored and delivered as its client wrote it.
   * Only a project that tracks relayed mail (`relay_tracking` with click or open tracking) has it
   * parsed and rebuilt, since tracking rewrites its HTML.
   */
  async function accept(raw: Buffer, envelope: Envelope, session: SMTPServerSession): Promise<string> {
    const principal = principalOf(session);
    if (principal.env === 'LIVE' && (await tracksRelayed(principal.project_id))) {
      const { request, messageId, contentIds } = await parseMessage(raw, envelope);
      return (await app.emails.sendRelayed(principal, request, { messageId, contentIds })).id;
    }
    return (await app.emails.sendRelayedRaw(principal, raw, envelope)).id;
  }

  async function tracksRelayed(projectId: string): Promise<boolean> {
    const s = await app.accounts.getProjectSettings(projectId);
    return s.relay_tracking && (s.click_tracking || s.open_tracking);
  }

  function failureOf(e: unknown, session: SMTPServerSession): SmtpReplyError {
    if (!(e instanceof AppError)) app.logger.error({ err: e, session: session.id }, 'SMTP relay: a message failed');
    return smtpReplyOf(e);
  }

  const server = new SMTPServer({
    name: app.hostname,
    // smtp-server writes 'ESMTP' before the banner: the greeting is '220 <host> ESMTP svc relay'.
    banner: 'svc relay',
    size: LIMITS.messageBytes,
    rejectOversized: true,
    maxRecipients: LIMITS.recipientsPerEmail,
    maxClients: opts.maxSessions,
    socketTimeout: opts.idleTimeoutMs,
    closeTimeout: opts.closeTimeoutMs,
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: insecureAuth,
    hideENHANCEDSTATUSCODES: false,
    hideDSN: true,
    hideREQUIRETLS: true,
    disabledCommands: opts.tls ? [] : ['STARTTLS'],
    ...(opts.tls ? { cert: opts.tls.cert, key: opts.tls.key } : {}),
    disableReverseLookup: true,
    logger: false,
    onAuth,
    onMailFrom,
    onRcptTo,
    onData,
    onClose: (session) => holds.release(session),
  });
  useOwnEnhancedCodes(server);
  server.on('error', (err) => app.logger.warn({ err }, 'SMTP relay: a session failed'));
  if (!opts.tls && !insecureAuth) {
    app.logger.warn(
      { host: opts.host },
      'the SMTP relay listens beyond loopback without --tls-cert/--tls-key: clients cannot authenticate',
    );
  }

  return {
    listen: () => listenOn(server, opts.host, opts.port),
    close: () => new Promise((resolve) => server.close(() => resolve())),
    sessions: () => server.connections.size,
  };
}
