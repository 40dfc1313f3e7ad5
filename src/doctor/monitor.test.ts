import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { FakeClock } from '../lib/clock.ts';
import type { DoctorCheck, DoctorReport } from './check.ts';
import { startDoctorMonitor } from './monitor.ts';

const check = (status: DoctorCheck['status']): DoctorCheck => ({
  check: 'fcrdns',
  subject: '203.0.113.5',
  status,
  detail: `is ${status}`,
  fix: null,
});

describe('the hourly doctor', () => {
  it('runs at start and every hour, and logs a check once when it turns bad and once when it recovers', async () => {
    const clock = new FakeClock();
    const lines: { level: number; msg: string }[] = [];
    const logger = pino({ base: null }, { write: (s: string) => lines.push(JSON.parse(s)) });
    const statuses: DoctorCheck['status'][] = ['ok', 'fail', 'fail', 'ok'];
    let runs = 0;
    const doctor = {
      run: (): Promise<DoctorReport> => {
        const c = check(statuses[runs++]!);
        return Promise.resolve({ checked_at: String(clock.now()), status: c.status, checks: [c] });
      },
      cancel: () => {},
    };
    const monitor = startDoctorMonitor(doctor, { clock, logger });
    const settle = () => new Promise((r) => setTimeout(r, 5));
    expect(monitor.latest()).toBeUndefined();
    for (let i = 0; i < 4; i++) {
      clock.advance(i === 0 ? 0 : 3_600_000);
      await settle();
    }
    expect(runs).toBe(4);
    expect(monitor.latest()!.checks[0]!.status).toBe('ok');
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [40, 'svc doctor: fcrdns 203.0.113.5: is fail'],
      [30, 'svc doctor: fcrdns 203.0.113.5 is ok again'],
    ]);
    await monitor.stop();
  });
});
