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
} else {
  // A command parses each of its inputs once: zod's compiled fast path for objects costs more
  // to build than it saves then (a server parses the same shapes for every request, and keeps it).
  // Read when a schema is built, so before the program's modules load.
  const { config } = await import('zod');
  config({ jitless: true });
}
// Loaded after the signals are held: the program's modules are most of the start-up.
const { runCli } = await import('./cli/program.ts');
process.exitCode = await runCli(process.argv);
