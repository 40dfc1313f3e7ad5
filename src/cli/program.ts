import { Command, CommanderError } from 'commander';
import { VERSION } from '../version.ts';

/** Builds the `svc` program. Subcommand modules are imported inside their actions. */
export function buildProgram(): Command {
  const program = new Command('svc')
    .description('svc: self-hosted transactional email in one executable')
    .version(VERSION, '-V, --version')
    .showHelpAfterError()
    .exitOverride();
  return program;
}

/** Runs the CLI and returns the exit code: 0 ok, 1 failed operation, 2 wrong usage. */
export async function runCli(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.version' || e.code === 'commander.helpDisplayed' || e.code === 'commander.help') return 0;
      return 2;
    }
    throw e;
  }
}
