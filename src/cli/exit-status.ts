/**
 * The process exit codes alone, so that main.ts can use them without loading the library
 * (exit-codes.ts, which maps errors to them, needs bonepress/node).
 */

/** Process exit codes. Part of the CLI contract: never renumber. */
export const EXIT = {
  /** Everything succeeded and every clip is within its error threshold. */
  OK: 0,
  /** The work ran, but a clip's error is above the threshold. */
  CHECK_FAILED: 1,
  /** An input, an option or a file could not be used (missing, malformed, mismatched). */
  BAD_INPUT: 2,
  /** A bug in bonepress (an unexpected exception); rerun with --debug for the stack. */
  INTERNAL: 70,
  /** Stopped by SIGINT or SIGTERM. */
  INTERRUPTED: 130,
} as const;
/** An {@link EXIT} value. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
