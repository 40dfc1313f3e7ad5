import { pino, type Logger } from 'pino';

export type { Logger };

export interface LoggerOptions {
  level: string;
  format: 'json' | 'pretty';
}

/**
 * Structured logs on stderr, in the format asked for. Pretty output runs pino-pretty as an
 * in-process stream (not a transport thread), so the single executable needs no extra files;
 * it is loaded here, only when pretty output is used, hence the promise.
 */
export async function openLogger(
  opts: LoggerOptions,
  destination: NodeJS.WritableStream = process.stderr,
): Promise<Logger> {
  if (opts.format === 'json') return createLogger({ level: opts.level }, destination);
  const { default: pretty } = await import('pino-pretty');
  const colorize = 'isTTY' in destination && destination.isTTY === true;
  return pino({ level: opts.level, base: null }, pretty({ destination, colorize, sync: true }));
}

/** JSON lines on `destination` (stderr by default): the format that needs nothing more loaded. */
export function createLogger(
  opts: { level: string; format?: 'json' },
  destination: NodeJS.WritableStream = process.stderr,
): Logger {
  const dest = pino.destination({ dest: destination === process.stderr ? 2 : 1, sync: false });
  return pino({ level: opts.level, base: null }, dest);
}

export { silentLogger } from './silent-logger.ts';
