import type { Resolver } from 'node:dns/promises';
import { buildMessage } from './mime.ts';
import { mailParamsOf, type MailParams } from './raw-out.ts';
import { resolveCached, type Target } from './mx.ts';
import { failureOf, parseReply } from './reply.ts';
import type { ConnectTarget, Session, SmtpPool } from './smtp-pool.ts';
import { planDane } from './dane.ts';
import type { DnssecResolver } from './dnssec-resolver.ts';
import {
  outcome,
  outcomeBase,
  planAttempt,
  requiredFailure,
  tlsFailureType,
  type HostPlan,
  type OutcomeBase,
} from './tls-policy.ts';
import type { DeliveryJob, JobResult, RecipientResult, TlsOutcome, WorkerSettings } from './job.ts';

interface SendError extends Error {
  code?: string;
  command?: string;
  response?: string;
  responseCode?: number;
  rejectedErrors?: SendError[];
  recipient?: string;
}

export interface TransmitDeps {
  settings: WorkerSettings;
  resolver: Resolver;
  pool: SmtpPool;
  /** The validating resolver DANE trusts (`--dane-resolver`), when DANE is on. */
  dane?: DnssecResolver | null;
}

/** Connection-level failures move on to the next address or MX host; any reply to a command does not. */
const isConnectionLevel = (e: SendError) =>
  !e.command || e.command === 'CONN' || e.command === 'EHLO' || e.command === 'HELO';

function connectTargets(targets: Target[], plan: HostPlan[], s: WorkerSettings): ConnectTarget[] {
  return plan.flatMap((p) =>
    targets
      .find((t) => t.host === p.host)!
      .addresses.map((ip) => ({ host: p.host, ip, port: s.mxPort, secure: false, auth: null, tls: p.tls })),
  );
}

function relayTarget(relay: string): ConnectTarget {
  const u = new URL(relay);
  const secure = u.protocol === 'smtps:';
  const auth = u.username ? { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } : null;
  return {
    host: u.hostname,
    ip: u.hostname.replace(/^\[|\]$/g, ''),
    port: Number(u.port || (secure ? 465 : 587)),
    secure,
    auth,
    tls: 'opportunistic',
  };
}

const failAll = (recipients: string[], kind: RecipientResult['failure']): RecipientResult[] =>
  recipients.map((recipient) => ({ recipient, stage: 'connect', reply: null, failure: kind }));

/** The TLS policy a session met, as `emails show` and the events tell it. */
function policyOf(t: ConnectTarget, base: Pick<TlsOutcome, 'sts_mode'>): { tls_policy?: string } {
  if (typeof t.tls === 'object') return { tls_policy: 'dane' };
  if (t.tls === 'encrypted') return { tls_policy: 'dane (tls only)' };
  if (t.tls === 'verified') return { tls_policy: 'mta-sts enforce' };
  if (base.sts_mode === 'testing') return { tls_policy: 'mta-sts testing' };
  return {};
}

/** One SMTP transaction: a return path, the recipients it carries and the message. */
export interface Envelope {
  from: string;
  to: string[];
  raw: Buffer;
}

/**
 * A client's message passed through may carry 8-bit bytes (an 8bit body, UTF-8 fields): it goes
 * with BODY=8BITMIME, and with SMTPUTF8 when its header fields are UTF-8, where the server offers
 * them; a composed message is 7-bit (docs/decisions.md, "The relay passes messages through").
 */
const paramsOf = (job: DeliveryJob, e: Envelope): MailParams =>
  job.raw ? mailParamsOf(e.raw) : { eightBit: false, utf8: false };

/** What send() reads of nodemailer's SMTPConnection beyond its typings (nodemailer/lib/smtp-connection). */
interface ConnectionInternals {
  _supportedExtensions?: string[];
  _sendCommand(this: void, line: string, log?: string): void;
}

/**
 * Each recipient with its own return path when the job has them, else one transaction for
 * all; each recipient with its own copy of the message when the job has headers per recipient
 * (one-click unsubscribe names one recipient).
 */
async function envelopesOf(job: DeliveryJob, warn: (w: string) => void): Promise<Envelope[]> {
  const paths = job.return_paths;
  const own = job.recipient_headers;
  if (own?.length === job.recipients.length) {
    return Promise.all(
      job.recipients.map(async (recipient, i) => ({
        from: paths?.[i] ?? job.envelope_from,
        to: [recipient],
        raw: await buildMessage({ ...job, headers: { ...job.headers, ...own[i] } }, warn),
      })),
    );
  }
  const raw = await buildMessage(job, warn);
  if (!paths) return [{ from: job.envelope_from, to: job.recipients, raw }];
  return job.recipients.map((recipient, i) => ({ from: paths[i] ?? job.envelope_from, to: [recipient], raw }));
}

