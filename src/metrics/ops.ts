// The counters and gauges an operator alerts on, kept by the app (app.ts makes them for a
// server) and served by the HTTP door's /metrics with its own request metrics.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DoctorReport } from '../doctor/index.ts';
import type { StorageState } from '../store/disk.ts';

/** What the operator gauges read at each scrape (all cheap: indexes and file sizes). */
export interface OpsSource {
  /** Recipients waiting for an attempt or being tried, and the age (s) of the oldest email among them. */
  queue(): Promise<{ recipients: number; oldestSeconds: number }>;
  /** Destinations slowed down now (a 421 or a rate limit): domain and concurrency. */
  throttled(): Promise<{ domain: string; concurrency: number }[]>;
  /** Sizes of the database file and its WAL, bytes. */
  storeBytes(): Promise<{ database: number; wal: number }>;
  /** Whether writes fail for lack of space, and the data dir filesystem's space (SQLite). */
  storage(): StorageState;
}

/**
 * The counters and gauges an operator alerts on (issue 16, item 4), in a registry of
 * the app's own, merged into /metrics: accepted emails, recipient outcomes by
 * category, the queue, throttled destinations, relay sessions, commit latency and
 * the store's size. Counters count from the process's start (Prometheus rates).
 */
export function createOpsMetrics() {
  const registry = new Registry();
  const accepted = new Counter({
    name: 'svc_emails_accepted_total',
    help: 'Emails accepted (202 or 250), by key environment and door',
    labelNames: ['env', 'source'] as const,
    registers: [registry],
  });
  const outcomes = new Counter({
    name: 'svc_recipient_outcomes_total',
    help: 'Recipient attempts by outcome (delivered, deferred, bounced, failed, complained), category, bounce type and where it came from (smtp, dsn, arf)',
    labelNames: ['outcome', 'category', 'type', 'source'] as const,
    registers: [registry],
  });
  const tlsSessions = new Counter({
    name: 'svc_tls_sessions_total',
    help: 'MX hosts tried against their TLS policy (RFC 8460), by policy type (sts, tlsa, no-policy-found) and result (success or the failure type)',
    labelNames: ['policy_type', 'result'] as const,
    registers: [registry],
  });
  const commit = new Histogram({
    name: 'svc_store_commit_seconds',
    help: 'Time of each group COMMIT and the WAL sync after it: what every 202 and 250 waits for',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  let relaySessions: () => number = () => 0;
  let deliveryNodes: () => number = () => 1;
  new Gauge({
    name: 'svc_delivery_nodes',
    help: "Servers this one shares each destination's concurrency with, itself included (several on PostgreSQL)",
    registers: [registry],
    collect() {
      this.set(deliveryNodes());
    },
  });
  new Gauge({
    name: 'svc_smtp_relay_sessions',
    help: 'SMTP relay sessions open now',
    registers: [registry],
    collect() {
      this.set(relaySessions());
    },
  });
  return {
    registry,
    accepted: (env: string, source: string) => accepted.inc({ env, source }),
    outcome: (outcome: string, category: string | null, type: string | null, source: string) =>
      outcomes.inc({ outcome, category: category ?? '', type: type ?? '', source }),
    /** One MX host tried against its TLS policy: counted always, with or without --tls-reports. */
    tlsSession: (policyType: string, result: string) => tlsSessions.inc({ policy_type: policyType, result }),
    committed: (seconds: number) => commit.observe(seconds),
    /** The nodes the delivery engine shares destination limits with, once it runs. */
    watchDeliveryNodes: (nodes: () => number) => (deliveryNodes = nodes),
    /** The relay's session count, once `svc serve` started it. */
    watchRelay: (sessions: () => number) => (relaySessions = sessions),
    /** The budget of bytes in flight (--in-flight-bytes), read at each scrape. */
    watchBudget(stats: () => { inFlight: number; limit: number; refused: number }) {
      new Gauge({
        name: 'svc_in_flight_bytes',
        help: 'Bytes of request bodies and relayed messages held in memory now',
        registers: [registry],
        collect() {
          this.set(stats().inFlight);
        },
      });
      new Gauge({
        name: 'svc_in_flight_bytes_limit',
        help: 'The budget of bytes in flight (--in-flight-bytes): over it the API answers 503, the relay 452',
        registers: [registry],
        collect() {
          this.set(stats().limit);
        },
      });
      new Counter({
        name: 'svc_in_flight_refused_total',
        help: 'Requests and messages refused because they would have passed the budget of bytes in flight',
        registers: [registry],
        collect() {
          this.reset();
          this.inc(stats().refused);
        },
      });
    },
    /** svc doctor's latest report (`svc serve` runs it hourly): one gauge per check, read at each scrape. */
    watchDoctor(latest: () => DoctorReport | undefined) {
      new Gauge({
        name: 'svc_doctor_check',
        help: "svc doctor's checks of this server: 1 ok, 0 warn or fail (svc doctor says why and how to fix it)",
        labelNames: ['check', 'subject'] as const,
        registers: [registry],
        collect() {
          this.reset();
          for (const c of latest()?.checks ?? [])
            this.set({ check: c.check, subject: c.subject }, c.status === 'ok' ? 1 : 0);
        },
      });
      new Gauge({
        name: 'svc_doctor_failing',
        help: "svc doctor's checks that fail now (warnings not counted)",
        registers: [registry],
        collect() {
          this.set((latest()?.checks ?? []).filter((c) => c.status === 'fail').length);
        },
      });
    },
    /** The gauges read from the store at each scrape. */
    watchStore(store: OpsSource) {
      // Two gauges read the queue, and two the throttles: one read of each per scrape.
      const source = {
        queue: shared(() => store.queue()),
        throttled: shared(() => store.throttled()),
        storeBytes: () => store.storeBytes(),
      };
      new Gauge({
        name: 'svc_queue_recipients',
        help: 'Recipients waiting for an attempt or being tried',
        registers: [registry],
        async collect() {
          this.set((await source.queue()).recipients);
        },
      });
      new Gauge({
        name: 'svc_queue_oldest_seconds',
        help: 'Age of the oldest email with a recipient still waiting (0 when none)',
        registers: [registry],
        async collect() {
          this.set((await source.queue()).oldestSeconds);
        },
      });
      new Gauge({
        name: 'svc_destination_concurrency',
        help: 'Transactions allowed at once to each destination slowed down now (throttled ones only)',
        labelNames: ['domain'] as const,
        registers: [registry],
        async collect() {
          const throttled = await source.throttled();
          this.reset();
          for (const t of throttled) this.set({ domain: t.domain }, t.concurrency);
        },
      });
      new Gauge({
        name: 'svc_destinations_throttled',
        help: 'Destinations slowed down now after a 421 or a rate-limit reply',
        registers: [registry],
        async collect() {
          this.set((await source.throttled()).length);
        },
      });
      new Gauge({
        name: 'svc_store_bytes',
        help: 'Size of the database file and of its WAL',
        labelNames: ['file'] as const,
        registers: [registry],
        async collect() {
          const b = await source.storeBytes();
          this.set({ file: 'database' }, b.database);
          this.set({ file: 'wal' }, b.wal);
        },
      });
      registerStorageMetrics(registry, () => store.storage());
    },
  };
}

export type OpsMetrics = ReturnType<typeof createOpsMetrics>;

/**
 * The disk an operator alerts on (decisions.md, "A full disk and a memory budget"): whether
 * writes fail for lack of space, and the data dir filesystem's free and total bytes (SQLite;
 * on PostgreSQL the disk is the database server's, watched there).
 */
function registerStorageMetrics(registry: Registry, storage: () => StorageState): void {
  new Gauge({
    name: 'svc_storage_full',
    help: 'Whether writes fail now for lack of disk space (1): answered 503 storage_full and 452 4.3.1',
    registers: [registry],
    collect() {
      this.set(storage().full ? 1 : 0);
    },
  });
  new Gauge({
    name: 'svc_storage_free_bytes',
    help: "Bytes free on the data dir's filesystem (SQLite only)",
    registers: [registry],
    collect() {
      const space = storage().space;
      if (space) this.set(space.free);
    },
  });
  new Gauge({
    name: 'svc_storage_total_bytes',
    help: "Size of the data dir's filesystem (SQLite only)",
    registers: [registry],
    collect() {
      const space = storage().space;
      if (space) this.set(space.total);
    },
  });
}

/** `read`, with the calls that come while one is pending (one scrape's gauges) sharing its answer. */
function shared<T>(read: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () =>
    (pending ??= read().finally(() => {
      pending = undefined;
    }));
}
