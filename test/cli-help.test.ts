import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../src/cli/program.ts';
import { examplesOf } from '../src/cli/commands/kit.ts';
import { SVC_ENTRY } from './cli-runner.ts';

/** Every command of the tree with its path, root first. */
function walk(cmd: Command, path: string[] = ['svc']): { path: string[]; cmd: Command }[] {
  return [{ path, cmd }, ...cmd.commands.flatMap((c) => walk(c, [...path, c.name()]))];
}

function helpOf(cmd: Command): string {
  let out = '';
  cmd.configureOutput({ writeOut: (s) => (out += s) });
  cmd.outputHelp();
  return out;
}

/** The svc invocation of a shell example: its words after `svc`, without pipes, redirections or comments. */
function argvOf(example: string): string[] {
  const segment = example.split(/[|;]/).find((s) => /(^|\s)svc\s/.test(s + ' '))!;
  const words = segment.replace(/\s[<>#].*$/, '').match(/"[^"]*"|'[^']*'|\S+/g) ?? [];
  const unquoted = words.map((w) => w.replace(/^(["'])(.*)\1$/, '$2'));
  return unquoted.slice(unquoted.indexOf('svc') + 1);
}

/** The program with every action replaced by one that only records what ran. */
function dryProgram(ran: string[]): Command {
  const program = buildProgram();
  for (const { path, cmd } of walk(program)) {
    cmd.configureOutput({ writeOut: () => {}, writeErr: () => {} });
    if (cmd.commands.length === 0 && path.length > 1) cmd.action(() => void ran.push(path.join(' ')));
  }
  return program;
}

const commands = walk(buildProgram());

describe('svc --help', () => {
  it('covers the whole command tree', () => {
    expect(commands.length).toBeGreaterThan(40);
  });

  it.each(commands.map((c) => [c.path.join(' '), c.cmd] as const))(
    '%s has a one-line description and examples in its help',
    (_name, cmd) => {
      expect(cmd.description().trim()).not.toBe('');
      expect(cmd.description()).not.toContain('\n');
      expect(examplesOf(cmd).length).toBeGreaterThan(0);
      const help = helpOf(cmd);
      expect(help).toMatch(/\nExamples?:\n/);
      for (const e of examplesOf(cmd)) expect(help).toContain(e);
    },
  );

  it.each(commands.flatMap((c) => examplesOf(c.cmd).map((e) => [c.path.join(' '), e] as const)))(
    'the example of %s is valid usage of it: %s',
    async (name, example) => {
      const ran: string[] = [];
      const argv = argvOf(example);
      try {
        await dryProgram(ran).parseAsync(argv, { from: 'user' });
      } catch (e) {
        // Only `--help` may end the parse, and it exits 0.
        expect(e).toBeInstanceOf(CommanderError);
        expect((e as CommanderError).exitCode).toBe(0);
        return;
      }
      // A group's or the program's example runs one of its subcommands.
      expect(ran).toHaveLength(1);
      expect(ran[0]!.startsWith(name)).toBe(true);
    },
  );

  it('stops quietly when its reader goes away (svc serve --help | head -1)', async () => {
    const child = spawn(process.execPath, [SVC_ENTRY, 'serve', '--help']);
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});
