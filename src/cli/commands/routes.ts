import type { Command } from 'commander';
import type * as RouteActions from '../routes.ts';
import { command, lazy, type ActionName } from './kit.ts';

const ID = '0192f4c1-7c2e-7b3a-9d4e-5f6a7b8c9d0e';
const PROJECT = ['--project <project>', 'project id or unique name'] as const;

/** Receiving mail (issue 34): routes of a receiving domain's addresses, and the messages they took. */
export function registerRoutes(program: Command): void {
  const act = (name: ActionName<typeof RouteActions>) => lazy(async () => (await import('../routes.ts'))[name]);
  const withAction = (c: Command) =>
    c
      .option('--webhook <id>', 'POST each message to this webhook of the project (event email.received)')
      .option('--forward <addresses>', 'forward each message, as written and re-signed, to these (comma-separated)')
      .option('--hold', 'keep each message for the API (svc received list)');
  const r = command(
    program,
    'routes',
    "a project's routes: which received mail goes to a webhook, a forward or the API",
    ['svc routes list --project Default'],
  );
  withAction(
    command(r, 'add', 'route an address pattern of a receiving domain (svc domains update D --receiving on)', [
      `svc routes add --project Default --pattern support@example.com --webhook ${ID}`,
      "svc routes add --project Default --pattern 'reply+*@example.com' --webhook " + ID,
      "svc routes add --project Default --pattern '*@example.com' --forward ops@example.org",
      'svc routes add --project Default --pattern docs@example.com --hold',
    ])
      .requiredOption(...PROJECT)
      .requiredOption('--pattern <pattern>', 'an address, *@domain (every address) or prefix+*@domain'),
  ).action(act('add'));
  command(r, 'list', "list a project's routes", ['svc routes list --project Default --json'])
    .requiredOption(...PROJECT)
    .action(act('list'));
  withAction(
    command(r, 'update', "change a route's action", [`svc routes update ${ID} --project Default --hold`])
      .argument('<id>', 'route id')
      .requiredOption(...PROJECT),
  ).action(act('update'));
  command(r, 'remove', 'delete a route: its addresses are refused at RCPT from then on', [
    `svc routes remove ${ID} --project Default`,
  ])
    .argument('<id>', 'route id')
    .requiredOption(...PROJECT)
    .action(act('remove'));

  const m = command(program, 'received', "the messages a project's routes received", [
    'svc received list --project Default',
  ]);
  command(m, 'list', 'received messages, newest first, with what their route did', [
    'svc received list --project Default --outcome failed',
    'svc received list --project Default --q invoice --limit 20 --json',
  ])
    .requiredOption(...PROJECT)
    .option('--route <id>', 'only this route')
    .option('--outcome <outcome>', 'queued|forwarded|held|failed')
    .option('--q <text>', 'a part of the From address, the subject or a recipient')
    .option('--before <id>', 'the page after this message')
    .option('--limit <n>', 'page size (1 to 100, default 50)')
    .action(act('receivedList'));
  command(m, 'show', 'a received message: envelope, authentication results, text', [
    `svc received show ${ID} --project Default`,
    `svc received show ${ID} --project Default --json`,
  ])
    .argument('<id>', 'received message id')
    .requiredOption(...PROJECT)
    .action(act('receivedShow'));
  command(m, 'raw', 'the message as it arrived', [`svc received raw ${ID} --project Default --out message.eml`])
    .argument('<id>', 'received message id')
    .requiredOption(...PROJECT)
    .option('--out <file>', 'write it to this file (default: standard output)')
    .action(act('receivedRaw'));
  command(m, 'delete', 'delete a received message', [`svc received delete ${ID} --project Default`])
    .argument('<id>', 'received message id')
    .requiredOption(...PROJECT)
    .action(act('receivedDelete'));
}
