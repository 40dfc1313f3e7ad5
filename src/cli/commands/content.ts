import { Option, type Command } from 'commander';
import type * as Templates from '../templates.ts';
import type * as Suppressions from '../suppressions.ts';
import type * as Emails from '../emails.ts';
import type * as Inbound from '../inbound.ts';
import {
  allProjectsOption,
  anyCase,
  command,
  lazy,
  variablesFileAlias,
  varsFileOption,
  type ActionName,
} from './kit.ts';

const PROJECT = ['--project <project>', 'project id or unique name'] as const;

/** Stored templates. */
export function registerTemplates(program: Command): void {
  const tpl = (name: ActionName<typeof Templates>) => lazy(async () => (await import('../templates.ts'))[name]);
  const t = command(program, 'templates', "a project's stored templates (nunjucks), sent by slug", [
    'svc templates list --project Default',
  ]);
  command(t, 'create', 'create a template', [
    'svc templates create --project Default --name Welcome --slug welcome --subject "Hi {{ name }}" --html-file w.html',
    'svc templates create --project Default --name Reset --slug reset --subject "Your code" --text-file reset.txt',
  ])
    .requiredOption(...PROJECT)
    .requiredOption('--name <name>', 'display name')
    .requiredOption('--slug <slug>', 'the name sends use (lowercase, digits, -)')
    .requiredOption('--subject <template>', 'subject template')
    .option('--html-file <file>', 'HTML body template')
    .option('--text-file <file>', 'text body template')
    .addOption(varsFileOption('JSON object of variable hints'))
    .addOption(variablesFileAlias())
    .option('--is-layout', 'a layout: its bodies hold one {{ content }} slot that other templates fill')
    .option('--layout <layout>', 'the layout it is wrapped in (id or slug)')
    .action(tpl('create'));
  command(t, 'list', "list a project's templates", ['svc templates list --project Default --json'])
    .requiredOption(...PROJECT)
    .action(tpl('list'));
  command(t, 'show', 'a template with its bodies (its latest version), or one saved version', [
    'svc templates show welcome --project Default',
    'svc templates show welcome 2 --project Default',
  ])
    .argument('<template>', 'id or slug')
    // A positional version: `--version` is the program's own flag, wherever it is written.
    .argument('[version]', 'that saved version')
    .requiredOption(...PROJECT)
    .action(tpl('show'));
  command(t, 'update', 'save a new version of a template and publish it (or not, with --draft)', [
    'svc templates update welcome --project Default --subject "Welcome, {{ name }}"',
    'svc templates update welcome --project Default --html-file w2.html --draft',
    'svc templates update welcome --project Default --layout brand',
  ])
    .argument('<template>', 'id or slug')
    .requiredOption(...PROJECT)
    .option('--name <name>', 'display name')
    .option('--subject <template>', 'subject template')
    .option('--html-file <file>', 'HTML body template')
    .option('--text-file <file>', 'text body template')
    .addOption(varsFileOption('JSON object of variable hints'))
    .addOption(variablesFileAlias())
    .option('--layout <layout>', 'the layout it is wrapped in (id or slug)')
    .option('--no-layout', 'no layout')
    .option('--draft', 'save the version unpublished: sends keep the published one')
    .action(tpl('update'));
  command(t, 'versions', "a template's saved versions, newest first; the published one marked", [
    'svc templates versions welcome --project Default',
  ])
    .argument('<template>', 'id or slug')
    .requiredOption(...PROJECT)
    .action(tpl('versions'));
  command(t, 'publish', 'make a saved version the one sends use (an older one: a rollback)', [
    'svc templates publish welcome 3 --project Default',
  ])
    .argument('<template>', 'id or slug')
    .argument('<version>', 'the version to publish')
    .requiredOption(...PROJECT)
    .action(tpl('publish'));
  command(t, 'delete', 'delete a template', ['svc templates delete welcome --project Default'])
    .argument('<template>', 'id or slug')
    .requiredOption(...PROJECT)
    .action(tpl('remove'));
}

