import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { SingleBar, Presets } from 'cli-progress';
import type { ApiClient } from './send.ts';
import { print, UsageError, type OutputOptions } from './io.ts';
import { LIMITS } from '../limits/index.ts';

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
      const res = await client.call('POST', '/v1/emails/batch', { emails: chunk.map((c) => c.body) });
      const data = res.data as {
        results: { index: number; id: string | null; status: string | null; error: LineResult['error'] }[];
      };
      for (const r of data.results)
        results.push({
          line: chunk[r.index]!.line,
          id: r.id,
          status: r.status,
          error: r.error && { code: r.error.code, message: r.error.message },
        });
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
