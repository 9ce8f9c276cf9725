/**
 * `compress` in library mode (`--cache <dir>` and/or `--manifest <file>`): an incremental,
 * resumable build over node/library.ts. It prints a summary of what the run did instead of
 * a row per clip (a library holds thousands); the manifest is the per-clip record.
 */
import { basename, dirname, join } from 'node:path';

import { OptionsError, PARSE_ERROR } from '../../index.js';
import {
  compressLibrary,
  type CompressFilesOptions,
  type LibraryResult,
  type ManifestShard,
} from '../../node/index.js';
import { EXIT, exitCodeOfFailure, failureText, worstExitCode, type ExitCode } from '../exit-codes.js';
import { warningLines } from '../load.js';
import { renderJson } from '../render/json.js';
import { createProgress } from '../render/progress.js';
import { formatDistance } from '../render/table.js';
import { abortOnSignals } from '../interrupt.js';

/** The cache folder used with `--manifest` and no `--cache`: next to the manifest. */
export const DEFAULT_CACHE_FOLDER = '.bonepress-cache';

/** The options library mode reads. */
export interface LibraryCliOptions {
  /** Output folder. */
  readonly out: string;
  readonly cache?: string;
  readonly manifest?: string;
  readonly jobs: number;
  readonly shard?: ManifestShard;
  readonly json?: boolean;
  /** Inputs with nothing to compress (`NO_ANIMATION`) are reported as skipped and do not fail the run; the manifest still lists them as failures. */
  readonly skipEmpty?: boolean;
  readonly quiet?: boolean;
  /** Global -v: also each output, written or taken from the cache. */
  readonly verbose?: boolean;
  readonly debug?: boolean;
}

/** What `compress --manifest … --json` prints: what the run did, and the manifest. */
export interface LibraryReport {
  readonly compressed: number;
  readonly cached: number;
  readonly outputsWritten: number;
  readonly manifestWritten: boolean;
  /** Wall time of the run. */
  readonly seconds: number;
  readonly manifest: LibraryResult['manifest'];
}

/** The cache folder of a run: `--cache`, else `<manifest folder>/.bonepress-cache`, else none. */
export function cacheFolderOf(options: Pick<LibraryCliOptions, 'cache' | 'manifest'>): string | undefined {
  if (options.cache !== undefined) return options.cache;
  if (options.manifest !== undefined) return join(dirname(options.manifest), DEFAULT_CACHE_FOLDER);
  return undefined;
}

/**
 * Runs an incremental build of `files` into the folder `options.out` (each in its
 * `subfolders` entry under it, when given), prints the failures
 * and clips above their threshold on stderr, then a summary (or `--json`), and returns the
 * exit code as `compress` does; {@link EXIT.INTERRUPTED} on SIGINT/SIGTERM (no manifest is
 * written then; every output in place is complete, and a rerun finishes the rest).
 */
export async function runLibraryCompress(
  files: readonly string[],
  subfolders: readonly string[] | undefined,
  compressOptions: CompressFilesOptions,
  options: LibraryCliOptions,
): Promise<ExitCode> {
  if (options.manifest !== undefined && (options.manifest === '-' || /[\\/]$/.test(options.manifest))) {
    throw new OptionsError(`--manifest names a file, got ${options.manifest}`);
  }
  if (options.out === '-' || /\.bp[kt]$/i.test(options.out)) {
    throw new OptionsError(`--cache and --manifest write a folder of outputs; -o ${options.out} names one file`);
  }
  const quiet = options.quiet === true;
  const progress = createProgress({ total: files.length, enabled: !options.json && !quiet });
  const controller = new AbortController();
  const detachSignals = abortOnSignals(controller);
  const started = performance.now();
  let result: LibraryResult;
  const fromCache = new Set<string>();
  try {
    progress.update(0);
    result = await compressLibrary(files, compressOptions, {
      outDir: options.out,
      subfolders,
      jobs: options.jobs,
      cacheDir: cacheFolderOf(options),
      manifestPath: options.manifest,
      shard: options.shard,
      signal: controller.signal,
      onProgress: ({ done, file, cached }) => {
        if (cached) fromCache.add(file);
        progress.update(done, basename(file));
      },
    });
  } catch (error) {
    progress.finish();
    if (controller.signal.aborted) {
      process.stderr.write(
        'bonepress: interrupted; outputs in place are complete, no manifest was written; rerun to finish\n',
      );
      return EXIT.INTERRUPTED;
    }
    throw error;
  } finally {
    detachSignals();
  }
  progress.finish();
  const seconds = (performance.now() - started) / 1000;

  const { manifest } = result;
  const stderr: string[] = [];
  const exitCodes: ExitCode[] = [];
  for (const entry of manifest.inputs) {
    if (!quiet && !options.json) stderr.push(warningLines(entry.input, entry.warnings ?? []));
    if (entry.failure && options.skipEmpty === true && entry.failure.code === PARSE_ERROR.NO_ANIMATION) {
      if (!quiet) stderr.push(`bonepress: ${entry.input}: skipped: ${entry.failure.message}\n`);
    } else if (entry.failure) {
      const failure = { file: entry.input, ...entry.failure };
      stderr.push(failureText(failure, options.debug === true));
      exitCodes.push(exitCodeOfFailure(failure));
    }
    for (const o of entry.outputs ?? []) {
      if (options.verbose && !quiet)
        stderr.push(
          `bonepress: ${entry.input}: ${fromCache.has(entry.input) ? 'from the cache' : 'compressed'}: ${o.path} (${o.bytes} bytes)\n`,
        );
      if (o.maxError > o.threshold) {
        stderr.push(
          `bonepress: ${entry.input}: clip "${o.clip}" max error ${formatDistance(o.maxError, o.unit)} is above the threshold ${formatDistance(o.threshold, o.unit)}\n`,
        );
        exitCodes.push(EXIT.CHECK_FAILED);
      }
    }
  }
  process.stderr.write(stderr.join(''));
  if (options.json) {
    const report: LibraryReport = {
      compressed: result.compressed,
      cached: result.cached,
      outputsWritten: result.outputsWritten,
      manifestWritten: result.manifestWritten,
      seconds,
      manifest,
    };
    process.stdout.write(renderJson(report));
  } else if (!quiet) {
    process.stdout.write(librarySummary(result, seconds, options.manifest));
  }
  return worstExitCode(exitCodes);
}

/** The text summary: inputs, what was compressed or copied, the totals and the manifest. */
export function librarySummary(result: LibraryResult, seconds: number, manifestPath: string | undefined): string {
  const t = result.manifest.total;
  const lines = [
    `${t.inputs} input${t.inputs === 1 ? '' : 's'}: ${result.compressed} compressed, ${result.cached} from the cache, ${t.failures} failed; ${result.outputsWritten} output${result.outputsWritten === 1 ? '' : 's'} written`,
    `${t.outputs} clip${t.outputs === 1 ? '' : 's'}: ${t.rawBytes} raw bytes -> ${t.bytes} bytes${t.ratio !== null ? ` (ratio ${t.ratio.toFixed(2)})` : ''}, ${t.overThreshold} above the threshold; ${seconds.toFixed(2)} s`,
  ];
  if (manifestPath !== undefined)
    lines.push(`manifest ${manifestPath} ${result.manifestWritten ? 'written' : 'unchanged'}`);
  return `${lines.join('\n')}\n`;
}
