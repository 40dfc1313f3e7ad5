// TLS reporting (RFC 8460; issue 32, item 3): outcomes counted per policy domain and UTC day,
// flushed to the store each minute, and each day's report sent after the next midnight to the
// rua of the domain's `_smtp._tls` record, by HTTPS POST and by mail through svc's own queue.
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { Clock, Timer } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import { notOverlapping } from '../lib/periodic.ts';
import { countRowOf, createTally, dayOf, type ObservedTls } from './counts.ts';
import type { ReportMail } from './mail.ts';
import { parseTlsRptRecords, type Rua } from './record.ts';
import { buildReport, mailLabels } from './report.ts';
import { dueDay, finishPlan, sendDelayMs, type DestinationResult } from './schedule.ts';
import type { ClaimedReport, TlsrptStore } from './store.ts';

/** Counts reach the store this often (and at stop). */
export const FLUSH_MS = 60_000;
/** Due reports are looked for this often. */
export const TICK_MS = 5 * 60_000;

export interface TlsReportsDeps {
  repo: TlsrptStore;
  clock: Clock;
  logger: Logger;
  /** --tls-reports: the one switch; off, nothing is counted in the store and nothing sent. */
  enabled: boolean;
  /** organization-name and submitter: the server's host name. */
  submitter: string;
  /** --tls-reports-from: without it a mailto rua is skipped. */
  from: string | undefined;
  /** The TXT strings of a name (each record's chunks joined); [] when it has none. */
  lookupTxt(name: string): Promise<string[]>;
  /** POSTs a gzipped report; resolves to the HTTP status. */
  post(url: string, body: Buffer): Promise<number>;
  /** Accepts a report email; resolves to its id. */
  mail(m: ReportMail): Promise<string>;
  /** Always told of each outcome (svc_tls_sessions_total). */
  count?: (policyType: string, result: string) => void;
  /** Where between the least and the most delay (schedule.ts sendDelayMs) this server waits after midnight; random unless a test sets it. */
  delayFraction?: number;
}

