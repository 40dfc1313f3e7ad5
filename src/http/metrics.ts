import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { DispatcherStats } from '../webhooks/index.ts';

/** Prometheus metrics of one server (its own registry, so tests can run several). */
export function createHttpMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'svc_' });
  const requests = new Counter({
    name: 'svc_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP request duration',
    labelNames: ['route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
    registers: [registry],
  });
  return {
    registry,
    observe(method: string, route: string, status: number, seconds: number): void {
      requests.inc({ method, route, status: String(status) });
      duration.observe({ route }, seconds);
    },
  };
}

export type HttpMetrics = ReturnType<typeof createHttpMetrics>;

/** What the webhook metrics read, at each scrape. */
export interface WebhookMetricsSource {
  /** Events waiting in the outbox. */
  pending(): Promise<number>;
  /** Webhooks deactivated now after five exhausted events. */
  autoDisabled(): Promise<number>;
  /** This process's attempts by outcome. */
  stats(): DispatcherStats;
}

/** The webhook counters an operator alerts on (issue 12 point 5), read at scrape time. */
export function registerWebhookMetrics(registry: Registry, source: WebhookMetricsSource): void {
  new Gauge({
    name: 'svc_webhook_events_pending',
    help: 'Webhook events waiting to be delivered (first attempts and retries)',
    registers: [registry],
    async collect() {
      this.set(await source.pending());
    },
  });
  new Gauge({
    name: 'svc_webhooks_auto_disabled',
    help: 'Webhooks deactivated after five events in a row used every attempt',
    registers: [registry],
    async collect() {
      this.set(await source.autoDisabled());
    },
  });
  new Counter({
    name: 'svc_webhook_attempts_total',
    help: 'Webhook POST attempts by outcome (refused: the URL guard stopped it)',
    labelNames: ['outcome'] as const,
    registers: [registry],
    collect() {
      const { attempts } = source.stats();
      this.reset();
      for (const outcome of ['succeeded', 'failed', 'refused'] as const) this.inc({ outcome }, attempts[outcome]);
    },
  });
}
