import { Argument, Command, CommanderError, Option } from 'commander';
import { PLANS } from '../limits/plans.ts';
import { VERSION } from '../version.ts';
import { EXIT_USAGE, printFailure } from './io.ts';
import type { GlobalOptions } from './context.ts';
import type * as AdminActions from './admin.ts';

type Action = (args: string[], opts: Record<string, unknown> & GlobalOptions) => Promise<void>;
type Loader = () => Promise<Action>;

const collect = (v: string, prev: string[] = []) => [...prev, v];

/** Wraps a lazily loaded action: modules load only when their command runs, keeping --version fast. */
function run(load: Loader) {
  return async function (this: Command, ...received: unknown[]) {
    const cmd = received.at(-1) as Command;
    const opts = cmd.optsWithGlobals<Record<string, unknown> & GlobalOptions>();
    const args = received.slice(0, -2).map(String);
    try {
      await (
        await load()
      )(args, opts);
    } catch (e) {
      process.exitCode = printFailure(opts, e);
    }
  };
}

type AdminModule = typeof AdminActions;
const admin = (name: keyof AdminModule) => run(async () => (await import('./admin.ts'))[name]);

function group(program: Command, name: string, description: string): Command {
  return program.command(name).description(description);
}

function registerAccounts(program: Command): void {
  program
    .command('init')
    .description('create the owner user, organization, project and a TEST key')
    .requiredOption('--email <email>', 'owner email')
    .option('--password <password>', 'owner password')
    .option('--password-stdin', 'read the password from standard input')
    .option('--org <name>', 'organization name', 'Default')
    .option('--project <name>', 'project name', 'Default')
    .addOption(new Option('--plan <plan>').choices(PLANS).default('UNLIMITED'))
    .option('--accept-dpa', 'sign the data-processing agreement as the owner')
    .addHelpText('after', '\nExample:\n  svc init --email me@example.com --password-stdin --accept-dpa < pw.txt')
    .action(admin('init'));
  const users = group(program, 'users', 'users');
  users
    .command('create')
    .requiredOption('--email <email>')
    .option('--password <password>')
    .option('--password-stdin', 'read the password from standard input')
    .addHelpText('after', '\nExample:\n  svc users create --email dev@example.com --password s3cret-pass')
    .action(admin('createUser'));
  const orgs = group(program, 'orgs', 'organizations');
  orgs
    .command('create')
    .requiredOption('--name <name>')
    .requiredOption('--owner <email>')
    .addOption(new Option('--plan <plan>').choices(PLANS))
    .addHelpText('after', '\nExample:\n  svc orgs create --name Acme --owner me@example.com --plan PAID')
    .action(admin('createOrg'));
  orgs.command('list').action(admin('listOrgs'));
  orgs
    .command('set-plan')
    .argument('<org>')
    .addArgument(new Argument('<plan>').choices(PLANS))
    .action(admin('setPlan'));
  orgs.command('accept-dpa').argument('<org>').requiredOption('--user <email>').action(admin('acceptDpa'));
  const projects = group(program, 'projects', 'projects');
  projects
    .command('create')
    .requiredOption('--org <org>')
    .requiredOption('--name <name>')
    .action(admin('createProject'));
  projects.command('list').requiredOption('--org <org>').action(admin('listProjects'));
  projects
    .command('settings')
    .description("show or change a project's settings (click and open tracking)")
    .argument('<project>', 'project id or unique name')
    .addOption(new Option('--click-tracking <on|off>', 'rewrite links of LIVE emails').choices(['on', 'off']))
    .addOption(new Option('--open-tracking <on|off>', 'add an open pixel to LIVE emails').choices(['on', 'off']))
    .option('--org <org>', 'organization of the project, when its name is not unique')
    .addHelpText('after', '\nExample:\n  svc projects settings Web --org Acme --click-tracking on --open-tracking off')
    .action(admin('projectSettings'));
  const members = group(program, 'members', 'organization members');
  members
    .command('add')
    .requiredOption('--org <org>')
    .requiredOption('--email <email>')
    .addOption(new Option('--role <role>').choices(['OWNER', 'ADMIN', 'DEVELOPER', 'VIEWER']).makeOptionMandatory())
    .action(admin('addMember'));
  members.command('list').requiredOption('--org <org>').action(admin('listMembers'));
}

