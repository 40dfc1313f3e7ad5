import { getCACertificates } from 'node:tls';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { ioTimeout, type Timer } from '../lib/clock.ts';
import { matchTlsa } from './dane-match.ts';
import { requirementKey, type TlsRequirement } from './tls-policy.ts';

export interface ConnectTarget {
  host: string;
  ip: string;
  port: number;
  /** Implicit TLS (smtps relay). */
  secure: boolean;
  auth: { user: string; pass: string } | null;
  /** What the destination's TLS policy asks of this session (tls-policy.ts). */
  tls: TlsRequirement;
}

export interface PoolSettings {
  hostname: string;
  tlsInsecure: boolean;
  /** Extra certificate authorities (PEM) trusted beside node's own. */
  ca?: string[];
  connectTimeoutMs: number;
  socketTimeoutMs: number;
  idleMs: number;
}

export interface Session {
  conn: SMTPConnection;
  tls: boolean;
  tlsVersion: string | null;
  /** The local address the session left from (what receivers evaluate SPF for). */
  localAddress: string | null;
  /** The TLSA record the server's chain matched (DANE), if one was required. */
  daneMatched?: string;
}

interface PeerCert {
  raw: Buffer;
  issuerCertificate?: PeerCert;
}

/** The chain the server sent, leaf first, as DER (node links each certificate to its issuer). */
function chainOf(socket: { getPeerCertificate?: (detailed: boolean) => PeerCert | null } | undefined): Buffer[] {
  const chain: Buffer[] = [];
  let cert = socket?.getPeerCertificate?.(true) ?? null;
  while (cert?.raw && !chain.some((c) => c.equals(cert!.raw))) {
    chain.push(cert.raw);
    cert = cert.issuerCertificate ?? null;
  }
  return chain;
}

const keyOf = (t: ConnectTarget) => `${t.ip}|${t.port}|${t.host}|${requirementKey(t.tls)}`;

function open(t: ConnectTarget, s: PoolSettings): Promise<Session> {
  // Verified TLS (an MTA-STS enforce policy) is required and checked whatever smtp-tls-insecure
  // says; DANE checks the chain against TLSA records itself, once the session is up.
  const verified = t.tls === 'verified';
  const required = t.tls !== 'opportunistic';
  const dane = typeof t.tls === 'object' ? t.tls : null;
  const conn = new SMTPConnection({
    host: t.ip,
    port: t.port,
    secure: t.secure,
    name: s.hostname,
    servername: t.host,
    connectionTimeout: s.connectTimeoutMs,
    greetingTimeout: s.connectTimeoutMs,
    socketTimeout: s.socketTimeoutMs,
    requireTLS: required,
    tls: {
      rejectUnauthorized: verified || (t.tls === 'opportunistic' && !s.tlsInsecure),
      servername: t.host,
      ...(s.ca?.length ? { ca: [...getCACertificates('default'), ...s.ca] } : {}),
    },
  });
  return new Promise((resolve, reject) => {
    conn.once('error', reject);
    conn.connect(() => {
      const finish = () => {
        conn.removeListener('error', reject);
        // A pooled connection that fails later is simply dropped; errors surface through send().
        conn.on('error', () => {});
        const socket = (conn as unknown as { _socket?: { getProtocol?: () => string | null; localAddress?: string } })
          ._socket;
        const tlsVersion = conn.secure ? (socket?.getProtocol?.() ?? null) : null;
        let daneMatched: string | undefined;
        if (dane) {
          const m = matchTlsa(dane.records, chainOf(socket as never), dane.names, new Date(dane.at));
          if (!m.ok) {
            conn.close();
            return reject(Object.assign(new Error(m.reason), { code: 'EDANE', tlsResult: m.result }));
          }
          daneMatched = m.matched;
        }
        resolve({
          conn,
          tls: conn.secure,
          tlsVersion,
          localAddress: socket?.localAddress ?? null,
          ...(daneMatched ? { daneMatched } : {}),
        });
      };
      if (!t.auth) return finish();
      conn.login(t.auth, (err) => (err ? reject(err) : finish()));
    });
  });
}

/**
 * Pooled SMTP sessions per (address, port, host), reused across messages (after
 * RSET when a transaction was refused midway) and closed after `idleMs` unused,
 * so a destination is not re-dialled for every message.
 */
export function createSmtpPool(settings: PoolSettings) {
  const idle = new Map<string, { session: Session; timer: Timer }[]>();

  function take(key: string): Session | undefined {
    const list = idle.get(key);
    while (list?.length) {
      const { session, timer } = list.pop()!;
      timer.cancel();
      if (!(session.conn as unknown as { _destroyed?: boolean })._destroyed) return session;
    }
    return undefined;
  }

  return {
    /** An idle session to `t`, or a new one. */
    async acquire(t: ConnectTarget): Promise<Session> {
      return take(keyOf(t)) ?? open(t, settings);
    },
    /**
     * Returns a healthy session for reuse; a broken one is closed. `clean`: the
     * transaction ended with the reply to the end of DATA, so the session is
     * already back at its initial state and is reused as is (as nodemailer's own
     * pool does); otherwise (a transaction refused midway) it is reset with RSET first.
     */
    release(t: ConnectTarget, session: Session, healthy: boolean, clean = false): void {
      if (!healthy) return session.conn.close();
      const park = () => {
        const key = keyOf(t);
        const timer = ioTimeout(() => {
          idle.set(
            key,
            (idle.get(key) ?? []).filter((e) => e.session !== session),
          );
          session.conn.quit();
        }, settings.idleMs);
        idle.set(key, [...(idle.get(key) ?? []), { session, timer }]);
      };
      if (clean) return park();
      session.conn.reset((err) => (err ? session.conn.close() : park()));
    },
    closeAll(): void {
      for (const list of idle.values()) {
        for (const { session, timer } of list) {
          timer.cancel();
          session.conn.quit();
        }
      }
      idle.clear();
    },
  };
}

export type SmtpPool = ReturnType<typeof createSmtpPool>;
