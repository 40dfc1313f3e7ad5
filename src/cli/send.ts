import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { readStdin, type GlobalOptions } from './context.ts';
import { print, record, table, UsageError } from './io.ts';
import { AppError } from '../errors.ts';
import { sleep } from '../lib/sleep.ts';
import { createApiClient, type ApiClient } from './api-client.ts';
import { sendBatchFile } from './send-batch.ts';
import { varsFileOf } from './commands/kit.ts';

type Opts = Record<string, unknown> & GlobalOptions;
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
const list = (v: unknown) => (Array.isArray(v) ? (v as string[]) : undefined);
const FINAL = new Set(['DELIVERED', 'BOUNCED', 'COMPLAINED', 'FAILED', 'SIMULATED', 'CANCELED']);
const WAIT_LIMIT_MS = 15 * 60_000;

async function bodyFromFlags(opts: Opts): Promise<Record<string, unknown>> {
  const text = str(opts.text) === '-' ? await readStdin() : str(opts.text);
  const html = str(opts.htmlFile) ? await readFile(str(opts.htmlFile)!, 'utf8') : str(opts.html);
  const varsFile = varsFileOf(opts);
  const variables = {
    ...(varsFile ? (JSON.parse(await readFile(varsFile, 'utf8')) as object) : {}),
  } as Record<string, unknown>;
  for (const kv of list(opts.var) ?? []) {
    const i = kv.indexOf('=');
    if (i < 1) throw new UsageError(`--var wants k=v, got ${kv}`);
    variables[kv.slice(0, i)] = kv.slice(i + 1);
  }
  const metadata: Record<string, string> = {};
  for (const kv of list(opts.metadata) ?? []) {
    const i = kv.indexOf('=');
    if (i < 1) throw new UsageError(`--metadata wants k=v, got ${kv}`);
    metadata[kv.slice(0, i)] = kv.slice(i + 1);
  }
  const version = str(opts.templateVersion);
  if (version !== undefined && !/^[1-9]\d*$/.test(version))
    throw new UsageError(`--template-version wants a version number, got ${version}`);
  const headers: Record<string, string> = {};
  for (const h of list(opts.header) ?? []) {
    const i = h.indexOf(':');
    if (i < 1) throw new UsageError(`--header wants 'K: V', got ${h}`);
    headers[h.slice(0, i).trim()] = h.slice(i + 1).trim();
  }
  const attachments = await Promise.all(
    (list(opts.attach) ?? []).map(async (f) => ({
      filename: basename(f),
      content_base64: (await readFile(f)).toString('base64'),
    })),
  );
  const body: Record<string, unknown> = {
    from: str(opts.from),
    from_name: str(opts.fromName),
    to: list(opts.to),
    cc: list(opts.cc),
    bcc: list(opts.bcc),
    reply_to: list(opts.replyTo),
    subject: str(opts.subject),
    text,
    html,
    template: str(opts.template),
    template_version: version === undefined ? undefined : Number(version),
    variables: Object.keys(variables).length ? variables : undefined,
    tags: list(opts.tag),
    scheduled_at: str(opts.scheduledAt),
    metadata: Object.keys(metadata).length ? metadata : undefined,
    headers: Object.keys(headers).length ? headers : undefined,
    attachments: attachments.length ? attachments : undefined,
  };
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}

/**
 * svc send: one email (or --batch FILE.jsonl, send-batch.ts) through a running server's Public API.
 * A single send always carries an Idempotency-Key (a new one unless given), so a
 * retry after a lost answer can never send the email twice.
 */
export async function send(_args: string[], opts: Opts): Promise<void> {
  const batch = str(opts.batch);
  const client = createApiClient({
    server: str(opts.server),
    apiKey: str(opts.apiKey),
    retries: opts.retries,
    paced: batch !== undefined,
  });
  if (batch !== undefined)
    return sendBatchFile(client, batch, {
      ...opts,
      skipInvalid: Boolean(opts.skipInvalid),
      batchId: str(opts.batchId),
      concurrency: opts.concurrency,
    });
  if (!list(opts.to) && !str(opts.template)) throw new UsageError('give at least one --to');
  const idempotencyKey = str(opts.idempotencyKey) ?? randomUUID();
  const res = await client.call('POST', '/v1/emails', await bodyFromFlags(opts), { 'idempotency-key': idempotencyKey });
  const data = res.data as { id: string; status: string; skipped_recipients: unknown[] };
  if (!opts.wait) return print(opts, data, () => record(data));
  const { email, events } = await follow(client, data.id);
  print(
    opts,
    { ...data, status: email.status, email, events },
    () => `${record({ id: data.id, status: email.status })}\n${table(events as never, ['timestamp', 'type', 'data'])}`,
  );
}

/** Polls the email until it reaches a final status (or the wait limit). */
async function follow(client: ApiClient, id: string) {
  const started = performance.now();
  for (let delay = 200; ; delay = Math.min(delay * 2, 5000)) {
    const email = (await client.call('GET', `/v1/emails/${id}`)).data as { status: string };
    if (FINAL.has(email.status)) {
      const events = (await client.call('GET', `/v1/emails/${id}/events`)).data as unknown[];
      return { email, events };
    }
    if (performance.now() - started > WAIT_LIMIT_MS)
      throw new AppError('service_unavailable', `email ${id} is still ${email.status}`);
    await sleep(delay);
  }
}
