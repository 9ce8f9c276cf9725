/**
 * `bonepress compress <inputs…> -o <dir>`: compresses every clip of every input into
 * `<dir>`, in parallel, and prints a summary table (or `--json`).
 */
import { availableParallelism } from 'node:os';
import { basename } from 'node:path';

import type { Command } from 'commander';

import type { LengthUnit } from '../../clip/units.js';
import { COMPRESS_DEFAULTS } from '../../compress/options.js';
import type { CompressStats } from '../../compress/index.js';
import type { FileFailure } from '../../node/failure.js';
import { compressFiles, shardInputs } from '../../node/pool.js';
import type { CompressFilesOptions, FileResult } from '../../node/worker.js';
import { EXIT, exitCodeOfFailure, failureText, worstExitCode, type ExitCode } from '../exit-codes.js';
import { runLibraryCompress } from './compress-library.js';
import { warningLine } from '../load.js';
import {
  collectShellBone, parseCountArg, parseLengthArg, parsePositiveArg, parseShardArg, parseUnitArg, type Shard,
} from '../parse.js';
import { renderJson } from '../render/json.js';
import { createProgress } from '../render/progress.js';
import { formatDistance, formatRatio, formatSeconds, renderTable, type Column } from '../render/table.js';

/** Options of `compress` as commander parses them. */
export interface CompressCliOptions {
  out: string;
  error: string;
  shell: string;
  shellBone?: Record<string, string>;
  unit?: LengthUnit;
  rate?: number;
  stripNames?: boolean;
  checksum: boolean;
  jobs: number;
  shard?: Shard;
  /** Library mode (compress-library.ts): cache folder. */
  cache?: string;
  /** Library mode: manifest file (turns the cache on, next to it, unless --cache says where). */
  manifest?: string;
  json?: boolean;
  /** The global --debug flag. */
  debug?: boolean;
}

/** One compressed clip in `compress --json`: the compressor's stats plus where it went. */
export interface CompressedClipEntry extends CompressStats {
  file: string;
  output: string;
  /** maxError ≤ threshold. */
  withinThreshold: boolean;
  /** What the reader skipped in the clip's input file (shared by all clips of that file); empty when nothing. */
  warnings: string[];
}

/** One failed input in `compress --json`: the failure plus the warnings heard before it. */
export interface CompressFailureEntry extends FileFailure {
  warnings: string[];
}

/** Totals of `compress --json`. */
export interface CompressTotal {
  /** Inputs attempted (after --shard). */
  files: number;
  clips: number;
  failures: number;
  /** Clips whose max error is above their threshold. */
  overThreshold: number;
  rawBytes: number;
  compressedBytes: number;
  /** rawBytes / compressedBytes (null in JSON when nothing was compressed). */
  ratio: number;
  /** Wall time of the batch. */
  seconds: number;
}

/** What `compress --json` prints. */
export interface CompressReport {
  clips: CompressedClipEntry[];
  failures: CompressFailureEntry[];
  total: CompressTotal;
}

/** Adds the `compress` command to `program`; help shows the library's defaults. */
export function registerCompressCommand(program: Command): void {
  program
    .command('compress')
    .description('compress clips (BVH, glTF/GLB, ACL SJSON) into .bpk files')
    .argument('<inputs...>', 'input files')
    .requiredOption('-o, --out <dir>', 'output folder (created when missing)')
    .option('--error <length>', 'largest allowed virtual-vertex error, with a unit', parseLengthArg, COMPRESS_DEFAULTS.error)
    .option('--shell <length>', 'virtual-vertex distance of every bone', parseLengthArg, COMPRESS_DEFAULTS.shell)
    .option('--shell-bone <name=length>', 'shell distance of one bone (repeatable), e.g. Hips=1m', collectShellBone)
    .option('--unit <unit>', 'length unit of the sources (mm, cm, m, in, ft); default per format (BVH cm, glTF m)', parseUnitArg)
    .option('--rate <hz>', 'resample keyframed sources (glTF) at this rate; default: detected from key times', parsePositiveArg)
    .option('--strip-names', 'leave out bone and clip names')
    .option('--no-checksum', 'do not write a CRC-32 of the file')
    .option('--jobs <n>', 'parallel jobs (1 = in-process)', parseCountArg, availableParallelism())
    .option('--shard <i/n>', 'compress only slice i of n of the sorted inputs (for CI matrices)', parseShardArg)
    .option('--cache <dir>', 'skip inputs already compressed with these settings, copying their outputs from this cache (docs/library.md)')
    .option('--manifest <file>', 'write a manifest of every input and output (docs/library.md); uses a cache next to it unless --cache')
    .option('--json', 'print one JSON object instead of the table')
    .addHelpText('after', [
      '',
      'Outputs are <out>/<input name>.bpk, or <out>/<input name>_<clip name>.bpk for inputs with several clips.',
      'Skipped glTF channels (outside the skeleton, morph weights, pointers) are warnings on stderr (--json: "warnings").',
      'Exit status: 0 when every input succeeded within the threshold, 1 when a clip is above it, 2 when an input failed.',
    ].join('\n'))
    .action(async (inputs: string[], _options: CompressCliOptions, command: Command) => {
      process.exitCode = await runCompress(inputs, command.optsWithGlobals<CompressCliOptions>());
    });
}

/**
 * Runs `compress`: compresses every input (a bad one is reported on stderr and the others
 * finish), prints the readers' warnings on stderr as `bonepress: <file>: warning: <message>`
 * in input order (with `--json` they are only in the report), prints the table or JSON, and
 * returns the exit code, which warnings never change: {@link EXIT.BAD_INPUT} when an input
 * failed, else {@link EXIT.CHECK_FAILED} when a clip is above its threshold, else
 * {@link EXIT.OK}; {@link EXIT.INTERRUPTED} on SIGINT/SIGTERM.
 */
