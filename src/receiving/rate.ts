/**
 * Per-key counts over a sliding minute (the inbound listener's per-client and per-sender
 * rates): `take(key, commit)` says whether one more fits under `max` in the last `windowMs`,
 * and counts it when `commit`. Kept in memory, per node: a rate over all nodes would cost a
 * write per RCPT, and each node's share of a sender is what it must bear.
 */
export function createRateWindows(max: number, windowMs: number, now: () => number) {
  const seen = new Map<string, number[]>();
  let swept = now();
  function sweep(t: number) {
    if (t - swept < windowMs) return;
    swept = t;
    for (const [key, times] of seen) if (times.every((x) => t - x >= windowMs)) seen.delete(key);
  }
  return {
    take(key: string, commit: boolean): boolean {
      const t = now();
      sweep(t);
      const times = (seen.get(key) ?? []).filter((x) => t - x < windowMs);
      const fits = times.length < max;
      if (commit) times.push(t);
      if (times.length) seen.set(key, times);
      else seen.delete(key);
      return fits;
    },
  };
}
