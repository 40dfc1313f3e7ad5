import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import { startPeriodic } from '../lib/periodic.ts';
import { checkKey, type DoctorReport } from './check.ts';
import type { Doctor } from './run.ts';

/** `svc serve` runs the doctor's checks this often (decisions.md, "svc doctor"). */
export const DOCTOR_INTERVAL_MS = 3_600_000;

export interface DoctorMonitor {
  /** The last finished run's report, undefined before the first. */
  latest(): DoctorReport | undefined;
  /** No new run; the lookups in flight are cancelled; settles when the run in progress ended. */
  stop(): Promise<void>;
}

/**
 * Runs the doctor now and every `intervalMs` on the clock, keeps the latest report (for
 * /readyz and the metrics) and logs a warning for each check that turns bad (and once
 * more when it is good again), not at every run.
 */
export function startDoctorMonitor(
  doctor: Doctor,
  deps: { clock: Clock; logger: Logger; intervalMs?: number },
): DoctorMonitor {
  let latest: DoctorReport | undefined;
  const periodic = startPeriodic(deps.clock, deps.intervalMs ?? DOCTOR_INTERVAL_MS, async (signal) => {
    signal.addEventListener('abort', doctor.cancel, { once: true });
    try {
      const report = await doctor.run(signal);
      logChanges(deps.logger, latest, report);
      latest = report;
    } catch (e) {
      // A run cut short by the server stopping is no failure.
      if (!signal.aborted) deps.logger.error({ err: e }, 'svc doctor checks failed');
    } finally {
      signal.removeEventListener('abort', doctor.cancel);
    }
  });
  return { latest: () => latest, stop: () => periodic.stop() };
}

function logChanges(logger: Logger, before: DoctorReport | undefined, after: DoctorReport): void {
  const was = new Map((before?.checks ?? []).map((c) => [checkKey(c), c.status]));
  for (const c of after.checks) {
    const previous = was.get(checkKey(c));
    const fields = { check: c.check, subject: c.subject, status: c.status, detail: c.detail, fix: c.fix };
    if (c.status !== 'ok' && previous !== c.status)
      logger.warn(fields, `svc doctor: ${c.check} ${c.subject}: ${c.detail}`);
    else if (c.status === 'ok' && previous !== undefined && previous !== 'ok') {
      logger.info(fields, `svc doctor: ${c.check} ${c.subject} is ok again`);
    }
  }
}
