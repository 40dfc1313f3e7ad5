import { InvalidArgumentError, Option, type Argument, type Command } from 'commander';
import { printFailure } from '../io.ts';
import type { GlobalOptions } from '../context.ts';

export type Opts = Record<string, unknown> & GlobalOptions;

/** `svc send --batch --concurrency`: requests in flight at once, by default and at most. */
export const DEFAULT_CONCURRENCY = 8;
export const MAX_CONCURRENCY = 64;
type Action = (args: string[], opts: Opts) => Promise<void>;
/** The names of a module's exports that are command actions. */
export type ActionName<M> = { [K in keyof M]: M[K] extends Action ? K : never }[keyof M];

/** Wraps a lazily loaded action: modules load only when their command runs, keeping --version fast. */
export function lazy(load: () => Promise<Action>) {
  return async function (this: Command, ...received: unknown[]) {
    const cmd = received.at(-1) as Command;
    const opts = cmd.optsWithGlobals<Opts>();
    // An optional argument not given arrives as undefined: it stays absent, not "undefined".
    const args = received.slice(0, -2).filter((a): a is string => a !== undefined);
    try {
      await (
        await load()
      )(args, opts);
    } catch (e) {
      process.exitCode = printFailure(opts, e, pathOf(cmd));
    }
  };
}

/**
 * Makes an option or argument of fixed upper-case `values` take them in any case
 * (`--env live`, `LIVE`, `Live`), passing on the upper-case value.
 */
export function anyCase<T extends Option | Argument>(arg: T, values: readonly string[]): T {
  arg.choices(values);
  arg.argParser((v: string) => {
    const value = v.toUpperCase();
    if (!values.includes(value)) throw new InvalidArgumentError(`Allowed choices are ${values.join(', ')}.`);
    return value;
  });
  return arg;
}

/**
 * `--vars-file`, the one name of a JSON file of template variables, and the older
 * `--variables-file` kept as a hidden alias so no script breaks (decisions.md).
 */
export const varsFileOption = (description: string): Option => new Option('--vars-file <file>', description);
export const variablesFileAlias = (): Option => new Option('--variables-file <file>').hideHelp().conflicts('varsFile');

/** The file `--vars-file` (or its alias) names. */
export const varsFileOf = (opts: Record<string, unknown>): string | undefined =>
  [opts.varsFile, opts.variablesFile].find((v): v is string => typeof v === 'string');

/** `--all-projects`: a read command's server-wide view, instead of `--project` (cli/scope.ts). */
export const allProjectsOption = (): Option =>
  new Option('--all-projects', 'every project of every organization; each row names its project').conflicts('project');

/** `svc keys create`: the words that run `cmd`. */
export const pathOf = (cmd: Command): string => (cmd.parent ? `${pathOf(cmd.parent)} ${cmd.name()}` : cmd.name());

/** Collects a repeatable option's values. */
export const collect = (v: string, prev: string[] = []): string[] => [...prev, v];

const EXAMPLES = new WeakMap<Command, string[]>();

/**
 * Gives a command its one-line description and the examples its `--help`
 * ends with (cli.md: every command has `--help` with an example).
 */
export function document(cmd: Command, description: string, examples: string[]): Command {
  EXAMPLES.set(cmd, examples);
  const title = examples.length > 1 ? 'Examples' : 'Example';
  return cmd.description(description).addHelpText('after', `\n${title}:\n${examples.map((e) => `  ${e}`).join('\n')}`);
}

/** Adds a documented subcommand. */
export const command = (parent: Command, name: string, description: string, examples: string[]): Command =>
  document(parent.command(name), description, examples);

/** The examples given to `command`, for the generated CLI reference. */
export const examplesOf = (cmd: Command): readonly string[] => EXAMPLES.get(cmd) ?? [];
