/**
 * Errors as plain data: what crosses the worker pool and what `--json` prints. The CLI maps
 * a failure's `code` to an exit code (cli/exit-codes.ts).
 */
import { BonepressError } from '../shared/errors.js';

/** Why one input file failed. `message` is the problem without the file name. */
export interface FileFailure {
  readonly file: string;
  /** The error's own code (`SYNTAX`, `BAD_MAGIC`, `BAD_OPTION`, `ENOENT`…) or {@link INTERNAL_ERROR}. */
  readonly code: string;
  readonly message: string;
  /** Stack trace of an {@link INTERNAL_ERROR}, for `--debug`. */
  readonly stack?: string;
}

/** Code of a failure that is a bug in bonepress rather than a problem with the input. */
export const INTERNAL_ERROR = 'INTERNAL';

/** Code of a file whose output path another output of the batch also names, or that is an input. */
export const OUTPUT_CLASH = 'OUTPUT_CLASH';

/** Code of a file whose output path is a symbolic link (never replaced nor followed). */
export const OUTPUT_LINK = 'OUTPUT_LINK';

/** An output that may not be written; `code` is {@link OUTPUT_LINK} or {@link OUTPUT_CLASH}. */
export class OutputError extends BonepressError {
  override readonly name = 'OutputError';
  declare readonly code: typeof OUTPUT_CLASH | typeof OUTPUT_LINK;
  constructor(code: typeof OUTPUT_CLASH | typeof OUTPUT_LINK, message: string) {
    super(code, message);
  }
}

/** Readable problems for the Node system error codes a user is likely to hit. */
const SYSTEM_PROBLEMS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a directory',
  ENOTDIR: 'a parent of the path is not a directory',
  ENOSPC: 'no space left on device',
  EROFS: 'read-only file system',
  EMFILE: 'too many open files',
  ENAMETOOLONG: 'file name too long',
  EEXIST: 'already exists and is not a folder',
};

/** A Node system error (`fs` and friends): it carries an `E…` code and a `syscall`. */
export function isSystemError(error: unknown): error is NodeJS.ErrnoException & { code: string } {
  return (
    error instanceof Error &&
    typeof (error as NodeJS.ErrnoException).code === 'string' &&
    typeof (error as NodeJS.ErrnoException).syscall === 'string'
  );
}

/**
 * True when `error` is one of bonepress's errors about its input (a {@link BonepressError},
 * with a `code`) or a system error, i.e. the input or the environment is at fault rather
 * than bonepress.
 */
export function isInputError(error: unknown): boolean {
  return error instanceof BonepressError || isSystemError(error);
}

/**
 * The problem an error describes, without the file name its message may start with: a
 * {@link BonepressError}'s `detail` (`line 212: expected 132 channel values, got 131` for
 * a `ParseError`). A system error names its path unless that path is `file`. One line:
 * what does not print is escaped ({@link printable}).
 */
export function problemOf(error: unknown, file?: string): string {
  return printable(rawProblemOf(error, file));
}

function rawProblemOf(error: unknown, file: string | undefined): string {
  if (error instanceof BonepressError) return error.detail;
  if (isSystemError(error)) {
    const problem = SYSTEM_PROBLEMS[error.code] ?? `${error.syscall} failed (${error.code})`;
    // Name the path when it is not the input itself (an output file, an output folder).
    return error.path !== undefined && error.path !== file ? `${error.path}: ${problem}` : problem;
  }
  if (error instanceof Error) return error.message;
  return String(error);
}

/**
 * Turns anything thrown while handling `file` into a {@link FileFailure}. Typed bonepress
 * errors and system errors keep their code; anything else becomes {@link INTERNAL_ERROR}
 * and keeps its stack.
 */
export function toFailure(file: string, error: unknown): FileFailure {
  if (isInputError(error))
    return { file, code: String((error as { code: unknown }).code), message: problemOf(error, file) };
  const failure: FileFailure = { file, code: INTERNAL_ERROR, message: problemOf(error, file) };
  return error instanceof Error && error.stack !== undefined ? { ...failure, stack: error.stack } : failure;
}

/** Characters that do not print as themselves on one line: controls, format characters, surrogates, unassigned, U+FFFD. */
const UNPRINTABLE = /[\p{C}\uFFFD]/gu;

/**
 * `text` with every character that does not print as itself escaped (`\x0d`, `\u{fffd}`),
 * so a message quoting a file's bytes or a strange file name stays one clean line.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => {
    const code = c.codePointAt(0)!;
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
}

/** The first `max` characters of `text`, quoted, escaped by {@link printable}, with `…` when there were more. */
export function quoteExcerpt(text: string, max = 40): string {
  const chars = [...text];
  return `"${printable(chars.slice(0, max).join(''))}${chars.length > max ? '…' : ''}"`;
}
