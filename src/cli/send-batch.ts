import { SingleBar, Presets } from 'cli-progress';
import type { ApiClient } from './api-client.ts';
import { readBatchFile, type BatchLine } from './batch-file.ts';
import { DEFAULT_CONCURRENCY, MAX_CONCURRENCY } from './commands/kit.ts';
import { count, EXIT_FAILED, print, UsageError, type OutputOptions } from './io.ts';
import { AppError, errorRegistry } from '../errors.ts';
import { LIMITS } from '../limits/index.ts';

interface LineResult {
  line: number;
  id: string | null;
  status: string | null;
  /** The server answered a replay: an earlier run had sent this line. */
  already_sent: boolean;
  error: { code: string; message: string } | null;
}

export interface BatchOptions extends OutputOptions {
  skipInvalid: boolean;
  batchId?: string | undefined;
  concurrency?: unknown;
}

/** The exit code of a command stopped by SIGINT, as a shell reports it. */
const EXIT_INTERRUPTED = 130;
// Answers that say nothing about the line but about the key, the server or the network:
// the next lines would get them too, so the run stops and says how to resume.
const STOPS_THE_RUN = new Set([401, 403, 429]);

function concurrencyOf(value: unknown): number {
  if (value === undefined) return DEFAULT_CONCURRENCY;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_CONCURRENCY)
    throw new UsageError(`--concurrency wants a whole number 1-${MAX_CONCURRENCY}, got ${JSON.stringify(value)}`);
  return n;
}

/** True when the error is the line's own (a 4xx about its content), so the other lines still go. */
function isLineError(e: unknown): e is AppError {
  if (!(e instanceof AppError) || e.code === 'idempotency_in_progress') return false;
  const status = errorRegistry[e.code].status;
  return status < 500 && !STOPS_THE_RUN.has(status);
}

/** One POST /v1/emails with the line's Idempotency-Key: a 200 replay means an earlier run sent it. */
async function sendLine(client: ApiClient, item: BatchLine): Promise<LineResult> {
  try {
    const res = await client.call('POST', '/v1/emails', item.body, { 'idempotency-key': item.key });
    const data = res.data as { id: string; status: string };
    const replayed = res.status === 200 && String(res.headers['idempotent-replayed']) === 'true';
    return { line: item.line, id: data.id, status: data.status, already_sent: replayed, error: null };
  } catch (e) {
    if (!isLineError(e)) throw e;
    return {
      line: item.line,
      id: null,
      status: null,
      already_sent: false,
      error: { code: e.code, message: e.message },
    };
  }
}

/**
 * Until the returned function is called, Ctrl-C prints `line()` and exits 130 at once:
 * what is in flight may or may not be taken, and the re-run's keys make that safe.
 * (A door handles its own command's signals; this one only while it sends.)
 */
function exitOnInterrupt(line: () => string): () => void {
  const interrupted = () => {
    process.stderr.write(`${line()}\n`);
    process.exit(EXIT_INTERRUPTED);
  };
  process.once('SIGINT', interrupted);
  return () => void process.off('SIGINT', interrupted);
}

/** How long the server keeps a line's key: the time within which a re-run sends nothing twice. */
const RERUN_HOURS = LIMITS.idempotencyTtlMs / 3_600_000;

/** The resume advice of a run that stopped early; the same command is safe to repeat for a while. */
const resume = (accepted: number, total: number) =>
  `${accepted} of ${count(total, 'line')} accepted; run the same command again within ${RERUN_HOURS} hours ` +
  'to send the rest (no line is sent twice)';

/**
 * Sends the lines `concurrency` at a time, each a single send with its key, the
 * progress bar counting what the server acknowledged. Ctrl-C prints how far it got
 * and exits 130; an answer that stops the run (a refused key, a server gone) is
 * thrown with the same advice.
 */
async function sendAll(
  client: ApiClient,
  items: BatchLine[],
  opts: OutputOptions & { concurrency: number },
): Promise<{ results: LineResult[]; stopped?: AppError }> {
  const bar =
    !opts.json && process.stderr.isTTY
      ? new SingleBar({ format: 'send [{bar}] {value}/{total} accepted | {failed} failed' }, Presets.shades_classic)
      : undefined;
  const results: LineResult[] = [];
  let accepted = 0;
  const stopCatching = exitOnInterrupt(() => {
    bar?.stop();
    return `interrupted: ${resume(accepted, items.length)}`;
  });
  bar?.start(items.length, 0, { failed: 0 });
  let next = 0;
  let stop: Error | undefined;
  const worker = async () => {
    while (stop === undefined && next < items.length) {
      const item = items[next++]!;
      try {
        const r = await sendLine(client, item);
        results.push(r);
        if (!r.error) accepted++;
        bar?.update(accepted, { failed: results.length - accepted });
      } catch (e) {
        stop ??= e instanceof Error ? e : new Error(String(e));
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(opts.concurrency, items.length) }, worker));
  } finally {
    stopCatching();
    bar?.stop();
  }
  if (stop === undefined) return { results };
  if (!(stop instanceof AppError)) throw stop;
  const message = `${stop.message}: stopped: ${resume(accepted, items.length)}`;
  return { results, stopped: new AppError(stop.code, message, stop.details) };
}

/**
 * svc send --batch: every line is checked first and, if any is invalid, all
 * of them are reported with their line numbers and nothing is sent (with
 * `skipInvalid`, the valid ones are). Then each line is a POST /v1/emails with
 * a key derived from the line, so running the same file again sends only what
 * is missing and reports the rest as already sent; exit 1 when any line was not accepted.
 */
export async function sendBatchFile(client: ApiClient, file: string, opts: BatchOptions): Promise<void> {
  if (opts.batchId === '') throw new UsageError('--batch-id wants a non-empty name');
  const concurrency = concurrencyOf(opts.concurrency);
  const { valid, invalid } = await readBatchFile(file, opts.batchId);
  const refused = invalid.map((r): LineResult => ({
    line: r.line,
    id: null,
    status: null,
    already_sent: false,
    error: { code: 'request_validation_failed', message: r.message },
  }));
  const blocked = invalid.length > 0 && !opts.skipInvalid;
  const { results: sent, stopped } = blocked ? { results: [] } : await sendAll(client, valid, { ...opts, concurrency });
  const results = [...refused, ...sent].sort((a, b) => a.line - b.line);
  const failed = results.filter((r) => r.error);
  const failures = failed.map((f) => `line ${f.line}: ${f.error!.code}: ${f.error!.message}`);
  if (stopped) {
    if (!opts.json && failures.length) process.stdout.write(failures.join('\n') + '\n');
    throw stopped;
  }
  const replayed = results.filter((r) => r.already_sent).length;
  const summary = {
    accepted_count: results.length - failed.length - replayed,
    already_sent_count: replayed,
    failed_count: failed.length,
    results,
  };
  const verdict = blocked
    ? `${count(invalid.length, 'invalid line')} of ${valid.length + invalid.length}: nothing was sent (--skip-invalid sends the ${valid.length} valid)`
    : `accepted ${summary.accepted_count}, already sent: ${replayed}, failed ${summary.failed_count}${invalid.length ? ` (${invalid.length} invalid, skipped)` : ''}`;
  print(opts, summary, () => [...failures, verdict].join('\n'));
  if (failed.length) process.exitCode = EXIT_FAILED;
}
