import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { SingleBar, Presets } from 'cli-progress';
import type { ApiClient } from './send.ts';
import { print, UsageError, type OutputOptions } from './io.ts';
import { LIMITS } from '../limits/index.ts';
import { AppError } from '../errors.ts';

interface LineResult {
  line: number;
  id: string | null;
  status: string | null;
  error: { code: string; message: string } | null;
}

/** Reads non-empty JSONL lines with their line numbers; a line that is not JSON is wrong usage. */
async function readJsonl(file: string): Promise<{ line: number; body: unknown }[]> {
  const out: { line: number; body: unknown }[] = [];
  let n = 0;
  for await (const text of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    n++;
    if (!text.trim()) continue;
    try {
      out.push({ line: n, body: JSON.parse(text) });
    } catch {
      throw new UsageError(`${file}:${n}: not a JSON object`);
    }
  }
  return out;
}

type BatchData = { results: { index: number; id: string | null; status: string | null; error: LineResult['error'] }[] };

/**
 * One POST /v1/emails/batch. A structurally invalid batch is refused whole
 * (batch rule 4): each of its lines is reported failed, naming the line the
 * server's field errors point at, and the next batch still goes.
 */
async function sendChunk(client: ApiClient, chunk: { line: number; body: unknown }[]): Promise<LineResult[]> {
  try {
    const res = await client.call('POST', '/v1/emails/batch', { emails: chunk.map((c) => c.body) });
    return (res.data as BatchData).results.map((r) => ({
      line: chunk[r.index]!.line,
      id: r.id,
      status: r.status,
      error: r.error && { code: r.error.code, message: r.error.message },
    }));
  } catch (e) {
    if (!(e instanceof AppError) || e.code !== 'request_validation_failed') throw e;
    const fields = (e.details?.fields ?? []) as { field: string; message: string }[];
    return chunk.map((c, index) => {
      const own = fields.filter((f) => f.field.startsWith(`emails.${index}.`));
      const message = own.length
        ? own.map((f) => `${f.field.slice(`emails.${index}.`.length)}: ${f.message}`).join('; ')
        : 'not sent: another line of its batch of 100 failed validation';
      return { line: c.line, id: null, status: null, error: { code: e.code, message } };
    });
  }
}

/** svc send --batch: batches of 100 through POST /v1/emails/batch, a progress bar and a summary. */
export async function sendBatchFile(client: ApiClient, file: string, opts: OutputOptions): Promise<void> {
  const items = await readJsonl(file);
  const bar =
    !opts.json && process.stderr.isTTY
      ? new SingleBar({ format: 'send [{bar}] {value}/{total} emails' }, Presets.shades_classic)
      : undefined;
  bar?.start(items.length, 0);
  const results: LineResult[] = [];
  try {
    for (let i = 0; i < items.length; i += LIMITS.batchEmails) {
      const chunk = items.slice(i, i + LIMITS.batchEmails);
      results.push(...(await sendChunk(client, chunk)));
      bar?.update(results.length);
    }
  } finally {
    bar?.stop();
  }
  const failed = results.filter((r) => r.error);
  const summary = { accepted_count: results.length - failed.length, failed_count: failed.length, results };
  print(opts, summary, () =>
    [
      `accepted ${summary.accepted_count}, failed ${summary.failed_count}`,
      ...failed.map((f) => `  line ${f.line}: ${f.error!.code}: ${f.error!.message}`),
    ].join('\n'),
  );
  if (failed.length) process.exitCode = 1;
}
