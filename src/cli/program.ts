import { Command, CommanderError } from 'commander';
import { closestName } from '../lib/closest-name.ts';
import { VERSION } from '../version.ts';
import { EXIT_USAGE } from './io.ts';
import { registerAccounts, registerKeys } from './commands/accounts.ts';
import { registerBounces } from './commands/bounces.ts';
import { registerEmails, registerInbound, registerSuppressions, registerTemplates } from './commands/content.ts';
import { registerDomains } from './commands/domains.ts';
import { document, pathOf } from './commands/kit.ts';
import {
  registerBackup,
  registerDb,
  registerDoctor,
  registerMigrate,
  registerSend,
  registerServe,
  registerTop,
} from './commands/server.ts';
import { registerWebhooks } from './commands/webhooks.ts';
import { registerRoutes } from './commands/routes.ts';

/** Builds the `svc` program. Subcommand modules are imported inside their actions. */
export function buildProgram(): Command {
  const program = document(new Command('svc'), 'svc: self-hosted transactional email in one executable', [
    'svc serve                                  # first start: prints the owner and a TEST key',
    'svc keys create --project Default --name prod --env LIVE',
    'svc keys create --help                    # every command has help with examples',
  ])
    .version(VERSION, '-V, --version')
    .option('--data-dir <dir>', 'data directory (SVC_DATA_DIR, default ./svc-data)')
    .option('--database <url>', "PostgreSQL in place of the data dir's SQLite file (SVC_DATABASE_URL)")
    .option('--config <file>', 'JSON config file (SVC_CONFIG)')
    .option('--json', 'print one JSON document');
  registerAccounts(program);
  registerKeys(program);
  registerTemplates(program);
  registerSuppressions(program);
  registerEmails(program);
  registerInbound(program);
  registerBounces(program);
  registerDomains(program);
  registerWebhooks(program);
  registerRoutes(program);
  registerServe(program);
  registerDoctor(program);
  registerBackup(program);
  registerMigrate(program);
  registerDb(program);
  registerTop(program);
  registerSend(program);
  configureUsage(program);
  return program;
}

/**
 * Wrong usage prints one line and where help is (`run 'svc send --help'`), never the
 * whole help, and ends the parse with a CommanderError that runCli turns into exit 2.
 * A group run without its subcommand says which ones it has.
 */
function configureUsage(cmd: Command): void {
  cmd
    .exitOverride()
    .showHelpAfterError(`run '${pathOf(cmd)} --help'`)
    .configureOutput({
      writeErr: (s) => process.stderr.write(s),
      // commander puts its "did you mean" on a line of its own: one line says it all.
      outputError: (s, write) => write(s.replace(/\n\(Did you mean (.*)\)/, ' (did you mean $1)')),
    });
  if (cmd.commands.length > 0 && cmd.parent) {
    // An action of its own turns commander's implicit `help` subcommand off: keep it on.
    cmd.helpCommand(true);
    cmd.allowExcessArguments().action((_opts: unknown, self: Command) => {
      const names = self.commands.map((c) => c.name());
      const [given] = self.args;
      if (given === undefined) return self.error(`error: missing command: one of ${names.join(', ')}`);
      const near = closestName(given, names);
      self.error(`error: unknown command '${given}'${near ? ` (did you mean ${near}?)` : ''}`);
    });
  }
  for (const sub of cmd.commands) configureUsage(sub);
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
