import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import type { AddressInfo } from 'node:net';

export interface Received {
  from: string;
  to: string[];
  raw: Buffer;
  secure: boolean;
  /** The name the sender gave in EHLO. */
  helo: string;
  /** The address the message came from. */
  remoteAddress: string;
  /** The MAIL FROM parameters, upper-case names (`BODY`: '8BITMIME', `SMTPUTF8`: true). */
  mailParams: Record<string, string | true>;
  /** Each recipient's ORCPT parameter (RFC 3461, as sent: xtext), in the order of `to`; null without one. */
  orcpt: (string | null)[];
  /** When the peer had the whole message (wall clock, ms): a schedule's test reads it against the sender's time. */
  dataEndedAt: number;
}

/** What the peer does with a recipient (chosen by the test, per address). */
export type Behaviour =
  | { rcpt: [number, string] }
  | { data: [number, string] }
  | { greylist: true }
  | { disconnectInData: true }
  | { mailFrom: [number, string] };

/** The behaviour key that answers every MAIL FROM while it is set ({ mailFrom: [code, text] }). */
export const MAIL_FROM = '<mail from>';

export interface MxPeer {
  port: number;
  received: Received[];
  /** Per recipient address (lower-case); others are accepted. */
  behaviour: Map<string, Behaviour>;
  /** The most messages that were being received at once (DATA begun, not yet answered). */
  peakInData(): number;
  /** The EHLO names of the senders of the messages being received now. */
  inDataFrom(): string[];
  close(): Promise<void>;
}

function fail(code: number, text: string): Error {
  return Object.assign(new Error(text), { responseCode: code });
}

/**
 * A real SMTP server on loopback that plays a recipient's mail server:
 * accepts, refuses at RCPT or after DATA with chosen replies, greylists once,
 * or hangs up in the middle of DATA. With `tls` it offers STARTTLS.
 */
export interface MxPeerOptions {
  tls?: { key: string; cert: string };
  /** Require AUTH with these credentials (a smarthost). */
  auth?: { user: string; pass: string };
  /** Wait this long before answering the end of DATA (keeps a transaction in flight); read per message. */
  dataDelayMs?: number | (() => number);
  /** Certificates by the name the client asks for (SNI); others get `tls`. */
  sni?: Record<string, { key: string; cert: string }>;
  /** Listen here (another loopback address, on the port of a peer already listening there). */
  listen?: { host: string; port: number };
}

export async function startMxPeer(opts: MxPeerOptions = {}): Promise<MxPeer> {
  const received: Received[] = [];
  const behaviour = new Map<string, Behaviour>();
  const greylisted = new Set<string>();
  let inData = 0;
  let peak = 0;
  const receiving = new Map<string, string>();
  const server = new SMTPServer({
    authOptional: !opts.auth,
    allowInsecureAuth: true,
    disabledCommands: [...(opts.auth ? [] : ['AUTH']), ...(opts.tls ? [] : ['STARTTLS'])],
    onAuth(auth, _session, cb) {
      if (opts.auth && auth.username === opts.auth.user && auth.password === opts.auth.pass)
        return cb(null, { user: auth.username });
      cb(Object.assign(new Error('5.7.8 Authentication credentials invalid'), { responseCode: 535 }));
    },
    ...(opts.tls ? { key: opts.tls.key, cert: opts.tls.cert } : {}),
    ...(opts.sni ? { sniOptions: opts.sni } : {}),
    logger: false,
    // Offers DSN (RFC 3461), as Postfix does by default: svc then names each recipient in ORCPT.
    hideDSN: false,
    onMailFrom(_address, _session, cb) {
      const b = behaviour.get(MAIL_FROM);
      if (b && 'mailFrom' in b) return cb(fail(b.mailFrom[0], b.mailFrom[1]));
      cb();
    },
    onRcptTo(address, _session, cb) {
      const b = behaviour.get(address.address.toLowerCase());
      if (b && 'rcpt' in b) return cb(fail(b.rcpt[0], b.rcpt[1]));
      if (b && 'greylist' in b && !greylisted.has(address.address.toLowerCase())) {
        greylisted.add(address.address.toLowerCase());
        return cb(fail(451, '4.7.1 Greylisted, please try again later'));
      }
      cb();
    },
    onData(stream, session: SMTPServerSession, cb) {
      const to = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
      peak = Math.max(peak, ++inData);
      receiving.set(session.id, String(session.hostNameAppearsAs));
      const answer = (err?: Error) => {
        inData--;
        receiving.delete(session.id);
        cb(err ?? null);
      };
      const chunks: Buffer[] = [];
      const b = to.map((a) => behaviour.get(a)).find((x) => x && ('data' in x || 'disconnectInData' in x));
      if (b && 'disconnectInData' in b) {
        // Hang up in the middle of DATA: the sender cannot know whether the message arrived.
        const conns = (server as unknown as { connections: Set<{ id: string; _socket: { destroy(): void } }> })
          .connections;
        stream.once('data', () => [...conns].find((c) => c.id === session.id)?._socket.destroy());
      }
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => void finish(Date.now()));
      const finish = async (dataEndedAt: number) => {
        const delay = typeof opts.dataDelayMs === 'function' ? opts.dataDelayMs() : opts.dataDelayMs;
        if (delay) await new Promise((r) => setTimeout(r, delay));
        if (b && 'data' in b) return answer(fail(b.data[0], b.data[1]));
        const mailFrom = session.envelope.mailFrom;
        received.push({
          from: mailFrom ? mailFrom.address : '',
          to,
          raw: Buffer.concat(chunks),
          secure: session.secure,
          helo: String(session.hostNameAppearsAs),
          remoteAddress: session.remoteAddress,
          mailParams: Object.fromEntries(
            Object.entries((mailFrom ? mailFrom.args : null) || {}).map(([k, v]) => [k.toUpperCase(), v]),
          ),
          dataEndedAt,
          orcpt: session.envelope.rcptTo.map((r) => (r as { dsn?: { orcpt?: string } }).dsn?.orcpt ?? null),
        });
        answer();
      };
    },
  });
  // A sender killed mid-transaction resets the socket; that is expected here, not a test failure.
  server.on('error', () => {});
  await new Promise<void>((resolve) =>
    server.listen(opts.listen?.port ?? 0, opts.listen?.host ?? '127.0.0.1', resolve),
  );
  return {
    port: (server.server.address() as AddressInfo).port,
    received,
    behaviour,
    peakInData: () => peak,
    inDataFrom: () => [...receiving.values()],
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
