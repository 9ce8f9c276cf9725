/**
 * The `bonepress` program: commander wiring only. Only the command being run is loaded
 * (its module and the library parts it uses); the others are listed from command-list.ts,
 * which is all the top-level help shows of them. A run therefore starts without loading the
 * compressor for `--help`, or the network simulator and the bench for `compress`.
 */
import { readFileSync } from 'node:fs';

import { Command, Help } from 'commander';

import { commandNameIn } from './argv.js';
import { COMMANDS, declareCommand } from './command-list.js';
import { EXIT } from './exit-status.js';

/** The package version, read from package.json next to dist/ (or src/). */
function packageVersion(): string {
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

/** How {@link createProgram} loads commands. */
export interface ProgramOptions {
  /**
   * Which commands to register in full: the one `args` runs (default), every one, or none
   * (every command a stand-in; tests compare the help of each way and run a stand-in).
   */
  load?: 'selected' | 'all' | 'none';
}

/**
 * Builds the `bonepress` program for the arguments `args` (after `bonepress`): the command
 * they run is registered in full, every other one as a stand-in with its name, description
 * and arguments. Parse the program with `args` (`{ from: 'user' }`). A stand-in that runs
 * after all (arguments this function read differently from commander) loads its command and
 * parses `args` again.
 */
export async function createProgram(args: readonly string[], options: ProgramOptions = {}): Promise<Command> {
  const stubs = new WeakSet<Command>();
  const program = new Command('bonepress')
    .description('compress skeletal animation clips to a virtual-vertex error budget')
    .version(packageVersion(), '-V, --version')
    .option('-q, --quiet', 'print only errors: no progress, warnings, tables or summaries (--json still prints)')
    .option('-v, --verbose', 'also say what was read and written')
    .option('--debug', 'print stack traces with errors')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      // Usage errors print as one line, like every other failure.
      outputError: (text, write) => write(`bonepress: ${text.replace(/^error: /, '')}`),
    })
    .configureHelp({
      // A stand-in has no options of its own; its line shows the ones its command has.
      subcommandTerm(this: Help, command: Command): string {
        const term = Help.prototype.subcommandTerm.call(this, command);
        const entry = COMMANDS.find((e) => e.name === command.name());
        return stubs.has(command) && entry?.hasOptions === true
          ? term.replace(command.name(), `${command.name()} [options]`)
          : term;
      },
    });
  const load = options.load ?? 'selected';
  const selected = load === 'selected' ? commandNameIn(args) : undefined;
  for (const entry of COMMANDS) {
    if (load === 'all' || entry.name === selected) {
      (await entry.load())(program);
      continue;
    }
    const stub = declareCommand(program, entry.name)
      .helpOption(false)
      .allowUnknownOption()
      .allowExcessArguments()
      .action(async () => {
        await (await createProgram([entry.name])).parseAsync(args, { from: 'user' });
      });
    stubs.add(stub);
  }
  // compress handles SIGINT/SIGTERM itself (workers, temp files); every other command ends
  // at once with the interrupted exit code, whatever it is blocked on.
  program.hook('preAction', (_program, action) => {
    if (action.name() === 'compress' || stubs.has(action)) return;
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(EXIT.INTERRUPTED));
  });
  return program;
}
