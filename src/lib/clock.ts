/**
 * The injected clock. Only this file reads the wall clock or arms timers, so a
 * test can move time for schedulers, expiry, rate limits and retries.
 */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): Timer;
  setInterval(fn: () => void, ms: number): Timer;
}

export interface Timer {
  cancel(): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
  setInterval(fn, ms) {
    const t = setInterval(fn, ms);
    t.unref();
    return { cancel: () => clearInterval(t) };
  },
};

/** A clock that only moves when told to; timers fire as time passes them. */
export class FakeClock implements Clock {
  private current: number;
  private timers: { at: number; fn: () => void; every?: number; id: number }[] = [];
  private nextId = 1;

  constructor(start: number | string = '2026-01-15T10:00:00.000Z') {
    this.current = typeof start === 'number' ? start : Date.parse(start);
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): Timer {
    return this.add(fn, ms);
  }

  setInterval(fn: () => void, ms: number): Timer {
    return this.add(fn, ms, Math.max(1, ms));
  }

  /** Moves time forward, firing due timers in order. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.current = Math.max(this.current, due.at);
      if (due.every) due.at += due.every;
      else this.timers = this.timers.filter((t) => t !== due);
      due.fn();
    }
    this.current = target;
  }

  set(iso: string): void {
    this.advance(Date.parse(iso) - this.current);
  }

  private add(fn: () => void, ms: number, every?: number): Timer {
    const timer = { at: this.current + ms, fn, id: this.nextId++, ...(every ? { every } : {}) };
    this.timers.push(timer);
    return { cancel: () => (this.timers = this.timers.filter((t) => t !== timer)) };
  }
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** A real timer that keeps the process alive until it fires (I/O batching, not domain time). */
export function ioTimeout(fn: () => void, ms: number): Timer {
  const t = setTimeout(fn, ms);
  return { cancel: () => clearTimeout(t) };
}
