import type { Resolver } from 'node:dns/promises';
import { buildMessage } from './mime.ts';
import { resolveCached, type Target } from './mx.ts';
import { failureOf, parseReply } from './reply.ts';
import type { ConnectTarget, Session, SmtpPool } from './smtp-pool.ts';
import type { DeliveryJob, JobResult, RecipientResult, WorkerSettings } from './job.ts';

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
}

/** Connection-level failures move on to the next address or MX host; any reply to a command does not. */
const isConnectionLevel = (e: SendError) =>
  !e.command || e.command === 'CONN' || e.command === 'EHLO' || e.command === 'HELO';

function connectTargets(job: DeliveryJob, targets: Target[], s: WorkerSettings): ConnectTarget[] {
  return targets.flatMap((t) =>
    t.addresses.map((ip) => ({ host: t.host, ip, port: s.mxPort, secure: false, auth: null })),
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
  };
}

const failAll = (job: DeliveryJob, kind: RecipientResult['failure']): RecipientResult[] =>
  job.recipients.map((recipient) => ({ recipient, stage: 'connect', reply: null, failure: kind }));

/** Maps a completed transaction (some recipients may have been refused at RCPT) to per-recipient results. */
function resultsOfSend(
  job: DeliveryJob,
  info: { accepted: string[]; rejectedErrors?: SendError[]; response: string },
): RecipientResult[] {
  const refused = new Map((info.rejectedErrors ?? []).map((e) => [String(e.recipient).toLowerCase(), e]));
  return job.recipients.map((recipient) => {
    const e = refused.get(recipient.toLowerCase());
    if (e) return { recipient, stage: 'rcpt', reply: parseReply(e.response, e.responseCode), failure: null };
    return { recipient, stage: 'data', reply: parseReply(info.response, 250), failure: null };
  });
}

/** Maps a failed transaction to per-recipient results. */
function resultsOfError(job: DeliveryJob, e: SendError): RecipientResult[] {
  if (e.rejectedErrors?.length && e.command === 'RCPT TO')
    return resultsOfSend(job, { accepted: [], rejectedErrors: e.rejectedErrors, response: '' });
  const reply = parseReply(e.response, e.responseCode);
  if (!reply) return failAll(job, failureOf(e));
  const stage = e.command === 'DATA' || e.command === 'end of DATA' ? 'data' : 'rcpt';
  return job.recipients.map((recipient) => ({ recipient, stage, reply, failure: null }));
}

type SendInfo = { accepted: string[]; rejectedErrors?: SendError[]; response: string };
type RawSend = (envelope: object, message: Buffer, cb: (err: SendError | null, info: SendInfo) => void) => void;

function send(session: Session, job: DeliveryJob, raw: Buffer) {
  return new Promise<SendInfo>((resolve, reject) =>
    (session.conn.send.bind(session.conn) as unknown as RawSend)(
      { from: job.envelope_from, to: job.recipients },
      raw,
      (err, info) => (err ? reject(err) : resolve(info)),
    ),
  );
}

/**
 * Delivers one job: builds and signs the message, finds the destination's
 * mail hosts (or the relay), and runs one SMTP transaction with every
 * recipient of that destination, trying the next address or host on
 * connection-level failures.
 */
export async function transmit(job: DeliveryJob, deps: TransmitDeps): Promise<JobResult> {
  const base = { email_id: job.email_id, destination: job.destination, dkim_signed: job.dkim !== null };
  let raw: Buffer;
  try {
    raw = await buildMessage(job);
  } catch (e) {
    return {
      ...base,
      connection: null,
      results: [],
      internal_error: `message could not be built: ${(e as Error).message}`,
    };
  }
  let targets: ConnectTarget[];
  if (deps.settings.relay) targets = [relayTarget(deps.settings.relay)];
  else {
    const res = await resolveCached(deps.resolver, job.destination);
    if (!res.ok)
      return {
        ...base,
        connection: null,
        results: failAll(job, { kind: res.kind, message: res.message }),
        internal_error: null,
      };
    targets = connectTargets(job, res.targets, deps.settings);
  }
  let last: RecipientResult[] = [];
  for (const t of targets) {
    let session;
    try {
      session = await deps.pool.acquire(t);
    } catch (e) {
      const f = failureOf(e as SendError);
      last = failAll(job, { ...f, message: `${t.host} [${t.ip}]:${t.port}: ${f.message}` });
      continue;
    }
    const connection = { mx_host: t.host, ip: t.ip, tls: session.tls, tls_version: session.tlsVersion };
    try {
      const info = await send(session, job, raw);
      // The end of DATA was answered: the transaction is over and the session clean (no RSET needed).
      deps.pool.release(t, session, true, true);
      return { ...base, connection, results: resultsOfSend(job, info), internal_error: null };
    } catch (e) {
      const err = e as SendError;
      const healthy = Boolean(err.responseCode) && err.code !== 'ECONNECTION';
      deps.pool.release(t, session, healthy);
      if (isConnectionLevel(err) && !err.responseCode) {
        last = failAll(job, failureOf(err));
        continue;
      }
      return { ...base, connection, results: resultsOfError(job, err), internal_error: null };
    }
  }
  return { ...base, connection: null, results: last, internal_error: null };
}
