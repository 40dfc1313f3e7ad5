import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { SingleBar, Presets } from 'cli-progress';
import type { ApiClient } from './api-client.ts';
import { count, EXIT_FAILED, print, type OutputOptions } from './io.ts';
import { LIMITS } from '../limits/index.ts';
import { sendRequestSchema } from '../emails/index.ts';
import { AppError } from '../errors.ts';
import { fieldErrors } from '../validation.ts';

interface LineResult {
  line: number;
  id: string | null;
  status: string | null;
  error: { code: string; message: string } | null;
}

type Line = { line: number; body: unknown };

/**
 * Reads the JSONL file and checks every non-empty line with the schema the
 * server uses: the valid lines, and a failed result for each invalid one.
 */
async function readAndValidate(file: string): Promise<{ valid: Line[]; invalid: LineResult[] }> {
  const valid: Line[] = [];
  const invalid: LineResult[] = [];
  const refuse = (line: number, message: string) =>
    invalid.push({ line, id: null, status: null, error: { code: 'request_validation_failed', message } });
  let n = 0;
  for await (const text of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    n++;
    if (!text.trim()) continue;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (e) {
      refuse(n, `not JSON: ${(e as Error).message}`);
      continue;
    }
    const parsed = sendRequestSchema.safeParse(body);
    if (parsed.success) valid.push({ line: n, body });
    else
      refuse(
        n,
        fieldErrors(parsed.error)
          .map((f) => `${f.field || '(line)'}: ${f.message}`)
          .join('; '),
      );
  }
  return { valid, invalid };
}

type BatchData = { results: { index: number; id: string | null; status: string | null; error: LineResult['error'] }[] };

/**
 * One POST /v1/emails/batch. A structurally invalid batch is refused whole
 * (batch rule 4): each of its lines is reported failed, naming the line the
 * server's field errors point at, and the next batch still goes.
 */
async function sendChunk(client: ApiClient, chunk: Line[]): Promise<LineResult[]> {
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

async function sendAll(client: ApiClient, items: Line[], opts: OutputOptions): Promise<LineResult[]> {
  const bar =
    !opts.json && process.stderr.isTTY
      ? new SingleBar({ format: 'send [{bar}] {value}/{total} emails' }, Presets.shades_classic)
      : undefined;
  bar?.start(items.length, 0);
  const results: LineResult[] = [];
  try {
    for (let i = 0; i < items.length; i += LIMITS.batchEmails) {
      results.push(...(await sendChunk(client, items.slice(i, i + LIMITS.batchEmails))));
      bar?.update(results.length);
    }
  } finally {
    bar?.stop();
  }
  return results;
}

/**
 * svc send --batch: every line is validated first and, if any is invalid,
 * all of them are reported with their line numbers and nothing is sent (with
 * `skipInvalid`, the valid ones are). Then batches of 100 through POST
 * /v1/emails/batch, a progress bar and a summary; exit 1 when any line was not accepted.
 */
export async function sendBatchFile(
  client: ApiClient,
  file: string,
  opts: OutputOptions & { skipInvalid: boolean },
): Promise<void> {
  const { valid, invalid } = await readAndValidate(file);
  const blocked = invalid.length > 0 && !opts.skipInvalid;
  const sent = blocked ? [] : await sendAll(client, valid, opts);
  const results = [...invalid, ...sent].sort((a, b) => a.line - b.line);
  const failed = results.filter((r) => r.error);
  const summary = { accepted_count: results.length - failed.length, failed_count: failed.length, results };
  const verdict = blocked
    ? `${count(invalid.length, 'invalid line')} of ${valid.length + invalid.length}: nothing was sent (--skip-invalid sends the ${valid.length} valid)`
    : `accepted ${summary.accepted_count}, failed ${summary.failed_count}${invalid.length ? ` (${invalid.length} invalid, skipped)` : ''}`;
  print(opts, summary, () =>
    [...failed.map((f) => `line ${f.line}: ${f.error!.code}: ${f.error!.message}`), verdict].join('\n'),
  );
  if (failed.length) process.exitCode = EXIT_FAILED;
}
