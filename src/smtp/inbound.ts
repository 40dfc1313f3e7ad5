import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { App } from '../app.ts';
import { AppError, type ErrorCode } from '../errors.ts';
import { reply, smtpReplyOf, useOwnEnhancedCodes } from './replies.ts';
import { collectData, createSessionHolds, listenOn } from './server-kit.ts';

/** Bounces and reports are small; a message over this is refused (552), never read whole into memory. */
export const INBOUND_MAX_BYTES = 10 * 1024 * 1024;

/** Errors the inbound listener answers with their own reply; any other is logged and answered 451. */
const ANSWERED_CODES = new Set<ErrorCode>(['server_busy', 'report_refused', 'report_limit_reached']);

export interface InboundOptions {
  host: string;
  port: number;
  tls?: { cert: Buffer; key: Buffer } | undefined;
  maxSessions: number;
  idleTimeoutMs: number;
  closeTimeoutMs: number;
}

export interface InboundListener {
  listen(): Promise<number>;
  close(): Promise<void>;
}

/**
 * The inbound MX of the return-path domains (issue 15, `--inbound-port`): it takes mail
 * only for return paths of emails svc sent (550 5.1.1 for any other address: no open
 * relay, no mailbox), without AUTH, and hands each message to the inbound service,
 * which applies the bounces it reports. 250 is answered once they are committed.
 */
export function createInboundListener(app: App, opts: InboundOptions): InboundListener {
  // Anyone may send here without logging in: its messages are held in the server's budget
  // of bytes in flight like the API's and the relay's (452 4.3.1 past it).
  const holds = createSessionHolds(app.inFlight);

  function onMailFrom(address: { args?: unknown }, session: SMTPServerSession, done: (err?: Error | null) => void) {
    try {
      holds.declare(session, address.args);
      done();
    } catch (e) {
      done(smtpReplyOf(e));
    }
  }

  function onRcptTo(address: { address: string }, _session: SMTPServerSession, done: (err?: Error | null) => void) {
    app.inbound.accepts(address.address).then(
      (ok) => done(ok ? null : reply(550, '5.1.1', `${address.address}: no such user here`)),
      () => done(reply(451, '4.3.0', 'Temporary failure, try again later')),
    );
  }

  function onData(
    stream: SMTPServerDataStream,
    session: SMTPServerSession,
    done: (err?: Error | null, message?: string) => void,
  ) {
    const rcptTo = session.envelope.rcptTo.map((r) => r.address);
    collectData(
      stream,
      (err, message) => {
        holds.release(session);
        done(err, message);
      },
      async (raw) => {
        await app.inbound.process(raw, rcptTo, session.remoteAddress);
        return 'Ok';
      },
      (err) => {
        // A report that cannot be read gets its reason (554 5.6.0), so its sender stops retrying it;
        // one past its reporter's daily limit gets 452 4.3.1, retried tomorrow.
        if (err instanceof AppError && ANSWERED_CODES.has(err.code)) return smtpReplyOf(err);
        app.logger.error({ err, rcpt_to: rcptTo }, 'inbound: a message could not be processed');
        return reply(451, '4.3.0', 'Temporary failure, try again later');
      },
      holds.forData(session),
    );
  }

  const server = new SMTPServer({
    name: app.hostname,
    // smtp-server writes 'ESMTP' before the banner: the greeting is '220 <host> ESMTP svc'.
    banner: 'svc',
    size: INBOUND_MAX_BYTES,
    rejectOversized: true,
    maxRecipients: 10,
    maxClients: opts.maxSessions,
    socketTimeout: opts.idleTimeoutMs,
    closeTimeout: opts.closeTimeoutMs,
    authOptional: true,
    hideENHANCEDSTATUSCODES: false,
    hideDSN: true,
    hideREQUIRETLS: true,
    disabledCommands: opts.tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(opts.tls ? { cert: opts.tls.cert, key: opts.tls.key } : {}),
    disableReverseLookup: true,
    logger: false,
    onMailFrom,
    onRcptTo,
    onData,
    onClose: (session) => holds.release(session),
  });
  useOwnEnhancedCodes(server);
  server.on('error', (err) => app.logger.warn({ err }, 'inbound: a session failed'));
  return {
    listen: () => listenOn(server, opts.host, opts.port),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
