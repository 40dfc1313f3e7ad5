import { AppError } from '../errors.ts';

/** Seconds a client refused for the budget waits: bodies in flight are answered in seconds. */
const BUSY_RETRY_AFTER_S = 5;

/** The refusal of what the budget cannot take: 503 with Retry-After over HTTP, 452 4.3.1 over SMTP. */
export const serverBusy = (message?: string) => new AppError('server_busy', message, null, BUSY_RETRY_AFTER_S);

/**
 * A server-wide budget of bytes held in memory at once: request bodies and relayed
 * messages until they are parsed and answered. A door takes a hold before it reads
 * (the Content-Length, the SIZE of MAIL FROM) or covers the bytes as they arrive, and
 * refuses what would pass the limit instead of letting the OOM killer decide.
 */
export interface ByteBudget {
  /**
   * A hold of `bytes`, or undefined when it would pass the limit (a hold of 0 is never
   * refused). A size that is not a positive whole number (a client's SIZE) holds 0.
   */
  take(bytes: number): BudgetHold | undefined;
  /** Bytes held now, the limit, and the holds refused since the start. */
  stats(): { inFlight: number; limit: number; refused: number };
}

export interface BudgetHold {
  /** Holds at least `bytes` in all, growing the hold when needed; false when that would pass the limit. */
  cover(bytes: number): boolean;
  /** Gives the bytes back; later calls do nothing. */
  release(): void;
}

/**
 * A budget of `limit` bytes. What would pass it is refused, except when nothing else is
 * held: a request larger than the whole budget then goes alone, so that it is slowed but
 * never refused forever, and memory stays within the larger of the budget and one request.
 */
export function createByteBudget(limit: number): ByteBudget {
  let inFlight = 0;
  let refused = 0;
  const fits = (held: number, more: number) => inFlight + more <= limit || inFlight === held;

  return {
    take(size) {
      const bytes = Number.isSafeInteger(size) && size > 0 ? size : 0;
      if (bytes > 0 && !fits(0, bytes)) {
        refused++;
        return undefined;
      }
      inFlight += bytes;
      let held = bytes;
      let released = false;
      return {
        cover(total) {
          if (released || total <= held) return !released;
          if (!fits(held, total - held)) {
            refused++;
            return false;
          }
          inFlight += total - held;
          held = total;
          return true;
        },
        release() {
          if (released) return;
          released = true;
          inFlight -= held;
        },
      };
    },
    stats: () => ({ inFlight, limit, refused }),
  };
}
