import { coalesced } from '../lib/periodic.ts';
import type { Timer } from '../lib/clock.ts';
import { claimDue } from './engine-claim.ts';
import { pumpAll } from './engine-handoff.ts';
import type { EngineState } from './engine-state.ts';

/**
 * The least time between two claim passes started by accepts: a burst of accepts claims in
 * a few passes, not one per email, while an email after a quiet spell is claimed at once.
 */
const WAKE_GAP_MS = 10;

export interface Scheduler {
  /** A claim pass now, or one more after the pass running now. Settles when they are done. */
  tick(): Promise<void>;
  /** A claim pass at once, unless one started less than WAKE_GAP_MS ago: then one when the gap ends. */
  wake(): void;
  /** A claim pass every `tickMs`, and wakes from now on. */
  start(): void;
  /** No more passes; settles once the pass running now has landed its claim. */
  stop(): Promise<void>;
}

/**
 * When the engine claims: every tick, on a wake (an accepted LIVE email) and after each
 * finished transaction; passes never overlap, and calls during one make one more after it.
 */
export function createScheduler(s: EngineState): Scheduler {
  let timer: Timer | undefined;
  /** The tick running now (`stop` waits for it: a claim in progress must land before it gives work back). */
  let ticking: Promise<void> | undefined;
  let again = false;
  const next = () => void tick();
  /** Claim passes started by accepts, one per WAKE_GAP_MS at most. */
  const wakes = coalesced(next, WAKE_GAP_MS);

  function tick(): Promise<void> {
    if (ticking) {
      again = true;
      return ticking;
    }
    ticking = (async () => {
      try {
        do {
          again = false;
          if (await claimAndDispatch(s, next)) again = true;
        } while (again && !s.stopping);
      } catch (e) {
        s.deps.logger.error({ err: e }, 'delivery tick failed');
      } finally {
        ticking = undefined;
      }
    })();
    return ticking;
  }

  return {
    tick,
    wake() {
      if (timer && !s.stopping) wakes.call();
    },
    start() {
      timer = s.deps.clock.setInterval(next, s.opts.tickMs);
    },
    async stop() {
      timer?.cancel();
      wakes.cancel();
      await ticking;
    },
  };
}

/**
 * One claim pass: starts what waits for a slot, claims due work while fewer than `claimLimit`
 * transactions are held, and starts what it claimed. True when more may be due at once.
 */
async function claimAndDispatch(s: EngineState, next: () => void): Promise<boolean> {
  // Waiting transactions whose destination's pause has ended start here too.
  pumpAll(s, next);
  const free = s.claimLimit - s.inflight.size;
  if (free <= 0 || s.stopping) return false;
  const pass = await claimDue(s, free);
  if (!pass.claimed) return false;
  pumpAll(s, next);
  return pass.more;
}