function registerKeys(program: Command): void {
  const keys = group(program, 'keys', 'API keys');
  keys
    .command('create')
    .requiredOption('--project <project>')
    .requiredOption('--name <name>')
    .addOption(new Option('--env <env>').choices(['LIVE', 'TEST']).default('LIVE'))
    .addOption(
      new Option('--permissions <p>').choices(['FULL_ACCESS', 'SENDING_ONLY', 'READ_ONLY']).default('FULL_ACCESS'),
    )
    .option('--expires-at <iso>', 'ISO-8601 expiry')
    .addHelpText(
      'after',
      '\nExample:\n  svc keys create --project Default --name ci --env TEST --permissions SENDING_ONLY',
    )
    .action(admin('createKey'));
  keys.command('list').requiredOption('--project <project>').option('--include-revoked').action(admin('listKeys'));
  keys.command('revoke').argument('<key_id>').action(admin('revokeKey'));
}

function registerTemplates(program: Command): void {
  const t = group(program, 'templates', 'stored templates');
  const tpl = (name: string) => run(async () => (await import('./templates.ts'))[name as 'create']);
  t.command('create')
    .requiredOption('--project <project>')
    .requiredOption('--name <name>')
    .requiredOption('--slug <slug>')
    .requiredOption('--subject <template>')
    .option('--html-file <file>')
    .option('--text-file <file>')
    .option('--variables-file <file>', 'JSON object of variable hints')
    .addHelpText(
      'after',
      '\nExample:\n  svc templates create --project Default --name Welcome --slug welcome --subject "Hi {{ name }}" --html-file w.html',
    )
    .action(tpl('create'));
  t.command('list').requiredOption('--project <project>').action(tpl('list'));
  t.command('show').argument('<template>', 'id or slug').requiredOption('--project <project>').action(tpl('show'));
  t.command('update')
    .argument('<template>', 'id or slug')
    .requiredOption('--project <project>')
    .option('--name <name>')
    .option('--subject <template>')
    .option('--html-file <file>')
    .option('--text-file <file>')
    .option('--variables-file <file>')
    .action(tpl('update'));
  t.command('delete').argument('<template>', 'id or slug').requiredOption('--project <project>').action(tpl('remove'));
}

function registerSuppressions(program: Command): void {
  const s = group(program, 'suppressions', 'the suppression list');
  const sup = (name: string) => run(async () => (await import('./suppressions.ts'))[name as 'add']);
  s.command('add')
    .argument('<email>')
    .requiredOption('--project <project>')
    .addOption(
      new Option('--reason <reason>').choices(['HARD_BOUNCE', 'COMPLAINT', 'UNSUBSCRIBE', 'MANUAL']).default('MANUAL'),
    )
    .addHelpText('after', '\nExample:\n  svc suppressions add bounced@example.com --project Default')
    .action(sup('add'));
  s.command('list')
    .requiredOption('--project <project>')
    .option('--limit <n>', 'at most n entries', '100')
    .action(sup('list'));
  s.command('remove').argument('<email>').requiredOption('--project <project>').action(sup('remove'));
  s.command('import')
    .argument('<file>', 'CSV with a header row: email[,reason]')
    .requiredOption('--project <project>')
    .action(sup('importCsv'));
  s.command('export')
    .requiredOption('--project <project>')
    .option('--output <file>', 'write CSV here')
    .action(sup('exportCsv'));
}

function registerEmails(program: Command): void {
  const e = group(program, 'emails', 'read emails');
  const em = (name: string) => run(async () => (await import('./emails.ts'))[name as 'list']);
  e.command('list')
    .requiredOption('--project <project>')
    .option('--status <status>')
    .option('--from-email <email>')
    .option('--to-email <email>')
    .option('--tag <tag>')
    .option('--from <iso>')
    .option('--to <iso>')
    .option('--limit <n>')
    .option('--before <id>')
    .option('--after <id>')
    .action(em('list'));
  e.command('show').argument('<id>').action(em('show'));
  e.command('events').argument('<id>').action(em('events'));
}

