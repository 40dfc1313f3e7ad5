import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

export interface LoggerOptions {
  level: string;
  format: 'json' | 'pretty';
}

/**
 * Structured logs on stderr. Pretty output runs pino-pretty as an in-process
 * stream (not a transport thread), so the single executable needs no extra files.
 */
export function createLogger(opts: LoggerOptions, destination: NodeJS.WritableStream = process.stderr): Logger {
  const base = { level: opts.level, base: null };
  if (opts.format === 'pretty') {
    return pino(
      base,
      pretty({ destination, colorize: 'isTTY' in destination && destination.isTTY === true, sync: true }),
    );
  }
  return pino(base, pino.destination({ dest: destination === process.stderr ? 2 : 1, sync: false }));
}

export const silentLogger: Logger = pino({ level: 'silent' });