export async function runCompress(inputs: readonly string[], options: CompressCliOptions): Promise<ExitCode> {
  const files = options.shard ? shardInputs(inputs, options.shard.index, options.shard.count) : [...inputs];
  const compressOptions: CompressFilesOptions = {
    error: options.error,
    shell: options.shell,
    stripNames: options.stripNames ?? COMPRESS_DEFAULTS.stripNames,
    checksum: options.checksum,
    read: {},
  };
  if (options.shellBone) compressOptions.shellBones = options.shellBone;
  if (options.unit !== undefined) compressOptions.read = { ...compressOptions.read, unit: options.unit };
  if (options.rate !== undefined) compressOptions.read = { ...compressOptions.read, sampleRate: options.rate };
  if (options.cache !== undefined || options.manifest !== undefined) return runLibraryCompress(files, compressOptions, options);

  const progress = createProgress({ total: files.length, enabled: !options.json });
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (controller.signal.aborted) {
      // A second signal means "now": the default action ends the process. A temp file may
      // stay behind, but no partial .bpk can exist.
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      process.kill(process.pid, signal);
      return;
    }
    controller.abort(new Error('interrupted'));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const started = performance.now();
  let results: FileResult[];
  try {
    progress.update(0);
    results = await compressFiles(files, compressOptions, {
      outDir: options.out,
      jobs: options.jobs,
      signal: controller.signal,
      onProgress: ({ done, result }) => progress.update(done, basename(result.file)),
    });
  } catch (error) {
    progress.finish();
    if (controller.signal.aborted) {
      process.stderr.write('bonepress: interrupted; completed .bpk files were kept, none is partial\n');
      return EXIT.INTERRUPTED;
    }
    throw error;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  progress.finish();
  const seconds = (performance.now() - started) / 1000;

  const report = buildReport(results, seconds);
  if (!options.json) process.stderr.write(warningLines(results));
  for (const failure of report.failures) process.stderr.write(failureText(failure, options.debug === true));
  for (const clip of report.clips) {
    if (!clip.withinThreshold) {
      process.stderr.write(`bonepress: ${clip.file}: clip "${clip.name}" max error ${formatDistance(clip.maxError, clip.unit)} is above the threshold ${formatDistance(clip.threshold, clip.unit)}\n`);
    }
  }
  process.stdout.write(options.json ? renderJson(report) : renderCompressTable(report));
  return worstExitCode([
    ...report.failures.map(exitCodeOfFailure),
    report.total.overThreshold > 0 ? EXIT.CHECK_FAILED : EXIT.OK,
  ]);
}

/** Gathers per-clip entries, failures and totals, in input order. */
export function buildReport(results: readonly FileResult[], seconds: number): CompressReport {
  const clips: CompressedClipEntry[] = [];
  const failures: CompressFailureEntry[] = [];
  for (const result of results) {
    if (!result.ok) {
      failures.push({ ...result.failure, warnings: [...result.warnings] });
      continue;
    }
    for (const { output, stats } of result.clips) {
      clips.push({ file: result.file, output, ...stats, withinThreshold: stats.maxError <= stats.threshold, warnings: [...result.warnings] });
    }
  }
  const rawBytes = clips.reduce((sum, c) => sum + c.rawBytes, 0);
  const compressedBytes = clips.reduce((sum, c) => sum + c.compressedBytes, 0);
  return {
    clips,
    failures,
    total: {
      files: results.length,
      clips: clips.length,
      failures: failures.length,
      overThreshold: clips.filter((c) => !c.withinThreshold).length,
      rawBytes,
      compressedBytes,
      ratio: compressedBytes > 0 ? rawBytes / compressedBytes : Number.NaN,
      seconds,
    },
  };
}

/** Every warning of `results` as a {@link warningLine} (`bonepress: <file>: warning: <message>`), in input order. */
export function warningLines(results: readonly FileResult[]): string {
  return results.flatMap((result) => result.warnings.map((message) => warningLine(result.file, message))).join('');
}

const COLUMNS: readonly Column[] = [
  { header: 'clip' },
  { header: 'bones', align: 'right' },
  { header: 'samples', align: 'right' },
  { header: 'raw bytes', align: 'right' },
  { header: 'compressed', align: 'right' },
  { header: 'ratio', align: 'right' },
  { header: 'max error', align: 'right' },
  { header: 'time', align: 'right' },
];

/** The summary table: one row per clip (named after its output file) and a TOTAL row. */
export function renderCompressTable(report: CompressReport): string {
  const body = report.clips.map((c) => [
    basename(c.output, '.bpk'),
    String(c.boneCount),
    String(c.sampleCount),
    String(c.rawBytes),
    String(c.compressedBytes),
    formatRatio(c.ratio),
    formatDistance(c.maxError, c.unit) + (c.withinThreshold ? '' : ' !'),
    formatSeconds(c.seconds),
  ]);
  const t = report.total;
  // A max over clips only means something when they share a unit.
  const units = new Set(report.clips.map((c) => c.unit));
  const worst = units.size === 1 ? formatDistance(Math.max(...report.clips.map((c) => c.maxError)), [...units][0]) : '';
  const label = `TOTAL (${t.clips} clip${t.clips === 1 ? '' : 's'}${t.failures > 0 ? `, ${t.failures} failed` : ''})`;
  const footer = [[label, '', String(report.clips.reduce((s, c) => s + c.sampleCount, 0)), String(t.rawBytes), String(t.compressedBytes), formatRatio(t.ratio), worst, formatSeconds(t.seconds)]];
  return renderTable(COLUMNS, { body, footer });
}