function registerDomains(program: Command): void {
  const d = group(program, 'domains', 'sending domains: DKIM key, DNS records, verification, project binding');
  const dom = (name: string) => run(async () => (await import('./domains.ts'))[name as 'add']);
  // The records name the server's host and verify asks its resolver: give the server's settings.
  const sub = (name: string, description: string) =>
    d
      .command(name)
      .description(description)
      .argument('<domain>', 'domain name or id')
      .option('--dns-servers <list>', 'host:port,... resolver for checks (SVC_DNS_SERVERS)')
      .option('--hostname <name>', 'the server host name SPF and return-path name (SVC_HOSTNAME)');
  sub('add', 'add a domain, make its DKIM key and print the records to publish')
    .requiredOption('--org <org>')
    .option('--project <project>', 'bind the domain to this project right away')
    .addHelpText('after', '\nExample:\n  svc domains add example.com --org Acme --project Web')
    .action(dom('add'));
  sub('show', 'a domain with its records, latest checks and warning')
    .addHelpText('after', '\nExample:\n  svc domains show example.com --json')
    .action(dom('show'));
  sub('verify', 'look the records up now and update the status')
    .addHelpText('after', '\nExample:\n  svc domains verify example.com --dns-servers 127.0.0.1:53')
    .action(dom('verify'));
  sub('bind', 'let a project send from the domain once verified')
    .requiredOption('--project <project>')
    .action(dom('bind'));
  sub('unbind', 'stop a project sending from the domain').requiredOption('--project <project>').action(dom('unbind'));
  sub('delete', 'delete the domain and its DKIM key').action(dom('remove'));
  d.command('list')
    .description("an organization's domains")
    .requiredOption('--org <org>')
    .option('--hostname <name>', 'the server host name (SVC_HOSTNAME)')
    .action(dom('list'));
}

function registerServeAndSend(program: Command): void {
  const serve = program.command('serve').description('run the HTTP API, SMTP relay, delivery and schedulers');
  for (const [flag, desc] of SERVE_FLAGS) serve.option(flag, desc);
  serve.addHelpText('after', '\nExample:\n  svc serve --data-dir /var/lib/svc --http-port 8080');
  serve.action(run(async () => (await import('./serve.ts')).serve));

  program
    .command('send')
    .description('send an email through a running server')
    .option('--server <url>', 'server URL (SVC_URL)')
    .option('--api-key <key>', 'API key (SVC_API_KEY)')
    .option('--from <email>')
    .option('--from-name <name>')
    .option('--to <email>', 'recipient (repeatable)', collect)
    .option('--cc <email>', 'cc (repeatable)', collect)
    .option('--bcc <email>', 'bcc (repeatable)', collect)
    .option('--reply-to <email>', 'reply-to (repeatable)', collect)
    .option('--subject <subject>')
    .option('--text <text>', 'text body, or - for standard input')
    .option('--html <html>')
    .option('--html-file <file>')
    .option('--template <slug>')
    .option('--var <k=v>', 'template variable (repeatable)', collect)
    .option('--vars-file <file>', 'JSON object of template variables')
    .option('--attach <file>', 'attachment (repeatable)', collect)
    .option('--tag <tag>', 'tag (repeatable)', collect)
    .option('--header <header>', "custom header 'K: V' (repeatable)", collect)
    .option('--idempotency-key <key>')
    .option('--wait', 'follow the email to a final status and print its events')
    .option('--batch <file>', 'JSONL file of send requests, sent in batches of 100')
    .addHelpText(
      'after',
      '\nExample:\n  svc send --api-key $KEY --from me@example.com --to you@example.com --subject Hi --text Hello',
    )
    .action(run(async () => (await import('./send.ts')).send));
}

