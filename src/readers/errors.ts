/** Why a reader rejected its input. */
export const PARSE_ERROR = {
  SYNTAX: 'SYNTAX',
  TRUNCATED: 'TRUNCATED',
  BAD_VALUE: 'BAD_VALUE',
  UNSUPPORTED: 'UNSUPPORTED',
  LIMIT: 'LIMIT',
} as const;
/** A {@link PARSE_ERROR} code. */
export type ParseErrorCode = (typeof PARSE_ERROR)[keyof typeof PARSE_ERROR];

/**
 * An input file that cannot be read as a clip. The message names the file, the place and
 * the problem, e.g. `walk.bvh:212: expected 132 channel values, got 131`.
 */
export class ParseError extends Error {
  override readonly name = 'ParseError';
  constructor(
    readonly file: string,
    /** 1-based line, or 0 when the place is not a line (binary formats). */
    readonly line: number,
    readonly problem: string,
    readonly code: ParseErrorCode = PARSE_ERROR.SYNTAX,
    /** 1-based column, or 0 when unknown. */
    readonly column = 0,
  ) {
    super(`${file}${line > 0 ? `:${line}` : ''}${line > 0 && column > 0 ? `:${column}` : ''}: ${problem}`);
  }
}
