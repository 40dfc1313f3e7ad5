// `svc serve` must stop cleanly on SIGTERM or SIGINT whenever it comes (systemd's stop,
// Ctrl-C), also while it is still loading its modules, before serve() can listen for it:
// without a handler a signal there ends the process at once, with nothing logged and
// nothing closed. main.ts calls holdEarlySignals() first thing; serve() takes the held
// signal over when it starts listening, and stops as soon as it is up.

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;
let held: string | undefined;
const hold = (signal: string) => {
  held ??= signal;
};

/** Catches SIGTERM and SIGINT from now on, keeping the first for takeEarlySignal(). */
export function holdEarlySignals(): void {
  for (const s of SIGNALS) process.on(s, hold);
}

/** The signal held since holdEarlySignals() (undefined if none came); stops holding. */
export function takeEarlySignal(): string | undefined {
  for (const s of SIGNALS) process.off(s, hold);
  const signal = held;
  held = undefined;
  return signal;
}
