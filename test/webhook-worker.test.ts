import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { describe, expect, it, vi } from 'vitest';
import { sleep } from '../src/lib/sleep.ts';
import type { WebhooksStore } from '../src/webhooks/store.ts';
import { createDispatchWorker } from '../src/webhooks/worker-host.ts';
import { captureLogger } from './domains-helpers.ts';

// The dispatcher's thread in `svc serve`: one that ends on its own is started again.

describe('the webhook dispatcher thread', () => {
  it('starts with the first webhook; is started again when it ends on its own, waiting twice as long each time; not after stop', async () => {
    const { logger, lines } = captureLogger();
    // A data dir that does not exist: the thread fails as it opens the database, every time.
    const host = createDispatchWorker(
      {
        dataDir: join(tmpdir(), 'svc-no-such-dir', String(process.pid)),
        dnsServers: undefined,
        log: { level: 'fatal', format: 'json' },
        ca: undefined,
        options: { retrySchedule: [60_000], allowInsecure: false, tickMs: 100, concurrency: 8, maxLagMs: 30_000 },
      },
      { repo: { anyWebhook: () => Promise.resolve(anyWebhook) } as unknown as WebhooksStore, logger },
      { restartMs: 20, lookEveryMs: 10 },
    );
    const restarts = () => lines.filter((l) => String(l.msg).includes('starting it again'));
    // No webhook yet: no thread (it would fail at once, and say so).
    let anyWebhook = false;
    await host.start();
    await sleep(150);
    expect(restarts()).toHaveLength(0);
    anyWebhook = true;
    // Each restart starts a thread; on a loaded machine that alone can take a second or more.
    await vi.waitFor(() => expect(restarts().length).toBeGreaterThanOrEqual(3), { timeout: 30_000, interval: 10 });
    expect(
      restarts()
        .slice(0, 3)
        .map((l) => l.restart_in_ms),
    ).toEqual([20, 40, 80]);
    await host.stop();
    const seen = restarts().length;
    await sleep(300);
    expect(restarts()).toHaveLength(seen);
  });
});
