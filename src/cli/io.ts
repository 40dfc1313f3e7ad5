import { AppError, isAppError } from '../errors.ts';
// The error alone, not config/index.ts: every command loads this file, `svc --version` too,
// and the index brings the settings' schema (zod) into a start that must stay under 200 ms.
import { ConfigError } from '../config/error.ts';
import { StoreOpenError } from '../store/open-error.ts';
import { BackupRefused } from '../store/backup.ts';

export interface OutputOptions {
  json?: boolean;
}

/** Exit code of a failed operation (cli.md): 1; wrong usage is 2 and handled by commander. */
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

export class UsageError extends Error {}

/** Prints `data` as one JSON document, or as the human text `human` makes. */
export function print(opts: OutputOptions, data: unknown, human: () => string): void {
  process.stdout.write(opts.json ? JSON.stringify(data, null, 2) + '\n' : human() + '\n');
}

/**
 * Prints a failure the way cli.md says and returns the exit code. Wrong usage is one
 * line and, when `command` is given (`svc send`), where its help is.
 */
export function printFailure(opts: OutputOptions, e: unknown, command?: string): number {
  if (e instanceof UsageError) {
    process.stderr.write(`error: ${e.message}\n${command ? `run '${command} --help'\n` : ''}`);
    return EXIT_USAGE;
  }
  const err = describe(e);
  if (opts.json) process.stdout.write(JSON.stringify({ error: err }, null, 2) + '\n');
  else process.stderr.write(`error: ${err.code}: ${err.message}${detailLine(err.details)}\n`);
  return EXIT_FAILED;
}

function describe(e: unknown): { code: string; message: string; details: unknown } {
  if (isAppError(e)) return { code: e.code, message: e.message, details: e.details };
  if (e instanceof ConfigError) return { code: 'invalid_setting', message: e.message, details: null };
  if (e instanceof StoreOpenError) return { code: 'store_unavailable', message: e.message, details: null };
  if (e instanceof BackupRefused) return { code: 'refused', message: e.message, details: null };
  const err = e as NodeJS.ErrnoException;
  if (err?.code && typeof err.code === 'string' && err.syscall) {
    return { code: 'io_error', message: err.message, details: null };
  }
  return { code: 'internal_error', message: err?.message ?? String(e), details: null };
}

function detailLine(details: unknown): string {
  if (!details || typeof details !== 'object') return '';
  const fields = (details as { fields?: { field: string; message: string }[] }).fields;
  if (fields) return '\n' + fields.map((f) => `  ${f.field}: ${f.message}`).join('\n');
  return ` ${JSON.stringify(details)}`;
}

/** A plain-text table of rows for human output. */
export function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cell = (v: unknown) =>
    v === null || v === undefined
      ? '-'
      : Array.isArray(v)
        ? v.join(',')
        : typeof v === 'string'
          ? v
          : JSON.stringify(v);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join(
    '\n',
  );
}

/** `1 address`, `2 addresses`: a count with its noun. */
export const count = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** Key: value lines for one record. */
export function record(obj: Record<string, unknown>): string {
  return Object.entries(obj)
    .map(
      ([k, v]) =>
        `${k}: ${v !== null && typeof v === 'object' ? JSON.stringify(v) : String((v as string | undefined) ?? '-')}`,
    )
    .join('\n');
}

export function fail(code: ConstructorParameters<typeof AppError>[0], message: string): never {
  throw new AppError(code, message);
}
