#!/usr/bin/env node
/**
 * The `bonepress` command line: commander wiring only. Each command lives in commands/,
 * exit codes in exit-codes.ts.
 */
import { readFileSync } from 'node:fs';

import { Command, CommanderError } from 'commander';

import { registerBenchCommand } from './commands/bench.js';
import { registerCompressCommand } from './commands/compress.js';
import { registerDecompressCommand } from './commands/decompress.js';
import { registerInfoCommand } from './commands/info.js';
import { registerManifestCommand } from './commands/manifest.js';
import { registerNetsimCommand } from './commands/netsim.js';
import { registerSampleCommand } from './commands/sample.js';
import { registerVerifyCommand } from './commands/verify.js';
import { EXIT, reportError } from './exit-codes.js';

/** The package version, read from package.json next to dist/ (or src/). */
function packageVersion(): string {
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

/** Builds the `bonepress` program with every command registered. */
export function createProgram(): Command {
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
    });
  registerCompressCommand(program);
  registerVerifyCommand(program);
  registerInfoCommand(program);
  registerSampleCommand(program);
  registerDecompressCommand(program);
  registerBenchCommand(program);
  registerNetsimCommand(program);
  registerManifestCommand(program);
  // compress handles SIGINT/SIGTERM itself (workers, temp files); every other command ends
  // at once with the interrupted exit code, whatever it is blocked on.
  program.hook('preAction', (_program, action) => {
    if (action.name() === 'compress') return;
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(EXIT.INTERRUPTED));
  });
  return program;
}

/**
 * A reader that stops early (`bonepress decompress x.bpk -o - | head`) closes the pipe: that
 * ends the output the reader wanted, so the command ends quietly, as Unix tools do.
 */
function endQuietlyOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(EXIT.OK);
    throw error;
  });
}

async function main(argv: readonly string[]): Promise<void> {
  endQuietlyOnClosedPipe(process.stdout);
  const program = createProgram();
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode === 0 ? EXIT.OK : EXIT.BAD_INPUT;
      return;
    }
    const debug = program.opts<{ debug?: boolean }>().debug === true || argv.includes('--debug');
    process.exitCode = reportError(error, debug);
  }
  if (process.exitCode === EXIT.INTERRUPTED) process.exit(EXIT.INTERRUPTED); // a stopped read may keep the loop alive
}

await main(process.argv);
