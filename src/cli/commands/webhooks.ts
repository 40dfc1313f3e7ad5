import { Option, type Command } from 'commander';
import type * as WebhookActions from '../webhooks.ts';
import { allProjectsOption, command, lazy, type ActionName } from './kit.ts';

const ID = '0192f4c1-7c2e-7b3a-9d4e-5f6a7b8c9d0e';
const DELIVERY = '0192f4c2-1a2b-7c3d-8e4f-5a6b7c8d9e0f';
const PROJECT = ['--project <project>', 'project id or unique name'] as const;
const EVENTS = [
  '--events <list>',
  'comma-separated event names (queued,sent,delivered,bounced,...; * for every email event; ' +
    'domain.verification_changed, suppression.added, suppression.removed by name)',
] as const;

/** Webhook subscriptions and their delivery records. */
export function registerWebhooks(program: Command): void {
  const hook = (name: ActionName<typeof WebhookActions>) => lazy(async () => (await import('../webhooks.ts'))[name]);
  const w = command(program, 'webhooks', "a project's webhooks: signed POSTs of email events to an HTTPS URL", [
    'svc webhooks list --project Default',
  ]);
  command(w, 'create', 'subscribe a URL to events; prints the signing secret once', [
    'svc webhooks create --project Default --url https://example.com/hooks/svc --events delivered,bounced',
    "svc webhooks create --project Default --url https://example.com/hooks/svc --events '*' --json",
  ])
    .requiredOption(...PROJECT)
    .requiredOption('--url <url>', 'the HTTPS URL events are POSTed to')
    .requiredOption(...EVENTS)
    .action(hook('create'));
  command(w, 'list', "list a project's webhooks (no secrets)", [
    'svc webhooks list --project Default --json',
    'svc webhooks list --all-projects',
  ])
    .option(...PROJECT)
    .addOption(allProjectsOption())
    .action(hook('list'));
  command(w, 'show', 'a webhook (no secret)', [`svc webhooks show ${ID} --project Default`])
    .argument('<id>', 'webhook id')
    .requiredOption(...PROJECT)
    .action(hook('show'));
  command(w, 'update', 'change the URL, the events or whether it is active (true reactivates)', [
    `svc webhooks update ${ID} --project Default --events delivered,bounced,complained`,
    `svc webhooks update ${ID} --project Default --active true`,
  ])
    .argument('<id>', 'webhook id')
    .requiredOption(...PROJECT)
    .option('--url <url>', 'the HTTPS URL events are POSTed to')
    .option(...EVENTS)
    .addOption(new Option('--active <bool>', 'receive events (true) or pause (false)').choices(['true', 'false']))
    .action(hook('update'));
  command(w, 'rotate-secret', 'make a new signing secret and print it; the old one is invalid at once', [
    `svc webhooks rotate-secret ${ID} --project Default`,
  ])
    .argument('<id>', 'webhook id')
    .requiredOption(...PROJECT)
    .action(hook('rotateSecret'));
  command(w, 'test', 'send a signed test.ping now and print how it went; exits 1 unless it succeeded', [
    `svc webhooks test ${ID} --project Default`,
    `svc webhooks test ${ID} --project Default --dns-servers 127.0.0.1:5353 --json`,
  ])
    .argument('<id>', 'webhook id')
    .requiredOption(...PROJECT)
    .option('--dns-servers <list>', 'host:port,... resolver of the target host (SVC_DNS_SERVERS)')
    .action(hook('test'));
  command(w, 'deliveries', "a webhook's delivery attempts, newest first", [
    `svc webhooks deliveries ${ID} --project Default --status failed`,
    `svc webhooks deliveries ${ID} --project Default --from 2026-11-01T00:00:00Z --limit 50 --json`,
  ])
    .argument('<id>', 'webhook id')
    .requiredOption(...PROJECT)
    .option('--status <status>', 'pending|succeeded|failed|skipped')
    .option('--from <iso>', 'created at or after')
    .option('--to <iso>', 'created at or before')
    .option('--limit <n>', 'page size (1 to 100, default 25)')
    .option('--offset <n>', 'skip this many')
    .action(hook('deliveries'));
  command(w, 'redeliver', 'queue a new attempt of a recorded event; the running server sends it', [
    `svc webhooks redeliver ${ID} ${DELIVERY} --project Default`,
  ])
    .argument('<id>', 'webhook id')
    .argument('<delivery>', 'delivery id (from svc webhooks deliveries)')
    .requiredOption(...PROJECT)
    .action(hook('redeliver'));
  command(w, 'delete', 'delete a webhook; no more events are sent to it', [
    `svc webhooks delete ${ID} --project Default`,
  ])
    .argument('<id>', 'webhook id')
    .requiredOption(...PROJECT)
    .action(hook('remove'));
}
