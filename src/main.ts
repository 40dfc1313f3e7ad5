#!/usr/bin/env node
// Entry: builds the commander program and runs it, nothing else. Each
// subcommand loads its modules lazily, so `svc --version` stays fast.
import { runCli } from './cli/program.ts';

process.exitCode = await runCli(process.argv);
