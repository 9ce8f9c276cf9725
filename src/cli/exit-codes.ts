/**
 * Exit codes (defined in exit-status.ts) and the one line a failure prints on stderr: `bonepress: <file>: <problem>`.
 * No stack trace unless `--debug`.
 */
import { CommanderError } from 'commander';

import { INTERNAL_ERROR, type FileFailure } from '../node/index.js';
import { isInputError, printable, problemOf } from '../node/internal.js';
import { EXIT, type ExitCode } from './exit-status.js';

export { EXIT, type ExitCode };

/** An error raised while handling `file`, so that its line can name the file. */
export class FileScopedError extends Error {
  override readonly name = 'FileScopedError';
  constructor(
    readonly file: string,
    readonly error: unknown,
  ) {
    super(`${file}: ${problemOf(error, file)}`, { cause: error });
  }
}

/**
 * Runs `work`, wrapping whatever it throws in a {@link FileScopedError} for `file`.
 * Errors already scoped to a file pass through unchanged.
 */
export async function atFile<T>(file: string, work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw error instanceof FileScopedError ? error : new FileScopedError(file, error);
  }
}

/**
 * Exit code for an error: {@link EXIT.BAD_INPUT} for bonepress's typed input errors
 * (ParseError, FormatError, OptionsError, UnitError, PoseDumpError, ClipError, MetricError),
 * Node system errors (ENOENT…) and command-line usage errors; {@link EXIT.INTERNAL} for
 * anything else.
 */
export function exitCodeOf(error: unknown): ExitCode {
  const inner = error instanceof FileScopedError ? error.error : error;
  if (inner instanceof CommanderError) return inner.exitCode === 0 ? EXIT.OK : EXIT.BAD_INPUT;
  return isInputError(inner) ? EXIT.BAD_INPUT : EXIT.INTERNAL;
}

/** Exit code for a failure that crossed the worker pool as plain data. */
export function exitCodeOfFailure(failure: FileFailure): ExitCode {
  return failure.code === INTERNAL_ERROR ? EXIT.INTERNAL : EXIT.BAD_INPUT;
}

/** The most severe of `codes` (INTERRUPTED > INTERNAL > BAD_INPUT > CHECK_FAILED > OK). */
export function worstExitCode(codes: Iterable<ExitCode>): ExitCode {
  let worst: ExitCode = EXIT.OK;
  for (const code of codes) if (code > worst) worst = code;
  return worst;
}

/**
 * The stderr text of a failure: one line `bonepress: <file>: <problem>` (what does not
 * print escaped: failure.ts `printable`); an internal
 * failure says so and, with `debug`, adds its stack.
 */
export function failureText(failure: FileFailure, debug: boolean): string {
  const line = `bonepress: ${printable(failure.file)}: ${failure.code === INTERNAL_ERROR ? 'internal error: ' : ''}${printable(failure.message)}`;
  if (failure.code !== INTERNAL_ERROR) return `${line}\n`;
  let text = line;
  text += debug ? `\n${failure.stack ?? ''}\n` : ' (rerun with --debug for details)\n';
  return text;
}

/**
 * The stderr text of an error: one line `bonepress: <file>: <problem>` (or
 * `bonepress: <problem>` when no file is involved); with `debug`, the stack follows.
 * Internal errors add a hint to rerun with --debug.
 */
export function errorText(error: unknown, debug: boolean): string {
  const file = error instanceof FileScopedError ? error.file : undefined;
  const inner = error instanceof FileScopedError ? error.error : error;
  const problem = problemOf(inner, file);
  const internal = exitCodeOf(error) === EXIT.INTERNAL;
  let text = `bonepress: ${file !== undefined ? `${printable(file)}: ` : ''}${internal ? 'internal error: ' : ''}${printable(problem)}`;
  if (internal && !debug) text += ' (rerun with --debug for details)';
  text += '\n';
  if (debug && inner instanceof Error && inner.stack) text += inner.stack + '\n';
  return text;
}

/** Writes {@link errorText} of `error` to stderr and returns its {@link exitCodeOf}. */
export function reportError(error: unknown, debug: boolean): ExitCode {
  process.stderr.write(errorText(error, debug));
  return exitCodeOf(error);
}
