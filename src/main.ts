#!/usr/bin/env node
// Entry: builds the commander program and runs it, nothing else. Each
// subcommand loads its modules lazily, so `svc --version` stays fast.
import { holdEarlySignals } from './lib/early-signals.ts';
import { useWritableNativeCache } from './lib/native-cache.ts';
import { reexecServerWithFlags, setServerV8Flags } from './lib/server-flags.ts';

// A reader that goes away early (`svc serve --help | head -1`) ends the output, not with a crash.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code !== 'EPIPE') throw e;
  process.exit(process.exitCode ?? 0);
});
// Before SQLite's addon loads: the packaged executable must extract it somewhere it can write.
useWritableNativeCache();
if (process.argv[2] === 'serve') {
  reexecServerWithFlags(process.argv);
  // Before the rest loads: a stop asked for during start-up is kept, not fatal (lib/early-signals.ts).
  holdEarlySignals();
  setServerV8Flags();
} else if (runsCommand(process.argv)) {
  // A command parses each of its inputs once: zod's compiled fast path for objects costs more
  // to build than it saves then (a server parses the same shapes for every request, and keeps it).
  // Read when a schema is built, so before the program's modules load; never for --version or
  // --help, which load no schema (scripts/check-exe.sh holds `svc --version` to its budget).
  const { config } = await import('zod');
  config({ jitless: true });
}

/** Whether argv runs a command (`svc keys list ...`), not only asks for help or the version. */
function runsCommand(argv: string[]): boolean {
  const [command, ...rest] = argv.slice(2);
  if (command === undefined || command.startsWith('-') || command === 'help') return false;
  return !rest.some((a) => a === '--help' || a === '-h' || a === 'help');
}
// Loaded after the signals are held: the program's modules are most of the start-up.
const { runCli } = await import('./cli/program.ts');
process.exitCode = await runCli(process.argv);
