import { Option, type Command } from 'commander';
import type * as Bounces from '../bounces.ts';
import { collect, command, lazy, type ActionName } from './kit.ts';

/** What the bounce classifier makes of a reply; no store is opened. */
export function registerBounces(program: Command): void {
  const bo = (name: ActionName<typeof Bounces>) => lazy(async () => (await import('../bounces.ts'))[name]);
  const b = command(program, 'bounces', 'how svc reads the replies of recipients’ mail servers', [
    'svc bounces classify "550 5.1.1 <ada@example.org>: Recipient address rejected: User unknown"',
  ]);
  command(b, 'classify', 'category, type, suppression and the rule that decided, for any reply text', [
    'svc bounces classify "550 5.1.1 <ada@example.org>: Recipient address rejected: User unknown"',
    'svc bounces classify "421 4.7.0 Try again later" --json',
    'svc bounces classify --code 550 "Sender address rejected: Domain not found" --stage rcpt --sender news@example.com',
  ])
    .argument(
      '<reply...>',
      'the reply as the server sent it, or as a DSN quotes it ("host mx.example said: 550 5.1.1 …"); its code is optional',
    )
    .option('--code <code>', 'the basic reply code, when the text gives none (2xx to 5xx)')
    .addOption(new Option('--stage <stage>', 'the command the reply answered').choices(['mail', 'rcpt', 'data']))
    .option(
      '--sender <address>',
      'one of our sender addresses (repeatable): a reply naming it is about the sender',
      collect,
    )
    .action(bo('classify'));
}
