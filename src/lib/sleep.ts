import { ioTimeout } from './clock.ts';

/** Waits `ms` of real time (client-side polling, not domain time). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => ioTimeout(resolve, ms));
}
