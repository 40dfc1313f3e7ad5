// Piscina worker: delivers jobs with its own DNS resolver and SMTP session pool.
// It receives plain data and returns plain results; it never opens the database.
import { workerData } from 'node:worker_threads';
import { systemClock } from '../lib/clock.ts';
import { createDnssecResolver } from './dnssec-resolver.ts';
import { createResolver } from './mx.ts';
import { createSmtpPool } from './smtp-pool.ts';
import { transmit } from './transmit.ts';
import type { DeliveryJob, JobResult, WorkerSettings } from './job.ts';

const settings = workerData as WorkerSettings;
const resolver = createResolver(settings.dnsServers);
const pool = createSmtpPool({
  hostname: settings.hostname,
  tlsInsecure: settings.tlsInsecure,
  ca: settings.ca ?? [],
  connectTimeoutMs: settings.connectTimeoutMs,
  socketTimeoutMs: settings.socketTimeoutMs,
  idleMs: 30_000,
});

// Its answers are cached per worker for their TTL: the freshness of network answers, not domain time.
const dane = settings.daneResolver ? createDnssecResolver(settings.daneResolver, systemClock) : null;

export default function deliver(job: DeliveryJob): Promise<JobResult> {
  return transmit(job, { settings, resolver, pool, dane });
}
