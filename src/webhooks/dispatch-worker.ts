// The webhook dispatcher in its own thread (`svc serve`): its own SQLite connection,
// committer and undici agent, so sending webhooks takes the second core instead of
// the main thread that accepts email. The same createWebhookDispatcher as in tests;
// only where it runs differs. Messages: main → 'stop'; worker → stats every second
// and 'stopped'.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { createAuditWriter } from '../audit/index.ts';
import { createDnsResolver } from '../lib/dns.ts';
import { systemClock } from '../lib/clock.ts';
import { readBusySignal } from '../lib/busy-signal.ts';
import { openLogger, type Logger, type LoggerOptions } from '../lib/logger.ts';
import { createCommitter } from '../store/committer.ts';
import { openDatabase } from '../store/db.ts';
import { createWalSync } from '../store/wal-sync.ts';
import { createWebhookDispatcher, type DispatcherOptions, type WebhookDispatcher } from './dispatcher.ts';
import { createWebhooksRepo } from './repo.ts';
import { createWebhookAgent, resolverFromDns } from './url-guard.ts';

export interface DispatchWorkerData {
  dataDir: string;
  dnsServers: string[] | undefined;
  log: LoggerOptions;
  ca: string[] | undefined;
  options: DispatcherOptions;
  /** The main thread's busy signal (lib/busy-signal.ts). */
  mainBusy: SharedArrayBuffer;
}

const data = workerData as DispatchWorkerData;
yieldToTheAccept();
const store = openDatabase(data.dataDir);
// This connection commits attempt records and outbox moves without waiting for the disk
// (WAL, synchronous=NORMAL): a commit never blocks this thread on fsync, and the next
// durable commit of the main thread syncs these frames with its own. A power cut may
// forget the last attempts' records; their events are then sent again (at least once,
// X-Service-Event-Id lets the receiver drop the repeat). Emails keep FULL.
store.db.pragma('synchronous = NORMAL');
// Attempt records are not waited on by a client: groups of up to 20 ms take the shared
// write lock a few times a second rather than hundreds.
const tx = createCommitter(store.db, { windowMs: 20, maxBatch: 1000 });
// The main thread's groups are visible from their COMMIT and synced a moment later: an event is
// POSTed only once the WAL it was read from is on disk (the sync is also the main thread's).
// A failed sync refuses every claim after it (the dispatcher logs each); the main thread's
// sync of the same file reports the same failure and stops the server.
const wal = createWalSync(store.db.name, () => {});
const repo = createWebhooksRepo(store.db, tx, createAuditWriter(store.db));
const agent = createWebhookAgent({
  resolve: resolverFromDns(createDnsResolver(data.dnsServers)),
  allowInsecure: data.options.allowInsecure,
  ...(data.ca ? { ca: data.ca } : {}),
});
// The main thread accepts email: at 80 % busy or more it comes first (dispatcher.ts, maxLagMs).
const busy = readBusySignal(data.mainBusy, 0.8);
// No top-level await: inside the executable, pkg loads a worker with require(). The dispatcher
// starts once the logger is there (pino-pretty loads first for pretty output); a 'stop' sent
// meanwhile waits in the port until the listener below is attached.
void openLogger(data.log).then((logger) => run(logger.child({ thread: 'webhooks' })));

function run(logger: Logger): void {
  const dispatcher = createWebhookDispatcher(
    { repo, clock: systemClock, logger, agent, busy, durable: () => wal.after() },
    data.options,
  );
  void dispatcher.start();
  const report = setInterval(() => parentPort!.postMessage({ type: 'stats', stats: dispatcher.stats }), 1000);
  parentPort!.on('message', (msg: unknown) => onMessage(msg, dispatcher, report));
}

function onMessage(msg: unknown, dispatcher: WebhookDispatcher, report: NodeJS.Timeout): void {
  if (msg !== 'stop') return;
  clearInterval(report);
  void (async () => {
    await dispatcher.stop();
    await agent.close();
    tx.close();
    wal.close();
    await store.close();
    parentPort!.postMessage({ type: 'stats', stats: dispatcher.stats });
    parentPort!.postMessage({ type: 'stopped' });
  })();
}

/**
 * Lowers this thread's scheduling priority (nice 10), so when both cores are busy the
 * threads that accept email come first and webhooks catch up in the idle time after:
 * a client waiting on its 202 matters more than a webhook a few seconds later. On
 * Linux a thread is a task with its own id (/proc/thread-self names it) whose nice
 * value setpriority() sets alone; elsewhere the thread keeps its priority.
 */
function yieldToTheAccept(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, 10);
  } catch {
    // Not Linux, or not allowed: the dispatcher runs at the process's priority.
  }
}
