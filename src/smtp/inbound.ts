import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { App } from '../app.ts';
import { AppError, type ErrorCode } from '../errors.ts';
import { RECEIVING_LIMITS } from '../receiving/limits.ts';
import { reply, smtpReplyOf, useOwnEnhancedCodes } from './replies.ts';
import { collectData, createSessionHolds, listenOn } from './server-kit.ts';

/** Bounces and reports are small; one over this is refused (552), never read whole into memory. */
export const INBOUND_MAX_BYTES = 10 * 1024 * 1024;

/**
 * Errors the inbound listener answers with their own reply; any other is logged and answered 451.
 * A routed message's checks (receiving/guard.ts) answer its size, its structure and a loop.
 */
const ANSWERED_CODES = new Set<ErrorCode>([
  'server_busy',
  'report_refused',
  'report_limit_reached',
  'message_too_large',
  'attachment_too_large',
  'invalid_request',
  'request_validation_failed',
  'mail_loop',
  'inbound_rate_limited',
  'storage_full',
]);

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
 * The inbound MX (issue 15, `--inbound-port`): it takes mail for return paths of emails svc
 * sent, and for the addresses routes take on receiving domains (issue 34); 550 5.1.1 for any
 * other address (no open relay, no mailbox), without AUTH. A routed message goes to the
 * receiving service, a bounce to the inbound service; 250 is answered once they are committed.
 * The SIZE is a received message's (25 MiB); a bounce or report is held to 10 MiB.
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

  function onRcptTo(address: { address: string }, session: SMTPServerSession, done: (err?: Error | null) => void) {
    const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address || null : null;
    const client = { remoteIp: session.remoteAddress, mailFrom };
    app.receiving
      .accepts(address.address, client)
      .then((routed) => routed || app.inbound.accepts(address.address))
      .then(
        (ok) => done(ok ? null : reply(550, '5.1.1', `${address.address}: no such user here`)),
        (e: unknown) =>
          done(
            e instanceof AppError && e.code === 'inbound_rate_limited'
              ? smtpReplyOf(e)
              : reply(451, '4.3.0', 'Temporary failure, try again later'),
          ),
      );
  }

  /** Routed recipients go to the receiving service, the others (return paths, report addresses) to the inbound one. */
  async function received(raw: Buffer, session: SMTPServerSession, rcptTo: string[]): Promise<string> {
    const routed = new Set((await app.receiving.routes(rcptTo)).map((m) => m.address));
    const others = rcptTo.filter((r) => !routed.has(r));
    if (others.length && raw.length > INBOUND_MAX_BYTES) {
      throw new AppError('message_too_large', `A bounce or report is at most ${INBOUND_MAX_BYTES / 1024 / 1024} MiB`);
    }
    if (routed.size) {
      const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address || null : null;
      const envelope = {
        mailFrom,
        rcptTo: [...routed],
        remoteIp: session.remoteAddress,
        helo: session.hostNameAppearsAs,
      };
      await app.receiving.receive(raw, envelope);
    }
    if (others.length) await app.inbound.process(raw, others, session.remoteAddress);
    return 'Ok';
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
      (raw) => received(raw, session, rcptTo),
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
    size: RECEIVING_LIMITS.messageBytes,
    rejectOversized: true,
    // RFC 5321 section 4.5.3.1.8: at least 100 recipients are to be taken.
    maxRecipients: 100,
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
