/**
 * Per-key counts over a sliding minute (the inbound listener's per-client and per-sender
 * rates): `take(key, commit)` says whether one more fits under `max` in the last `windowMs`,
 * and counts it when `commit`. Kept in memory, per node: a rate over all nodes would cost a
 * write per RCPT, and each node's share of a sender is what it must bear.
 *
 * Each key keeps its times in order (the clock only moves forward), so the expired ones are
 * dropped from the front: a check costs what expired since the last one, not the window's
 * count, which may be a million (`--inbound-rate-per-ip`).
 */
export function createRateWindows(max: number, windowMs: number, now: () => number) {
  const seen = new Map<string, { times: number[]; head: number }>();
  let swept = now();
  const expire = (w: { times: number[]; head: number }, t: number) => {
    while (w.head < w.times.length && t - w.times[w.head]! >= windowMs) w.head++;
    // Compacted once half of it is expired, so the array stays within twice the live count.
    if (w.head > 1024 && w.head * 2 > w.times.length) {
      w.times = w.times.slice(w.head);
      w.head = 0;
    }
    return w.times.length - w.head;
  };
  function sweep(t: number) {
    if (t - swept < windowMs) return;
    swept = t;
    for (const [key, w] of seen) if (expire(w, t) === 0) seen.delete(key);
  }
  return {
    take(key: string, commit: boolean): boolean {
      const t = now();
      sweep(t);
      const w = seen.get(key);
      const live = w ? expire(w, t) : 0;
      const fits = live < max;
      if (commit) {
        if (w) w.times.push(t);
        else seen.set(key, { times: [t], head: 0 });
      } else if (w && live === 0) seen.delete(key);
      return fits;
    },
  };
}
