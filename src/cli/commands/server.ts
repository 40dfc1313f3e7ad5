import type { Command } from 'commander';
import { SETTINGS, envOf, flagOf } from '../../config/settings.ts';
import { collect, command, DEFAULT_CONCURRENCY, lazy, variablesFileAlias, varsFileOption } from './kit.ts';

/** svc serve, with a flag for every setting but the global --data-dir. */
export function registerServe(program: Command): void {
  const serve = command(program, 'serve', 'run the HTTP API, delivery and schedulers in one process', [
    'svc serve',
    'svc serve --data-dir /var/lib/svc --http-host 0.0.0.0 --hostname mta.example.com',
    'svc --config /etc/svc/svc.json serve',
  ]);
  for (const s of SETTINGS) {
    // Global options, given before or after the command.
    if (s.key === 'dataDir' || s.key === 'database') continue;
    const defaults = s.default === undefined ? '' : `, default ${s.default}`;
    serve.option(`${flagOf(s.key)}${s.value ? ` <${s.value}>` : ''}`, `${s.description} (${envOf(s.key)}${defaults})`);
  }
  serve.action(lazy(async () => (await import('../serve.ts')).serve));
}

/** svc doctor: the server checks itself (host name, reverse DNS, port 25, blocklists, domains). */
export function registerDoctor(program: Command): void {
  command(program, 'doctor', "check this server's host name, reverse DNS, port 25, blocklists and domains' records", [
    'svc doctor',
    'svc doctor --data-dir /var/lib/svc --json',
    'svc doctor --address 203.0.113.25 --hostname mta.example.com',
  ])
    .option('--address <ip>', 'an outbound address to check (repeatable; default: the one the OS sends from)', collect)
    .option('--hostname <name>', "the HELO name to check (SVC_HOSTNAME; default: the server's)")
    .option('--dns-servers <list>', "host:port,... resolver for the checks (SVC_DNS_SERVERS; default: the server's)")
    .option('--mx-port <port>', 'the port of the outbound connection check (SVC_MX_PORT, default 25)')
    .option('--probe-domain <domain>', 'the domain whose MX the port 25 check connects to', 'gmail.com')
    .action(lazy(async () => (await import('../doctor.ts')).doctor));
}

/** svc send: the Public API client. */
export function registerSend(program: Command): void {
  command(program, 'send', 'send an email through a running server (SVC_URL, SVC_API_KEY)', [
    'svc send --api-key $KEY --from me@example.com --to you@example.com --subject Hi --text Hello',
    'svc send --template welcome --var name=Ada --from me@example.com --to ada@example.org --wait',
    'echo "Hello" | svc send --from me@example.com --to you@example.com --subject Hi --text -',
    'svc send --batch emails.jsonl --skip-invalid',
    'svc send --batch emails.jsonl --batch-id 2026-11-newsletter',
  ])
    .option('--server <url>', 'server URL (SVC_URL, default http://127.0.0.1:8080)')
    .option('--api-key <key>', 'API key (SVC_API_KEY)')
    .option('--from <email>', 'sender address, on a verified domain for LIVE keys')
    .option('--from-name <name>', 'sender display name')
    .option('--to <email>', 'recipient (repeatable)', collect)
    .option('--cc <email>', 'cc (repeatable)', collect)
    .option('--bcc <email>', 'bcc (repeatable)', collect)
    .option('--reply-to <email>', 'reply-to (repeatable)', collect)
    .option('--subject <subject>', 'subject')
    .option('--text <text>', 'text body, or - for standard input')
    .option('--html <html>', 'HTML body')
    .option('--html-file <file>', 'HTML body from a file')
    .option('--template <slug>', 'a stored template')
    .option('--template-version <n>', 'a version of the template other than its published one')
    .option('--var <k=v>', 'template variable (repeatable)', collect)
    .addOption(varsFileOption('JSON object of template variables'))
    .addOption(variablesFileAlias())
    .option('--attach <file>', 'attachment (repeatable)', collect)
    .option('--tag <tag>', 'tag (repeatable)', collect)
    .option('--header <header>', "custom header 'K: V' (repeatable)", collect)
    .option('--metadata <k=v>', 'metadata carried in every webhook of the email (repeatable)', collect)
    .option('--scheduled-at <time>', 'send later: an ISO-8601 time with its offset, or "in 1 hour" (at most 30 days)')
    .option('--idempotency-key <key>', 'a retry with the same key never sends twice')
    .option('--wait', 'follow the email to a final status and print its events')
    .option(
      '--batch <file>',
      'JSONL file of send requests; running it again within 24 hours sends only the lines not yet accepted',
    )
    .option('--batch-id <name>', "with --batch: a name for the batch's Idempotency-Keys in place of the file's path")
    .option('--skip-invalid', 'with --batch: send the valid lines even when some are invalid')
    .option('--concurrency <n>', 'with --batch: requests in flight at once', String(DEFAULT_CONCURRENCY))
    .option('--retries <n>', 'retries of a request refused with 429 or 5xx', '3')
    .action(lazy(async () => (await import('../send.ts')).send));
}