const SERVE_FLAGS: [string, string][] = [
  ['--http-host <host>', 'HTTP listen address (SVC_HTTP_HOST)'],
  ['--http-port <port>', 'HTTP port (SVC_HTTP_PORT)'],
  ['--smtp-host <host>', 'SMTP relay listen address (SVC_SMTP_HOST)'],
  ['--smtp-port <port>', 'SMTP relay port, 0 = off (SVC_SMTP_PORT)'],
  ['--tls-cert <file>', 'TLS certificate for HTTPS and STARTTLS (SVC_TLS_CERT)'],
  ['--tls-key <file>', 'TLS key (SVC_TLS_KEY)'],
  ['--public-url <url>', 'public base URL for links (SVC_PUBLIC_URL)'],
  ['--hostname <name>', 'EHLO name, Message-ID domain (SVC_HOSTNAME)'],
  ['--dns-servers <list>', 'host:port,... for MX lookups (SVC_DNS_SERVERS)'],
  ['--mx-port <port>', 'port of recipient MX hosts (SVC_MX_PORT)'],
  ['--relay <url>', 'smtp[s]://user:pass@host:port smarthost (SVC_RELAY)'],
  ['--workers <n>', 'worker threads (SVC_WORKERS)'],
  ['--allow-insecure-webhooks', 'allow http:// and private webhook targets (development)'],
  ['--smtp-tls-insecure', 'accept self-signed MX/relay certificates'],
  ['--webhook-retry-schedule <list>', 'e.g. 1m,5m,30m,2h'],
  ['--delivery-retry-schedule <list>', 'e.g. 1m,5m,15m,30m,1h,2h,4h'],
  ['--delivery-max-age <duration>', 'e.g. 72h'],
  ['--delivery-concurrency <n>', 'SMTP transactions at once per destination domain (SVC_DELIVERY_CONCURRENCY)'],
  [
    '--delivery-connect-timeout <duration>',
    'connect + greeting limit per MX host, e.g. 30s (SVC_DELIVERY_CONNECT_TIMEOUT)',
  ],
  ['--delivery-timeout <duration>', 'SMTP session inactivity limit, e.g. 2m (SVC_DELIVERY_TIMEOUT)'],
  ['--log-level <level>', 'trace|debug|info|warn|error (SVC_LOG_LEVEL)'],
  ['--log-format <format>', 'json|pretty (SVC_LOG_FORMAT)'],
  ['--default-plan <plan>', 'plan of new organizations (SVC_DEFAULT_PLAN)'],
  ['--rate-limit-per-second <n>', 'per-key request rate for every key (SVC_RATE_LIMIT_PER_SECOND)'],
  ['--sandbox-domain <domain>', 'onboarding trial domain (SVC_SANDBOX_DOMAIN)'],
  ['--template-timeout <duration>', 'template render time limit (SVC_TEMPLATE_TIMEOUT)'],
  ['--domain-grace-period <duration>', 'failing records unverify a domain after, e.g. 72h (SVC_DOMAIN_GRACE_PERIOD)'],
  ['--domain-check-interval <duration>', 'time between domain checks, e.g. 1h (SVC_DOMAIN_CHECK_INTERVAL)'],
];

/** Builds the `svc` program. Subcommand modules are imported inside their actions. */
export function buildProgram(): Command {
  const program = new Command('svc')
    .description('svc: self-hosted transactional email in one executable')
    .version(VERSION, '-V, --version')
    .option('--data-dir <dir>', 'data directory (SVC_DATA_DIR, default ./svc-data)')
    .option('--config <file>', 'JSON config file (SVC_CONFIG)')
    .option('--json', 'print one JSON document')
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  registerAccounts(program);
  registerKeys(program);
  registerTemplates(program);
  registerSuppressions(program);
  registerEmails(program);
  registerDomains(program);
  registerServeAndSend(program);
  for (const c of program.commands) {
    c.exitOverride();
    for (const sub of c.commands) sub.exitOverride();
  }
  return program;
}

/** Runs the CLI and returns the exit code: 0 ok, 1 failed operation, 2 wrong usage. */
export async function runCli(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version exit 0; anything else commander refuses (a group
      // without its subcommand, a missing option, an unknown flag) is wrong usage.
      return e.exitCode === 0 ? 0 : EXIT_USAGE;
    }
    throw e;
  }
}
