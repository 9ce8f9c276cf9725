#!/usr/bin/env node
/**
 * The `bonepress` command line. The program and its commands are built in program.ts (only
 * the command being run is loaded); each command lives in commands/, exit codes in
 * exit-status.ts and the error lines in exit-codes.ts. A `compress` run starts its worker
 * threads (argv.ts guesses how many) before the program is built: a worker takes about 0.4 s
 * to start, load and warm up the compressor.
 */
import { compressWorkersIn } from './argv.js';
import { EXIT } from './exit-status.js';

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
  const args = argv.slice(2);
  const workers = compressWorkersIn(args);
  // The batch takes these workers when it asks for as many; otherwise they are destroyed.
  const early = workers > 0 ? await import('../node/internal.js') : undefined;
  early?.startWorkersEarly(workers);
  const [{ CommanderError }, { createProgram }] = await Promise.all([import('commander'), import('./program.js')]);
  let program: Awaited<ReturnType<typeof createProgram>> | undefined;
  try {
    program = await createProgram(args);
    await program.parseAsync(args, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode === 0 ? EXIT.OK : EXIT.BAD_INPUT;
      return;
    }
    const debug = program?.opts<{ debug?: boolean }>().debug === true || argv.includes('--debug');
    // The error lines need the library's error types: loaded only when something failed.
    const { reportError } = await import('./exit-codes.js');
    process.exitCode = reportError(error, debug);
  } finally {
    await early?.releaseEarlyWorkers();
  }
  if (process.exitCode === EXIT.INTERRUPTED) process.exit(EXIT.INTERRUPTED); // a stopped read may keep the loop alive
}

await main(process.argv);
