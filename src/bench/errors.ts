/** The bench's typed error, shared by its stages. */
import { BonepressError } from '../shared/errors.js';

/** Codes of {@link BenchError}. */
export const BENCH_ERROR = {
  /** A corpus path is missing or unreadable. */
  BAD_CORPUS: 'BAD_CORPUS',
  /** The corpus holds no clip file, or no file could be read. */
  EMPTY_CORPUS: 'EMPTY_CORPUS',
  /** The baseline file is not a bench baseline. */
  BAD_BASELINE: 'BAD_BASELINE',
  /** No baseline file where one was needed. */
  NO_BASELINE: 'NO_BASELINE',
  /** The file given as native ACL's measurement is not one (speed.ts). */
  BAD_ACL: 'BAD_ACL',
} as const;
/** A {@link BENCH_ERROR} code. */
export type BenchErrorCode = (typeof BENCH_ERROR)[keyof typeof BENCH_ERROR];

/** The bench cannot run on what it was given (corpus, baseline). The CLI exits with 2. */
export class BenchError extends BonepressError {
  override readonly name = 'BenchError';
  declare readonly code: BenchErrorCode;
  constructor(code: BenchErrorCode, message: string) {
    super(code, message);
  }
}
