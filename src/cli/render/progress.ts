/**
 * A one-line progress bar on stderr for batch commands. It draws only on a terminal and
 * never in `--json` mode, so pipes and logs stay clean.
 */

/** A progress bar; every method is a no-op when disabled. */
export interface Progress {
  /** Redraws with `done` of the total finished; `label` names the latest item. */
  update(done: number, label?: string): void;
  /** Erases the bar so that what follows starts on a clean line. */
  finish(): void;
}

/** Options of {@link createProgress}. */
export interface ProgressOptions {
  readonly total: number;
  /** Default: true when `stream` is a TTY. Pass false for `--json`. */
  readonly enabled?: boolean;
  /** Default `process.stderr`. */
  readonly stream?: NodeJS.WriteStream;
}

const BAR_WIDTH = 24;

/** Creates a progress bar for `total` items (see {@link ProgressOptions} for when it draws). */
export function createProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  const enabled = (options.enabled ?? true) && stream.isTTY === true && options.total > 0;
  if (!enabled) return { update() {}, finish() {} };
  const total = options.total;
  let drawn = false;
  return {
    update(done: number, label = '') {
      const filled = Math.round((BAR_WIDTH * Math.min(done, total)) / total);
      const columns = stream.columns ?? 80;
      let text = `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${done}/${total} ${label}`;
      if (text.length > columns - 1) text = text.slice(0, Math.max(0, columns - 1));
      stream.write(`\r\x1b[K${text}`);
      drawn = true;
    },
    finish() {
      if (drawn) stream.write('\r\x1b[K');
      drawn = false;
    },
  };
}