/** The TLS reports of a server: `observe` is the delivery engine's observeTls; `svc serve` starts the rest. */
export function createTlsReports(deps: TlsReportsDeps) {
  const { repo, clock, logger } = deps;
  const tally = createTally();
  const delayMs = sendDelayMs(deps.delayFraction ?? Math.random());
  let timers: Timer[] = [];
  const running = new Set<Promise<void>>();

  async function flush(): Promise<void> {
    const rows = tally.drain();
    if (rows.length === 0) return;
    try {
      await repo.addCounts(rows);
    } catch (err) {
      tally.restore(rows);
      logger.warn({ err }, 'TLS report counts could not be written; kept for the next flush');
    }
  }

  /** Sends what is due now: each open domain of the due day that this node claims. */
  async function sendDue(): Promise<void> {
    const day = dueDay(clock.now(), delayMs);
    if (!deps.enabled || day === undefined) return;
    for (const domain of await repo.listOpenDomains(day)) {
      const claimed = await repo.claimReport(day, domain, clock.now(), newReportId(day));
      if (claimed) await sendOne(claimed);
    }
  }

  function newReportId(day: string): string {
    return `${day}.${randomBytes(8).toString('hex')}@${deps.submitter}`;
  }

  async function sendOne(c: ClaimedReport): Promise<void> {
    const fields = { day: c.day, policy_domain: c.policy_domain, report_id: c.report_id, attempt: c.attempts };
    let record: Awaited<ReturnType<typeof lookup>>;
    try {
      record = await lookup(c.policy_domain);
    } catch (err) {
      return finish(c, [{ uri: `_smtp._tls.${c.policy_domain}`, outcome: 'failed', detail: messageOf(err) }], fields);
    }
    if ('problem' in record) {
      await repo.finishReport(
        c.day,
        c.policy_domain,
        { status: 'skipped', next_attempt_at: null, destinations: [], detail: record.problem },
        new Date(clock.now()).toISOString(),
      );
      logger.info({ ...fields, reason: record.problem }, 'TLS report not sent: no usable _smtp._tls record');
      return;
    }
    const rows = await repo.listCounts(c.day, c.policy_domain);
    const labels = { day: c.day, policyDomain: c.policy_domain, reportId: c.report_id, submitter: deps.submitter };
    const json = JSON.stringify(buildReport({ ...labels, contact: deps.from ?? `postmaster@${deps.submitter}`, rows }));
    const gz = gzipSync(json);
    const done = new Map(c.destinations.filter((d) => d.outcome !== 'failed').map((d) => [d.uri, d]));
    const results: DestinationResult[] = [];
    for (const rua of record.rua) results.push(done.get(rua.uri) ?? (await deliver(rua, gz, mailLabels(labels))));
    for (const uri of record.ignored) results.push({ uri, outcome: 'skipped', detail: 'not a mailto: or https: URI' });
    await finish(c, results, fields);
  }

  async function lookup(domain: string) {
    return parseTlsRptRecords(await deps.lookupTxt(`_smtp._tls.${domain}`));
  }

  async function deliver(rua: Rua, gz: Buffer, labels: ReturnType<typeof mailLabels>): Promise<DestinationResult> {
    const { uri } = rua;
    try {
      if (rua.kind === 'https') {
        const status = await deps.post(rua.url, gz);
        const ok = status >= 200 && status < 300;
        return { uri, outcome: ok ? 'sent' : 'failed', detail: `HTTP ${status}` };
      }
      if (!deps.from) return { uri, outcome: 'skipped', detail: 'no --tls-reports-from: reports go to https rua only' };
      const id = await deps.mail({
        from: deps.from,
        to: rua.address,
        subject: labels.subject,
        text: `This is an aggregate TLS report from ${labels.headers['TLS-Report-Submitter']} (RFC 8460).\n`,
        headers: labels.headers,
        attachment: { filename: labels.filename, content: gz },
      });
      return { uri, outcome: 'sent', detail: `email ${id}` };
    } catch (err) {
      return { uri, outcome: 'failed', detail: messageOf(err) };
    }
  }

  async function finish(c: ClaimedReport, destinations: DestinationResult[], fields: Record<string, unknown>) {
    const now = clock.now();
    const plan = finishPlan(c.day, c.attempts, destinations, now);
    const failed = destinations.filter((d) => d.outcome === 'failed').map((d) => `${d.uri}: ${d.detail}`);
    const detail = failed.length ? failed.join('; ') : null;
    await repo.finishReport(c.day, c.policy_domain, { ...plan, destinations, detail }, new Date(now).toISOString());
    const line = { ...fields, status: plan.status, destinations, next_attempt_at: plan.next_attempt_at };
    if (plan.status === 'sent') logger.info(line, 'TLS report sent');
    else logger.warn(line, plan.status === 'retry' ? 'TLS report failed; will retry' : 'TLS report failed; given up');
  }

  const guarded = (what: string, run: () => Promise<void>) =>
    notOverlapping(() => {
      const run1 = run().catch((err: unknown) => logger.warn({ err }, `TLS reports: ${what} failed`));
      running.add(run1);
      return run1.finally(() => running.delete(run1));
    });

  return {
    /** Counts each MX host tried (the delivery engine's observeTls): the metric always, the store's counts when on. */
    observe(outcomes: ObservedTls[]): void {
      const day = dayOf(clock.now());
      for (const o of outcomes) {
        deps.count?.(o.policy_type, o.result);
        if (deps.enabled) tally.add(countRowOf(o, day));
      }
    },
    flush,
    /** Flushes, then sends the reports due now (`svc serve` runs it every TICK_MS; tests call it). */
    async runOnce(): Promise<void> {
      await flush();
      await sendDue();
    },
    /** Flushes every minute and looks for due reports every TICK_MS, on the injected clock (`svc serve`). */
    start(): void {
      if (!deps.enabled || timers.length) return;
      timers = [
        clock.setInterval(guarded('flush', flush), FLUSH_MS),
        clock.setInterval(guarded('sending', sendDue), TICK_MS),
      ];
    },
    /** Stops the timers, lets a run in progress end, and writes what is counted. */
    async stop(): Promise<void> {
      timers.forEach((t) => t.cancel());
      timers = [];
      await Promise.all(running);
      await flush();
    },
  };
}

export type TlsReports = ReturnType<typeof createTlsReports>;

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));