/** Maps a completed transaction (some recipients may have been refused at RCPT) to per-recipient results. */
function resultsOfSend(
  recipients: string[],
  info: { accepted: string[]; rejectedErrors?: SendError[]; response: string },
): RecipientResult[] {
  const refused = new Map((info.rejectedErrors ?? []).map((e) => [String(e.recipient).toLowerCase(), e]));
  return recipients.map((recipient) => {
    const e = refused.get(recipient.toLowerCase());
    if (e) return { recipient, stage: 'rcpt', reply: parseReply(e.response, e.responseCode), failure: null };
    return { recipient, stage: 'data', reply: parseReply(info.response, 250), failure: null };
  });
}

/** Maps a failed transaction to per-recipient results. */
function resultsOfError(recipients: string[], e: SendError): RecipientResult[] {
  if (e.rejectedErrors?.length && e.command === 'RCPT TO')
    return resultsOfSend(recipients, { accepted: [], rejectedErrors: e.rejectedErrors, response: '' });
  const reply = parseReply(e.response, e.responseCode);
  if (!reply) return failAll(recipients, failureOf(e));
  const stage =
    e.command === 'DATA' || e.command === 'end of DATA' ? 'data' : e.command === 'MAIL FROM' ? 'mail' : 'rcpt';
  return recipients.map((recipient) => ({ recipient, stage, reply, failure: null }));
}

type SendInfo = { accepted: string[]; rejectedErrors?: SendError[]; response: string };
type RawSend = (envelope: object, message: Buffer, cb: (err: SendError | null, info: SendInfo) => void) => void;

/**
 * ORCPT (RFC 3461 4.2) for a transaction of one recipient, where the server offers DSN (nodemailer
 * adds it only then): a relay passes it on, so a bounce from past a forward still names the address
 * svc sent to in its Original-Recipient (inbound/service.ts). xtext carries ASCII only; a UTF-8
 * address goes without it (RFC 6533's utf-8 type is not what nodemailer writes).
 */
const dsnOf = (to: string[]) =>
  to.length === 1 && /^[\x21-\x7e]+$/.test(to[0]!) ? { dsn: { orcpt: `rfc822;${to[0]}` } } : {};

/** One transaction on a pooled session (bench/smtp-client.ts times it). */
export function send(session: Session, envelope: Envelope, params: MailParams) {
  return new Promise<SendInfo>((resolve, reject) => {
    const go = () =>
      (session.conn.send.bind(session.conn) as unknown as RawSend)(
        { from: envelope.from, to: envelope.to, use8BitMime: params.eightBit, ...dsnOf(envelope.to) },
        envelope.raw,
        (err, info) => (err ? reject(err) : resolve(info)),
      );
    const conn = session.conn as unknown as ConnectionInternals;
    if (!params.utf8 || !conn._supportedExtensions?.includes('SMTPUTF8')) return go();
    // nodemailer asks for SMTPUTF8 only for a UTF-8 address; its MAIL FROM line is written
    // synchronously within send(), so the parameter is added to that one line here.
    const write = conn._sendCommand;
    conn._sendCommand = (line, log) =>
      write.call(
        conn as never,
        line.startsWith('MAIL FROM:') && !/ SMTPUTF8\b/.test(line) ? `${line} SMTPUTF8` : line,
        log,
      );
    try {
      go();
    } finally {
      conn._sendCommand = write;
    }
  });
}

/** RSET after a transaction refused midway, so the next can start; false when the session broke. */
function reset(session: Session): Promise<boolean> {
  return new Promise((resolve) => session.conn.reset((err) => resolve(!err)));
}

/**
 * Delivers one job: builds and signs the message once, finds the destination's
 * mail hosts (or the relay), and runs its transactions on one session (one for
 * every recipient of that destination, or one per recipient when each has its
 * own return path), trying the next address or host on connection-level
 * failures before any transaction was answered.
 */