/** Backups of the data dir's database, online, and their restore. */
export function registerBackup(program: Command): void {
  command(program, 'backup', 'copy the database while the server runs (consistent, readable by its owner only)', [
    'svc backup /var/backups/svc-2026-11-26.sqlite',
    'svc backup svc.sqlite.bak --data-dir /var/lib/svc --json',
  ])
    .argument('<file>', 'a new file to write')
    .action(lazy(async () => (await import('../backup.ts')).backup));
  command(program, 'restore', "replace a stopped server's database with a backup", [
    'svc restore /var/backups/svc-2026-11-26.sqlite --data-dir /var/lib/svc --force',
  ])
    .argument('<file>', 'a backup made by svc backup')
    .option('--force', 'replace the database the data dir already holds')
    .action(lazy(async () => (await import('../backup.ts')).restore));
}

/** svc migrate: the schema brought to this binary's version, without starting a server. */
export function registerMigrate(program: Command): void {
  command(program, 'migrate', "bring the database's schema to this svc's version (svc serve also does at start)", [
    'svc migrate --data-dir /var/lib/svc',
    'svc migrate --database postgres://svc:secret@db.internal:5432/svc',
    'SVC_DATABASE_URL=postgres://svc@db.internal/svc svc migrate --json',
  ]).action(lazy(async () => (await import('../migrate.ts')).migrate));
}

/** svc db copy: the data dir's SQLite database into PostgreSQL, for several nodes. */
export function registerDb(program: Command): void {
  const db = command(program, 'db', 'move the database between stores', [
    'svc db copy --data-dir /var/lib/svc --database postgres://svc:secret@db.internal:5432/svc',
  ]);
  command(db, 'copy', "copy the data dir's SQLite database into an empty PostgreSQL one (resumable)", [
    'svc db copy --data-dir /var/lib/svc --database postgres://svc:secret@db.internal:5432/svc',
    'SVC_DATABASE_URL=postgres://svc@db.internal/svc svc db copy --json',
  ])
    .option('--batch <rows>', 'rows per transaction', '1000')
    .action(lazy(async () => (await import('../db-copy.ts')).dbCopy));
}

/** svc top: what the server is doing, from the data dir or through a running server. */
export function registerTop(program: Command): void {
  command(
    program,
    'top',
    'queue, throughput, destinations and the latest emails: live on a terminal, else one snapshot',
    [
      'svc top',
      'svc top --data-dir /var/lib/svc --json',
      'svc top --filter "bounced tag:welcome"',
      'svc top --server https://mail.example.com --api-key $READ_ONLY_KEY',
    ],
  )
    .option('--server <url>', "read a running server (GET /v1/top, the key's project) instead of the data dir")
    .option('--api-key <key>', 'with --server: a key that may read, READ_ONLY is enough (SVC_API_KEY)')
    .option('--filter <text>', 'latest emails only of a status, a recipient address or a tag (as / does)')
    .action(lazy(async () => (await import('../top.ts')).top));
}
