/**
 * The retry schedule as data run through a pure function (style.md): attempt n
 * waits schedule[n-1] (the last step repeats), until the message is older than
 * maxAge; then the recipient is given up as a soft bounce.
 */
export function nextAttemptAt(
  attempts: number,
  createdAt: number,
  now: number,
  schedule: readonly number[],
  maxAgeMs: number,
): number | null {
  if (schedule.length === 0) return null;
  const delay = schedule[Math.min(Math.max(attempts, 1), schedule.length) - 1]!;
  const next = now + delay;
  return next - createdAt > maxAgeMs ? null : next;
}