/** The suppression list. */
export function registerSuppressions(program: Command): void {
  const sup = (name: ActionName<typeof Suppressions>) => lazy(async () => (await import('../suppressions.ts'))[name]);
  const s = command(program, 'suppressions', "a project's suppression list: addresses svc never sends to", [
    'svc suppressions list --project Default',
  ]);
  command(s, 'add', 'suppress an address', [
    'svc suppressions add bounced@example.com --project Default',
    'svc suppressions add ada@example.org --project Default --reason UNSUBSCRIBE',
  ])
    .argument('<email>', 'the address')
    .requiredOption(...PROJECT)
    .addOption(
      anyCase(new Option('--reason <reason>', 'why'), ['HARD_BOUNCE', 'COMPLAINT', 'UNSUBSCRIBE', 'MANUAL']).default(
        'MANUAL',
      ),
    )
    .action(sup('add'));
  command(s, 'list', 'list suppressed addresses in address order', [
    'svc suppressions list --project Default --limit 20',
    'svc suppressions list --all-projects',
  ])
    .option(...PROJECT)
    .addOption(allProjectsOption())
    .option('--limit <n>', 'at most n entries', '100')
    .action(sup('list'));
  command(s, 'remove', 'send to an address again', ['svc suppressions remove ada@example.org --project Default'])
    .argument('<email>', 'the address')
    .requiredOption(...PROJECT)
    .action(sup('remove'));
  command(s, 'import', 'add the addresses of a CSV file; exits 1 if any line was refused', [
    'svc suppressions import bounces.csv --project Default',
  ])
    .argument('<file>', 'CSV with a header row: email[,reason]')
    .requiredOption(...PROJECT)
    .action(sup('importCsv'));
  command(s, 'export', 'write the list as CSV', [
    'svc suppressions export --project Default --output suppressions.csv',
    'svc suppressions export --project Default > suppressions.csv',
  ])
    .requiredOption(...PROJECT)
    .option('--output <file>', 'write CSV here (default: standard output)')
    .action(sup('exportCsv'));
}

/** Reading emails. */
export function registerEmails(program: Command): void {
  const em = (name: ActionName<typeof Emails>) => lazy(async () => (await import('../emails.ts'))[name]);
  const e = command(program, 'emails', "read a project's emails and their events", [
    'svc emails list --project Default --status FAILED',
  ]);
  command(e, 'list', 'list emails, newest first, with filters', [
    'svc emails list --project Default --status BOUNCED --limit 20',
    'svc emails list --project Default --to-email ada@example.org --from 2026-11-01T00:00:00Z --json',
    'svc emails list --all-projects --status SENDING',
  ])
    .option(...PROJECT)
    .addOption(allProjectsOption())
    .option('--status <status>', 'QUEUED|SENDING|SENT|DELIVERED|BOUNCED|COMPLAINED|FAILED|SIMULATED|CANCELED')
    .option('--from-email <email>', 'sender address')
    .option('--to-email <email>', 'recipient address')
    .option('--tag <tag>', 'a tag')
    .option('--metadata <key:value>', 'metadata holding this value under this key')
    .option('--from <iso>', 'created at or after')
    .option('--to <iso>', 'created at or before')
    .option('--limit <n>', 'page size')
    .option('--before <id>', 'the page before this email id')
    .option('--after <id>', 'the page after this email id')
    .action(em('list'));
  command(e, 'show', 'an email and where each recipient stands (attempts, next attempt, last reply)', [
    'svc emails show 0192f4c1-7c2e-7b3a-9d4e-5f6a7b8c9d0e',
  ])
    .argument('<id>', 'email id')
    .action(em('show'));
  command(e, 'events', "an email's events, oldest first", [
    'svc emails events 0192f4c1-7c2e-7b3a-9d4e-5f6a7b8c9d0e --json',
  ])
    .argument('<id>', 'email id')
    .action(em('events'));
  command(e, 'cancel', 'take a scheduled email out of the queue before it starts (it becomes CANCELED)', [
    'svc emails cancel 0192f4c1-7c2e-7b3a-9d4e-5f6a7b8c9d0e',
  ])
    .argument('<id>', 'email id')
    .action(em('cancel'));
  command(e, 'reschedule', 'move a scheduled email to another time before it starts', [
    'svc emails reschedule 0192f4c1-7c2e-7b3a-9d4e-5f6a7b8c9d0e --at 2026-12-01T09:00:00Z',
    'svc emails reschedule 0192f4c1-7c2e-7b3a-9d4e-5f6a7b8c9d0e --at "in 2 hours" --json',
  ])
    .argument('<id>', 'email id')
    .requiredOption('--at <time>', 'an ISO-8601 time with its offset, or "in 2 hours" (at most 30 days ahead)')
    .action(em('reschedule'));
}

/** Bounces saved by hand (support cases): the same processing as the inbound listener. */
export function registerInbound(program: Command): void {
  const ib = (name: ActionName<typeof Inbound>) => lazy(async () => (await import('../inbound.ts'))[name]);
  const i = command(program, 'inbound', 'bounces and reports mailed back to return paths', [
    'svc inbound process bounce.eml',
  ]);
  command(i, 'process', 'apply a saved bounce (DSN) as if it had come to the inbound listener', [
    'svc inbound process bounce.eml',
    'svc inbound process bounce.eml --to bounces+0192f4c17c2e7b3a9d4e5f6a7b8c9d0e-0123456789ab@bounces.example.com --json',
  ])
    .argument('<file>', 'the message as received (.eml)')
    .option('--to <address>', 'the return path it was sent to (default: the ones found in the message)')
    .action(ib('processFile'));
}
