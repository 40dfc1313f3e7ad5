// The webhook dispatcher in its own thread (`svc serve`): its own SQLite connection,
// committer and undici agent, so sending webhooks takes the second core instead of
// the main thread that accepts email. The same createWebhookDispatcher as in tests;
// only where it runs differs. Messages: main → 'stop'; worker → stats every second
// and 'stopped'.
import { parentPort, workerData } from 'node:worker_threads';
import { createAuditWriter } from '../audit/index.ts';
import { createDnsResolver } from '../domains/dns.ts';
import { systemClock } from '../lib/clock.ts';
import { createLogger, type LoggerOptions } from '../lib/logger.ts';
import { createCommitter } from '../store/committer.ts';
import { openDatabase } from '../store/db.ts';
import { createWebhookDispatcher, type DispatcherOptions } from './dispatcher.ts';
import { createWebhooksRepo } from './repo.ts';
import { createWebhookAgent, resolverFromDns } from './url-guard.ts';

export interface DispatchWorkerData {
  dataDir: string;
  dnsServers: string[] | undefined;
  log: LoggerOptions;
  ca: string[] | undefined;
  options: DispatcherOptions;
}

const data = workerData as DispatchWorkerData;
const logger = createLogger(data.log).child({ thread: 'webhooks' });
const store = openDatabase(data.dataDir);
const tx = createCommitter(store.db);
const repo = createWebhooksRepo(store.db, tx, createAuditWriter(store.db));
const agent = createWebhookAgent({
  resolve: resolverFromDns(createDnsResolver(data.dnsServers)),
  allowInsecure: data.options.allowInsecure,
  ...(data.ca ? { ca: data.ca } : {}),
});
const dispatcher = createWebhookDispatcher({ repo, clock: systemClock, logger, agent }, data.options);
// No top-level await: inside the executable, pkg loads a worker with require().
void dispatcher.start();
const report = setInterval(() => parentPort!.postMessage({ type: 'stats', stats: dispatcher.stats }), 1000);

parentPort!.on('message', (msg: unknown) => {
  if (msg !== 'stop') return;
  clearInterval(report);
  void (async () => {
    await dispatcher.stop();
    await agent.close();
    tx.close();
    await store.close();
    parentPort!.postMessage({ type: 'stats', stats: dispatcher.stats });
    parentPort!.postMessage({ type: 'stopped' });
  })();
});
