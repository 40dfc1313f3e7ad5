import { openTopReader } from '../app-store.ts';
import {
  formatSnapshot,
  parseFilterText,
  readerSource,
  type EmailDetail,
  type Snapshot,
  type TopSource,
} from '../top/index.ts';
import { AppError } from '../errors.ts';
import { createApiClient, type ApiClient } from './api-client.ts';
import { storeConfigOf, type GlobalOptions } from './context.ts';
import { print, UsageError } from './io.ts';

type Opts = Record<string, unknown> & GlobalOptions;

/**
 * svc top: on a terminal, the live Ink view (cli.md); outside one, or with --json, one
 * snapshot as text or JSON. It reads the data dir over a read-only connection (the whole
 * server), PostgreSQL with --database (every node), or with --server a running server's
 * GET /v1/top with a key that may read (the key's project).
 */
export async function top(_args: string[], opts: Opts): Promise<void> {
  const filter = parseFilterText(typeof opts.filter === 'string' ? opts.filter : '');
  if ('error' in filter) throw new UsageError(`--filter ${filter.error}`);
  let source: TopSource;
  let close = () => {};
  if (typeof opts.server === 'string') {
    const client = createApiClient({ server: opts.server, apiKey: opts.apiKey as string | undefined, retries: 0 });
    source = serverSource(client, opts.server);
  } else {
    const opened = await openTopReader(storeConfigOf(opts));
    close = opened.close;
    source = readerSource(opened.reader, opened.label);
  }
  try {
    if (!opts.json && process.stdout.isTTY && process.stdin.isTTY) {
      const { runTop } = await import('../tui/top.ts');
      await runTop(source, filter);
      return;
    }
    const snapshot = await source.snapshot(filter);
    print(opts, snapshot, () => formatSnapshot(snapshot));
  } finally {
    close();
  }
}

/** The same readings through a running server, with a key that may read. */
export function serverSource(client: ApiClient, label: string): TopSource {
  return {
    label,
    async snapshot(filter) {
      const query = new URLSearchParams(
        Object.entries(filter).filter((e): e is [string, string] => typeof e[1] === 'string'),
      ).toString();
      return (await client.call('GET', `/v1/top${query ? `?${query}` : ''}`)).data as Snapshot;
    },
    async detail(id) {
      try {
        return (await client.call('GET', `/v1/top/emails/${encodeURIComponent(id)}`)).data as EmailDetail;
      } catch (err) {
        if (err instanceof AppError && err.code === 'not_found') return null;
        throw err;
      }
    },
  };
}
