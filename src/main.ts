#!/usr/bin/env node
// Entry: builds the commander program and runs it, nothing else. Each
// subcommand loads its modules lazily, so `svc --version` stays fast.
import { runCli } from './cli/program.ts';
import { reexecServerWithFlags, setServerV8Flags } from './lib/server-flags.ts';

// A reader that goes away early (`svc serve --help | head -1`) ends the output, not with a crash.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code !== 'EPIPE') throw e;
  process.exit(process.exitCode ?? 0);
});
if (process.argv[2] === 'serve') {
  reexecServerWithFlags(process.argv);
  setServerV8Flags();
}
process.exitCode = await runCli(process.argv);
