import { BonepressError } from '../shared/errors.js';

export { BonepressError };

/**
 * Why a buffer is not a valid `.bpk` clip. Serialized in messages and JSON output:
 * never rename a code. The runtime writes codes as string literals (checked against
 * {@link FormatErrorCode}), so a page's bundle that never names this object leaves it out.
 */
export const FORMAT_ERROR = {
  TOO_SMALL: 'TOO_SMALL',
  BAD_MAGIC: 'BAD_MAGIC',
  UNSUPPORTED_VERSION: 'UNSUPPORTED_VERSION',
  BAD_SIZE: 'BAD_SIZE',
  BAD_CHECKSUM: 'BAD_CHECKSUM',
  BAD_HEADER: 'BAD_HEADER',
  BAD_OFFSET: 'BAD_OFFSET',
  BAD_SECTION: 'BAD_SECTION',
  BAD_VALUE: 'BAD_VALUE',
  BAD_ARGUMENT: 'BAD_ARGUMENT',
  UNSUPPORTED_PLATFORM: 'UNSUPPORTED_PLATFORM',
} as const;
/** A {@link FORMAT_ERROR} code. */
export type FormatErrorCode = (typeof FORMAT_ERROR)[keyof typeof FORMAT_ERROR];

/** A buffer that is not a valid `.bpk` clip; `byteOffset` is where the problem was found (-1: not a place). */
export class FormatError extends BonepressError {
  override readonly name = 'FormatError';
  declare readonly code: FormatErrorCode;
  /** Where the problem was found, -1 when it is not a place in the buffer. */
  declare readonly byteOffset: number;
  constructor(code: FormatErrorCode, message: string, byteOffset = -1) {
    super(code, byteOffset >= 0 ? `${message} (at byte ${byteOffset})` : message);
    this.byteOffset = byteOffset;
  }
}

/**
 * Throws UNSUPPORTED_VERSION unless `version` (of a `what`: `format`, `transport`, read at
 * byte `at`) is `current`, saying whether to compress again or to upgrade.
 */
export function expectVersion(what: string, version: number, current: number, at: number): void {
  if (version === current) return;
  throw new FormatError(
    'UNSUPPORTED_VERSION',
    version < current
      ? `${what} version ${version} is no longer supported (this build reads version ${current}); compress the source clip again`
      : `${what} version ${version} is newer than this build reads (version ${current}); upgrade bonepress`,
    at,
  );
}
