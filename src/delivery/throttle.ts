/** A destination's slow-down as a node recorded it (`destination_throttles`), for the others. */
export interface SharedThrottle {
  domain: string;
  concurrency: number;
  paused_until: string | null;
  updated_at: string;
}

export interface ThrottleOptions {
  maxConcurrency: number;
  basePauseMs: number;
  maxPauseMs: number;
  /** Successes in a row that win back one slot. */
  recoverAfter: number;
}

interface State {
  limit: number;
  inflight: number;
  pausedUntil: number;
  strikes: number;
  streak: number;
}

const isPaused = (s: State | undefined, now: number) => s !== undefined && now < s.pausedUntil;

/**
 * Per-destination concurrency with an adaptive slow-down: a destination that
 * answers 421 or 4.7.x "too many connections / try later" gets half the
 * concurrency and a pause that grows while it keeps refusing; each run of
 * successes wins one slot back. Other destinations are untouched.
 */
export function createThrottle(opts: ThrottleOptions) {
  const states = new Map<string, State>();
  const get = (d: string) => {
    let s = states.get(d);
    if (!s) states.set(d, (s = { limit: opts.maxConcurrency, inflight: 0, pausedUntil: 0, strikes: 0, streak: 0 }));
    return s;
  };
  /** Nodes sending now (several on PostgreSQL): each takes an equal share of every limit. */
  let nodes = 1;
  /** Per destination, the recorded slow-down last adopted (its `updated_at`). */
  const adopted = new Map<string, string>();
  /**
   * This node's slots of a destination: its limit (the whole server's) divided among the
   * nodes, rounded down so that together they never pass it, and at least one.
   */
  const slots = (s: State) => Math.max(1, Math.floor(s.limit / nodes));
  return {
    /** How many nodes share the destinations' limits now. */
    shareAmong(n: number): void {
      nodes = Math.max(1, Math.floor(n));
    },
    /** The nodes the limits are shared among (1 alone). */
    sharedAmong: () => nodes,
    /**
     * A node's slow-down of a destination (its row in destination_throttles): this node keeps
     * to the lower limit and the later pause too, so a 421 that one node got slows them all.
     * Each recorded slow-down is adopted once: afterwards this node wins its slots back by its
     * own successes, as after a 421 of its own, rather than being held at the recorded limit
     * until the row is cleared.
     */
    adopt(shared: SharedThrottle): void {
      if (adopted.get(shared.domain) === shared.updated_at) return;
      adopted.set(shared.domain, shared.updated_at);
      const s = get(shared.domain);
      s.limit = Math.max(1, Math.min(s.limit, shared.concurrency));
      const until = shared.paused_until ? Date.parse(shared.paused_until) : 0;
      if (until > s.pausedUntil) s.pausedUntil = until;
    },
    /**
     * Takes one of the destination's slots if it has a free one and is not
     * paused; the caller gives it back with `finished`. Checking and taking in
     * one step is what holds the limit when one pick starts many transactions.
     */
    tryStart(d: string, now: number): boolean {
      const s = get(d);
      if (s.inflight >= slots(s) || isPaused(s, now)) return false;
      s.inflight++;
      return true;
    },
    finished: (d: string) => void (get(d).inflight = Math.max(0, get(d).inflight - 1)),
    /**
     * Whether one more transaction may be claimed for the destination while
     * `waiting` claimed ones already wait for a slot: not while it is paused,
     * and no more than one more round of its slots ahead of them.
     */
    mayClaim(d: string, now: number, waiting: number): boolean {
      const s = get(d);
      return !isPaused(s, now) && s.inflight + waiting < 2 * slots(s);
    },
    /** Whether the destination is paused (it asked us to slow down). */
    paused: (d: string, now: number) => isPaused(states.get(d), now),
    /** The destination asked us to slow down. */
    slowDown(d: string, now: number): void {
      const s = get(d);
      s.strikes++;
      s.streak = 0;
      s.limit = Math.max(1, Math.floor(s.limit / 2));
      s.pausedUntil = now + Math.min(opts.maxPauseMs, opts.basePauseMs * 2 ** (s.strikes - 1));
    },
    /** A success: after enough in a row, one more slot. */
    succeeded(d: string): void {
      const s = get(d);
      if (++s.streak < opts.recoverAfter) return;
      s.streak = 0;
      s.strikes = Math.max(0, s.strikes - 1);
      s.limit = Math.min(opts.maxConcurrency, s.limit + 1);
    },
    /** How the destination is treated now (for `svc emails show`). */
    describe(d: string, now: number): { throttled: boolean; concurrency: number; paused_until: string | null } {
      const s = states.get(d);
      if (!s) return { throttled: false, concurrency: opts.maxConcurrency, paused_until: null };
      const paused = isPaused(s, now);
      return {
        throttled: paused || s.limit < opts.maxConcurrency,
        concurrency: s.limit,
        paused_until: paused ? new Date(s.pausedUntil).toISOString() : null,
      };
    },
  };
}

export type Throttle = ReturnType<typeof createThrottle>;
