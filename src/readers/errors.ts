import { BonepressError } from '../shared/errors.js';

/** Why a reader rejected its input. */
export const PARSE_ERROR = {
  SYNTAX: 'SYNTAX',
  TRUNCATED: 'TRUNCATED',
  BAD_VALUE: 'BAD_VALUE',
  UNSUPPORTED: 'UNSUPPORTED',
  LIMIT: 'LIMIT',
  /** A valid file with nothing to compress (a glTF without skeletal animation). */
  NO_ANIMATION: 'NO_ANIMATION',
} as const;
/** A {@link PARSE_ERROR} code. */
export type ParseErrorCode = (typeof PARSE_ERROR)[keyof typeof PARSE_ERROR];

/**
 * An input file that cannot be read as a clip. The message names the file, the place and
 * the problem, e.g. `walk.bvh:212: expected 132 channel values, got 131`.
 */
export class ParseError extends BonepressError {
  override readonly name = 'ParseError';
  declare readonly code: ParseErrorCode;
  declare readonly file: string;
  constructor(
    code: ParseErrorCode,
    /** The problem alone, without the file and the line. */
    readonly problem: string,
    file: string,
    /** 1-based line, or 0 when the place is not a line (binary formats). */
    readonly line = 0,
    /** 1-based column, or 0 when unknown. */
    readonly column = 0,
  ) {
    const at = line > 0 ? `line ${line}${column > 0 ? `, column ${column}` : ''}: ` : '';
    super(code, `${file}${line > 0 ? `:${line}` : ''}${line > 0 && column > 0 ? `:${column}` : ''}: ${problem}`, {
      file,
      detail: `${at}${problem}`,
    });
  }
}

/** Longest piece of the input an error message quotes, in characters. */
export const MAX_QUOTED_CHARS = 40;

/**
 * `text` cut for an error message: at most {@link MAX_QUOTED_CHARS} characters, and when
 * longer, an ellipsis and the full length (`"aaaa…" (200000000 characters)`), so a hostile
 * 200 MB token is never echoed. Quotes included.
 */
export function quoteText(text: string): string {
  if (text.length <= MAX_QUOTED_CHARS) return `"${text}"`;
  return `"${cutEnd(text)}…" (${text.length} characters)`;
}

/**
 * `text` as it is when it has at most {@link MAX_QUOTED_CHARS} characters, else cut like
 * {@link quoteText} (`aaaa… (200000000 characters)`), for messages that show it unquoted.
 */
export function cutText(text: string): string {
  return text.length <= MAX_QUOTED_CHARS ? text : `${cutEnd(text)}… (${text.length} characters)`;
}

/** The first {@link MAX_QUOTED_CHARS} characters, never ending on the first half of a surrogate pair. */
function cutEnd(text: string): string {
  const end = (text.charCodeAt(MAX_QUOTED_CHARS - 1) & 0xfc00) === 0xd800 ? MAX_QUOTED_CHARS - 1 : MAX_QUOTED_CHARS;
  return text.slice(0, end);
}