export async function transmit(job: DeliveryJob, deps: TransmitDeps): Promise<JobResult> {
  const warnings: string[] = [];
  const base = { email_id: job.email_id, destination: job.destination, dkim_signed: job.dkim !== null, warnings };
  let envelopes: Envelope[];
  try {
    envelopes = await envelopesOf(job, (w) => warnings.push(w));
  } catch (e) {
    return {
      ...base,
      connection: null,
      results: [],
      internal_error: `message could not be built: ${(e as Error).message}`,
    };
  }
  let targets: ConnectTarget[];
  const tls: TlsOutcome[] = [];
  const base2 = { ...base, tls };
  const tlsBase = outcomeBase(job);
  const bases = new Map<string, OutcomeBase>();
  const baseOf = (host: string) => bases.get(host) ?? tlsBase;
  if (deps.settings.relay) targets = [relayTarget(deps.settings.relay)];
  else {
    const res = await resolveCached(deps.resolver, job.destination);
    if (!res.ok)
      return {
        ...base2,
        connection: null,
        results: failAll(job.recipients, { kind: res.kind, message: res.message }),
        internal_error: null,
      };
    const hosts = res.targets.map((t) => t.host);
    // DANE, where the destination's DNSSEC-signed TLSA records bind its hosts, before MTA-STS (RFC 8461 2).
    const dane =
      job.dane && deps.dane
        ? await planDane(deps.dane, job, hosts, deps.settings.mxPort, job.dane.at, planAttempt(job, hosts))
        : null;
    const plan = dane ?? planAttempt(job, hosts);
    for (const h of plan.hosts) if (h.base) bases.set(h.host, h.base);
    tls.push(...plan.refused);
    if (plan.deferral)
      return {
        ...base2,
        connection: null,
        results: failAll(job.recipients, { kind: 'tls', message: plan.deferral }),
        internal_error: null,
      };
    targets = connectTargets(res.targets, plan.hosts, deps.settings);
  }
  let last: RecipientResult[] = [];
  for (const t of targets) {
    let session;
    try {
      session = await deps.pool.acquire(t);
    } catch (e) {
      const err = e as SendError;
      const f = failureOf(err);
      const tlsType = tlsFailureType(err);
      if (tlsType && !deps.settings.relay) tls.push(outcome(baseOf(t.host), t.host, t.ip, tlsType, f.message));
      // Under an enforce policy a TLS failure is a deferral that says what the policy asked (RFC 8461 5).
      const message =
        tlsType && requiredFailure(job, t.host, t.tls, f.message)
          ? requiredFailure(job, t.host, t.tls, f.message)!
          : `${t.host} [${t.ip}]:${t.port}: ${f.message}`;
      last = failAll(job.recipients, { kind: tlsType ? 'tls' : f.kind, message });
      continue;
    }
    // A policy that requires TLS is never met in clear, whatever the SMTP client did (defence in depth).
    if (t.tls !== 'opportunistic' && !session.tls) {
      deps.pool.release(t, session, false);
      const message = requiredFailure(job, t.host, t.tls, `${t.host} offered no STARTTLS`)!;
      tls.push({ ...outcome(baseOf(t.host), t.host, t.ip, 'starttls-not-supported', message) });
      last = failAll(job.recipients, { kind: 'tls', message });
      continue;
    }
    if (!deps.settings.relay) {
      tls.push(
        session.tls
          ? { ...outcome(baseOf(t.host), t.host, t.ip, 'success', null), sending_ip: session.localAddress }
          : {
              ...outcome(baseOf(t.host), t.host, t.ip, 'starttls-not-supported', `${t.host} offered no STARTTLS`),
              sending_ip: session.localAddress,
            },
      );
    }
    const connection = {
      mx_host: t.host,
      ip: t.ip,
      tls: session.tls,
      tls_version: session.tlsVersion,
      local_ip: session.localAddress,
      ...policyOf(t, tlsBase),
    };
    const results: RecipientResult[] = [];
    const rest = (from: number) => envelopes.slice(from).flatMap((e) => e.to);
    let broken: SendError | null = null;
    let clean = true;
    for (let i = 0; i < envelopes.length; i++) {
      const envelope = envelopes[i]!;
      if (!clean && !(await reset(session))) {
        broken = Object.assign(new Error('the session broke after a refused transaction'), { code: 'ECONNECTION' });
        results.push(...failAll(rest(i), failureOf(broken)));
        break;
      }
      try {
        // The end of DATA was answered: the transaction is over and the session clean (no RSET needed).
        results.push(...resultsOfSend(envelope.to, await send(session, envelope, paramsOf(job, envelope))));
        clean = true;
      } catch (e) {
        const err = e as SendError;
        if (isConnectionLevel(err) && !err.responseCode) {
          broken = err;
          // Nothing answered on this host yet: the next address or host may do better.
          if (i === 0) break;
          results.push(...failAll(rest(i), failureOf(err)));
          break;
        }
        if (err.code === 'ECONNECTION') broken = err;
        results.push(...resultsOfError(envelope.to, err));
        if (broken) {
          results.push(...failAll(rest(i + 1), failureOf(err)));
          break;
        }
        clean = false;
      }
    }
    deps.pool.release(t, session, broken === null, clean);
    if (broken && results.length === 0) {
      last = failAll(job.recipients, failureOf(broken));
      continue;
    }
    return { ...base2, connection, results, internal_error: null };
  }
  return { ...base2, connection: null, results: last, internal_error: null };
}
