/**
 * `bonepress compress <inputs…> -o <out>`: compresses every clip of every input (files, or
 * folders searched for clip files) into `<out>`, in parallel, and prints a summary table
 * (or `--json`).
 */
import { availableParallelism } from 'node:os';
import { basename, extname, relative } from 'node:path';

import { Option, type Command } from 'commander';

import {
  COMPRESS_DEFAULTS,
  EFFORTS,
  OptionsError,
  PARSE_ERROR,
  READ_LIMITS,
  convertLength,
  parseLength,
  type CompressStats,
  type Effort,
  type ErrorMetric,
  type LengthUnit,
} from '../../index.js';
import {
  OUTPUT_EXTENSION,
  READ_FILE_DEFAULTS,
  TRANSPORT_OUTPUT_EXTENSION,
  compressFiles,
  expandInputTree,
  isGltfPath,
  shardInputs,
  type InputFile,
  type CompressFilesOptions,
  type FileFailure,
  type FileResult,
} from '../../node/index.js';
import { resolveOutputTarget } from '../../node/internal.js';
import { declareCommand } from '../command-list.js';
import { EXIT, exitCodeOfFailure, failureText, worstExitCode, type ExitCode } from '../exit-codes.js';
import { runLibraryCompress } from './compress-library.js';
import { runGltfFolderCompress } from './compress-gltf-folder.js';
import {
  gltfOutputFormat,
  parseFallbackArg,
  parseFormatArg,
  runGltfCompress,
  type FallbackKind,
  type OutputFormat,
} from './compress-gltf.js';
import { warningLines } from '../load.js';
import {
  collectShellBone,
  parseCountArg,
  parseLengthArg,
  parseMetricArg,
  parsePositiveArg,
  parseShardArg,
  parseUnitArg,
  type Shard,
} from '../parse.js';
import { renderJson } from '../render/json.js';
import { createProgress } from '../render/progress.js';
import { formatDistance, formatRatio, formatSeconds, renderTable, type Column } from '../render/table.js';
import { abortOnSignals } from '../interrupt.js';
import { additiveOptions, parseAdditiveArg, parseAdditiveBaseArg, type AdditiveBaseSpec } from '../additive.js';

/** Options of `compress` as commander parses them. */
export interface CompressCliOptions {
  out: string;
  error: string;
  shell: string;
  shellBone?: Record<string, string>;
  /** What --error bounds: the three virtual vertices (default) or the whole shell sphere. */
  metric: ErrorMetric;
  /** How hard the bit-rate search works. */
  effort: Effort;
  unit?: LengthUnit;
  rate?: number;
  stripNames?: boolean;
  checksum: boolean;
  jobs: number;
  shard?: Shard;
  /** Every output straight into -o, whatever folder of a folder input its source is in. */
  flat?: boolean;
  /** Library mode (compress-library.ts): cache folder. */
  cache?: string;
  /** Library mode: manifest file (turns the cache on, next to it, unless --cache says where). */
  manifest?: string;
  json?: boolean;
  skipEmpty?: boolean;
  maxInputBytes: number;
  allowSpecialFiles?: boolean;
  /** Per-input caps (readers/options.ts READ_LIMITS): samples per clip, track bytes per clip. */
  maxSamples: number;
  maxBytes: number;
  allowExternalResources?: boolean;
  /** Global -q: only errors. */
  quiet?: boolean;
  /** Global -v: also each written output. */
  verbose?: boolean;
  /** The global --debug flag. */
  debug?: boolean;
  /** glb / gltf: write the glTF asset with compressed animations (compress-gltf.ts); bpk / bpt: loose clips. */
  format?: OutputFormat;
  /** Loose clips in the transport form (`.bpt`); the same as `--format bpt`. */
  transport?: boolean;
  /** glTF output: channels for loaders without the extension (`true`: original). */
  fallback?: boolean | FallbackKind;
  /** glTF output: compress morph weights and nodes outside the skins as extra bones (`--no-extras`: false). */
  extras?: boolean;
  /** glTF output: compress every animation, even one not made smaller (`--compress-all`). */
  compressAll?: boolean;
  /** `--additive [<frame>]`: additive clips against this frame (`true`: frame 0). */
  additive?: number | boolean;
  /** `--additive-base <file>[#animation][@time]`: the base of additive clips. */
  additiveBase?: AdditiveBaseSpec;
}

/** One compressed clip in `compress --json`: the compressor's stats plus where it went. */
export interface CompressedClipEntry extends CompressStats {
  file: string;
  /** Path of the written `.bpk` (`.bpt`), or `-` for standard output. */
  output: string;
  /** maxError ≤ threshold. */
  withinThreshold: boolean;
  /** What the reader skipped that concerns this clip (its own animation, or the whole file); empty when nothing. */
  warnings: string[];
}

/** One failed input in `compress --json`: the failure plus the warnings heard before it. */
export interface CompressFailureEntry extends FileFailure {
  warnings: string[];
}

/** One reader warning in `compress --json`, with the file it is about. */
export interface CompressWarningEntry {
  file: string;
  message: string;
}

/** An input `--skip-empty` left out: it holds nothing to compress. */
export interface SkippedEntry {
  file: string;
  message: string;
}

/** Totals of `compress --json`. */
export interface CompressTotal {
  /** Inputs attempted (after folders were searched and --shard applied). */
  files: number;
  clips: number;
  failures: number;
  /** Inputs left out by --skip-empty. */
  skipped: number;
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
  skipped: SkippedEntry[];
  /** Every reader warning once, in input order. */
  warnings: CompressWarningEntry[];
  total: CompressTotal;
}

/** Adds the `compress` command to `program`; help shows the library's defaults. */
export function registerCompressCommand(program: Command): void {
  declareCommand(program, 'compress')
    .requiredOption(
      '-o, --out <path>',
      'output folder (created when missing), a .bpk (.bpt) file for one clip, or - for stdout',
    )
    .option(
      '--error <length>',
      'largest allowed virtual-vertex error, with a unit (also the unit of printed errors)',
      parseLengthArg,
      COMPRESS_DEFAULTS.error,
    )
    .option('--shell <length>', 'virtual-vertex distance of every bone', parseLengthArg, COMPRESS_DEFAULTS.shell)
    .option('--shell-bone <name=length>', 'shell distance of one bone (repeatable), e.g. Hips=1m', collectShellBone)
    .option(
      '--metric <metric>',
      'what --error bounds: vertices (three virtual vertices per bone) or shell (every point of the shell sphere)',
      parseMetricArg,
      COMPRESS_DEFAULTS.metric,
    )
    .addOption(
      new Option(
        '--effort <level>',
        'bit-rate search effort: fast (fewer trials, a little larger), default, best (two finer searches per segment, a little smaller)',
      )
        .choices(EFFORTS)
        .default(COMPRESS_DEFAULTS.effort),
    )
    .option(
      '--unit <unit>',
      'length unit of the sources (mm, cm, m, in, ft); default per format (BVH cm, glTF m)',
      parseUnitArg,
    )
    .option(
      '--rate <hz>',
      'resample glTF/GLB inputs at this rate (refused for BVH and SJSON, which keep their own rate); default: detected from key times',
      parsePositiveArg,
    )
    .option('--strip-names', 'leave out bone and clip names')
    .option('--no-checksum', 'do not write a CRC-32 of the file')
    .option(
      '--jobs <n>',
      'parallel compression jobs (worker threads; 1 compresses one file at a time)',
      parseCountArg,
      availableParallelism(),
    )
    .option('--flat', 'write the outputs of folder inputs straight into -o instead of the same subfolders under it')
    .option('--shard <i/n>', 'compress only slice i of n of the sorted inputs (for CI matrices)', parseShardArg)
    .option(
      '--cache <dir>',
      'skip inputs already compressed with these settings, copying their outputs from this cache (docs/library.md)',
    )
    .option(
      '--manifest <file>',
      'write a manifest of every input and output (docs/library.md); uses a cache next to it unless --cache',
    )
    .option(
      '--max-input-bytes <n>',
      'refuse inputs (and glTF buffers) larger than this many bytes',
      parseCountArg,
      READ_FILE_DEFAULTS.maxInputBytes,
    )
    .option('--allow-special-files', 'also read devices, FIFOs and sockets (e.g. /dev/stdin), up to --max-input-bytes')
    .option(
      '--max-samples <n>',
      'refuse clips with more samples than this, before reading their tracks',
      parseCountArg,
      READ_LIMITS.maxSamples,
    )
    .option(
      '--max-bytes <n>',
      'refuse clips whose tracks would take more than this many bytes (40 per bone per sample)',
      parseCountArg,
      READ_LIMITS.maxBytes,
    )
    .option(
      '--allow-external-resources',
      "let glTF buffer URIs name files outside the asset's folder (absolute paths, .., links out)",
    )
    .option(
      '--additive [frame]',
      'store additive clips: deltas against this frame of each clip (default 0), as three.js makeClipAdditive; the error is that of the clip applied to its base (--additive-base, else the reference pose)',
      parseAdditiveArg,
    )
    .option(
      '--additive-base <file[#animation][@time]>',
      'base of additive clips (same skeleton): the pose at @time seconds, else the animation played alongside from time 0, looping; the error is measured over it. Without --additive, also the reference (its pose at @time, default its first)',
      parseAdditiveBaseArg,
    )
    .option('--skip-empty', 'skip inputs with nothing to compress (a glTF without animation) instead of failing')
    .option('--json', 'print one JSON object instead of the table')
    .option(
      '--format <format>',
      'glb or gltf: write the glTF asset with its animations compressed inside (docs/gltf-extension.md); bpk: loose clips; bpt: loose clips in the transport form (docs/transport.md). With -o folder/, every glTF input (also found in folder inputs) becomes folder/<subfolder>/<name>.glb (.gltf). Default: what -o ends with (.glb, .gltf, .bpt), else bpk',
      parseFormatArg,
    )
    .option(
      '--transport',
      'write loose clips in the transport form (.bpt, smaller to download; decoded to the exact .bpk bytes at load): --format bpt',
    )
    .option(
      '--fallback [kind]',
      'glTF output: channels for loaders without the extension (then optional): original (default) or quantized (the compressed clip decoded, 16-bit rotations)',
      parseFallbackArg,
    )
    .option(
      '--compress-all',
      'glTF output: compress every animation, even one whose compressed form would not be smaller than its channels (by default such an animation is kept as it is, with a warning)',
    )
    .option(
      '--no-extras',
      'glTF output: leave morph-target weights and animated nodes outside the skins (props, cameras) as plain channels instead of compressing them as extra bones',
    )
    .addHelpText(
      'after',
      [
        '',
        'Outputs: -o out/ writes out/<input name>.bpk, or out/<input name>_<clip name>.bpk for inputs with several clips',
        '(.bpt with --transport); a file found in a folder input goes to the same subfolder under out/ (lib/a/walk.bvh',
        'given as lib: out/a/walk.bpk) unless --flat. Missing folders are created.',
        '-o clip.bpk and -o - take a batch of exactly one clip. Every output is planned before any is written: two clips',
        'with one output path, an output that is an input (also through a link or another case of its name), or an output',
        'that is a symbolic link fail (OUTPUT_CLASH, OUTPUT_LINK) and nothing of them is written.',
        'Errors are printed in the unit of --error. Skipped glTF channels are warnings on stderr (--json: "warnings").',
        'Exit status: 0 when every input succeeded within the threshold, 1 when a clip is above it, 2 when an input failed.',
      ].join('\n'),
    )
    .action(async (inputs: string[], _options: CompressCliOptions, command: Command) => {
      process.exitCode = await runCompress(inputs, command.optsWithGlobals<CompressCliOptions>());
    });
}

/**
 * Runs `compress`: compresses every input (a bad one is reported on stderr and the others
 * finish), prints the readers' warnings on stderr as `bonepress: <file>: warning: <message>`
 * in input order (with `--json` they are only in the report; with `-q` nowhere), prints the
 * table or JSON, and returns the exit code, which warnings never change:
 * {@link EXIT.BAD_INPUT} when an input failed, else {@link EXIT.CHECK_FAILED} when a clip is
 * above its threshold, else {@link EXIT.OK}; {@link EXIT.INTERRUPTED} on SIGINT/SIGTERM.
 * Throws a usage error (exit 2) for options that cannot work together.
 */
export async function runCompress(inputs: readonly string[], options: CompressCliOptions): Promise<ExitCode> {
  const gltfFormat = gltfOutputFormat(options);
  const additive = options.additive !== undefined || options.additiveBase !== undefined;
  if (additive && (options.cache !== undefined || options.manifest !== undefined))
    throw new OptionsError(
      `--additive and --additive-base write clips, not a library; they cannot go with ${options.cache !== undefined ? '--cache' : '--manifest'}`,
    );
  if (gltfFormat !== undefined) {
    if (options.effort !== COMPRESS_DEFAULTS.effort)
      throw new OptionsError(
        '--effort applies to loose clips (.bpk, .bpt); glTF output compresses at the default effort',
      );
    if (options.cache !== undefined || options.manifest !== undefined) {
      throw new OptionsError(
        `--cache and --manifest build a folder of loose clips; glTF output (${options.format !== undefined ? `--format ${options.format}` : `-o ${options.out}`}) writes one asset`,
      );
    }
    if (options.transport)
      throw new OptionsError(
        `--transport writes loose .bpt clips; it cannot go with ${options.format !== undefined ? `--format ${options.format}` : `-o ${options.out}`}`,
      );
    if (options.out === '-' || isGltfPath(options.out)) return runGltfCompress(inputs, options, gltfFormat);
    if (options.additiveBase !== undefined)
      throw new OptionsError(
        `--additive-base with glTF output names an animation of the one input asset (-o x.glb); -o ${options.out} takes a batch`,
      );
    // -o names a folder: every glTF input, found in folders too, becomes an asset under it.
    return runGltfFolderCompress(await selectInputs(inputs, options), options, gltfFormat);
  }
  // Loose clips hold the skeleton only: there is nothing for --no-extras to leave out.
  if (options.extras === false)
    throw new OptionsError(
      '--no-extras applies to glTF output (-o x.glb, --format glb|gltf); loose clips never hold extra bones',
    );
  if (options.compressAll === true)
    throw new OptionsError(
      '--compress-all applies to glTF output (-o x.glb, --format glb|gltf); a loose clip is always written',
    );
  if (options.transport && options.format === 'bpk')
    throw new OptionsError('--transport writes .bpt clips; it cannot go with --format bpk');
  const transport =
    options.transport === true ||
    options.format === 'bpt' ||
    (options.format === undefined && extname(options.out).toLowerCase() === TRANSPORT_OUTPUT_EXTENSION);
  const extension = transport ? TRANSPORT_OUTPUT_EXTENSION : OUTPUT_EXTENSION;
  const selected = await selectInputs(inputs, options);
  const files = selected.map((input) => input.path);
  const subfolders = options.flat === true ? undefined : selected.map((input) => input.subfolder);
  const target = await resolveOutputTarget(options.out, extension, process.stdout);
  if (target.kind === 'stream') {
    if (options.json) throw new OptionsError(`-o - writes the ${extension} to stdout; --json cannot share it`);
    if (process.stdout.isTTY)
      throw new OptionsError(
        `-o - would write binary ${extension} data to the terminal; redirect stdout or give a file`,
      );
  }
  if (target.kind !== 'folder' && files.length > 1) {
    throw new OptionsError(`-o ${options.out} takes one clip, but there are ${files.length} inputs; give a folder`);
  }
  if (options.rate !== undefined) {
    const fixedRate = files.find((file) => !isGltfPath(file));
    if (fixedRate !== undefined) {
      throw new OptionsError(
        `--rate resamples glTF/GLB inputs only; ${fixedRate} keeps the rate it was sampled at (compress it without --rate)`,
      );
    }
  }
  const compressOptions: CompressFilesOptions = {
    error: options.error,
    shell: options.shell,
    metric: options.metric,
    effort: options.effort,
    stripNames: options.stripNames ?? COMPRESS_DEFAULTS.stripNames,
    checksum: options.checksum,
    transport,
    read: {
      maxInputBytes: options.maxInputBytes,
      allowSpecialFiles: options.allowSpecialFiles === true,
      maxSamples: options.maxSamples,
      maxBytes: options.maxBytes,
      allowExternalResources: options.allowExternalResources === true,
    },
  };
  if (options.shellBone) compressOptions.shellBones = options.shellBone;
  const additiveOption = await additiveOptions(options.additive, options.additiveBase, compressOptions.read ?? {});
  if (additiveOption) compressOptions.additive = additiveOption;
  if (options.unit !== undefined) compressOptions.read = { ...compressOptions.read, unit: options.unit };
  if (options.rate !== undefined) compressOptions.read = { ...compressOptions.read, sampleRate: options.rate };
  if (options.cache !== undefined || options.manifest !== undefined)
    return runLibraryCompress(files, subfolders, compressOptions, options);

  const quiet = options.quiet === true;
  const progress = createProgress({ total: files.length, enabled: !options.json && !quiet });
  const controller = new AbortController();
  const detachSignals = abortOnSignals(controller);
  const started = performance.now();
  let results: FileResult[];
  try {
    progress.update(0);
    results = await compressFiles(files, compressOptions, {
      out: target,
      subfolders,
      jobs: options.jobs,
      signal: controller.signal,
      onProgress: ({ done, result }) => progress.update(done, basename(result.file)),
    });
  } catch (error) {
    progress.finish();
    if (controller.signal.aborted) {
      process.stderr.write(
        `bonepress: interrupted; no output of this run was put in place, and no partial ${extension} exists\n`,
      );
      return EXIT.INTERRUPTED;
    }
    throw error;
  } finally {
    detachSignals();
  }
  progress.finish();
  const seconds = (performance.now() - started) / 1000;

  const report = buildReport(results, seconds, options.skipEmpty === true);
  const display = parseLength(options.error).unit;
  const stderr: string[] = [];
  if (!options.json && !quiet) stderr.push(resultWarningLines(results));
  for (const failure of report.failures) stderr.push(failureText(failure, options.debug === true));
  if (!quiet)
    for (const skipped of report.skipped) stderr.push(`bonepress: ${skipped.file}: skipped: ${skipped.message}\n`);
  for (const clip of report.clips) {
    if (!clip.withinThreshold) {
      stderr.push(
        `bonepress: ${clip.file}: clip "${clip.name}" max error ${formatDistance(clip.maxError, clip.unit, display)} is above the threshold ${formatDistance(clip.threshold, clip.unit, display)}\n`,
      );
    }
    if (options.verbose) stderr.push(`bonepress: ${clip.file}: wrote ${clip.output} (${clip.compressedBytes} bytes)\n`);
  }
  process.stderr.write(stderr.join(''));
  // With -o - stdout holds the .bpk; the table would corrupt it. When nothing compressed, an
  // empty table says nothing the error lines did not.
  if (options.json) process.stdout.write(renderJson(report));
  else if (!quiet && target.kind !== 'stream' && report.clips.length > 0)
    process.stdout.write(renderCompressTable(report, display, target.kind === 'folder' ? target.path : undefined));
  return worstExitCode([
    ...report.failures.map(exitCodeOfFailure),
    report.total.overThreshold > 0 ? EXIT.CHECK_FAILED : EXIT.OK,
  ]);
}

/** The files of `inputs` (folders searched, each file with its subfolder), then the slice `--shard` names. */
async function selectInputs(
  inputs: readonly string[],
  options: Pick<CompressCliOptions, 'shard'>,
): Promise<InputFile[]> {
  const tree = await expandInputTree(inputs);
  if (options.shard === undefined) return tree;
  const slice = new Set(
    shardInputs(
      tree.map((input) => input.path),
      options.shard.index,
      options.shard.count,
    ),
  );
  return tree.filter((input) => slice.has(input.path));
}

/**
 * Gathers per-clip entries, failures, skipped inputs, warnings and totals, in input order.
 * With `skipEmpty`, an input that holds no animation is skipped rather than failed.
 */
export function buildReport(results: readonly FileResult[], seconds: number, skipEmpty = false): CompressReport {
  const clips: CompressedClipEntry[] = [];
  const failures: CompressFailureEntry[] = [];
  const skipped: SkippedEntry[] = [];
  const warnings: CompressWarningEntry[] = [];
  for (const result of results) {
    for (const message of result.warnings) warnings.push({ file: result.file, message });
    if (!result.ok) {
      if (skipEmpty && result.failure.code === PARSE_ERROR.NO_ANIMATION)
        skipped.push({ file: result.file, message: result.failure.message });
      else failures.push({ ...result.failure, warnings: [...result.warnings] });
      continue;
    }
    for (const { output, stats, warnings: own } of result.clips) {
      clips.push({
        file: result.file,
        output,
        ...stats,
        withinThreshold: stats.maxError <= stats.threshold,
        warnings: [...own],
      });
    }
  }
  const rawBytes = clips.reduce((sum, c) => sum + c.rawBytes, 0);
  const compressedBytes = clips.reduce((sum, c) => sum + c.compressedBytes, 0);
  return {
    clips,
    failures,
    skipped,
    warnings,
    total: {
      files: results.length,
      clips: clips.length,
      failures: failures.length,
      skipped: skipped.length,
      overThreshold: clips.filter((c) => !c.withinThreshold).length,
      rawBytes,
      compressedBytes,
      ratio: compressedBytes > 0 ? rawBytes / compressedBytes : Number.NaN,
      seconds,
    },
  };
}

/** The warnings of `results`, in input order, each said once per file (load.ts `warningLines`). */
export function resultWarningLines(results: readonly FileResult[]): string {
  return results.map((result) => warningLines(result.file, result.warnings)).join('');
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

/** The summary table: one row per clip (named after its output file, with its folder under `outFolder`) and a TOTAL row; errors in `display` units. */
export function renderCompressTable(report: CompressReport, display?: LengthUnit, outFolder?: string): string {
  // Outputs of a folder tree are told apart by their folder under -o.
  const outputLabel = (output: string): string => {
    const path = outFolder !== undefined ? relative(outFolder, output) : basename(output);
    return path.slice(0, path.length - extname(path).length);
  };
  const body = report.clips.map((c) => [
    (c.output === '-' ? c.name : outputLabel(c.output)) + (c.additive ? ' (additive)' : ''),
    String(c.boneCount),
    String(c.sampleCount),
    String(c.rawBytes),
    String(c.compressedBytes),
    formatRatio(c.ratio),
    formatDistance(c.maxError, c.unit, display) + (c.withinThreshold ? '' : ' !'),
    formatSeconds(c.seconds),
  ]);
  const t = report.total;
  // A max over clips only means something in one unit: the display unit, else a shared one.
  const units = new Set(report.clips.map((c) => c.unit));
  let worst = '';
  if (display !== undefined) {
    worst = formatDistance(
      Math.max(
        0,
        ...report.clips.map((c) => convertLength({ value: c.maxError, unit: c.unit as LengthUnit }, display)),
      ),
      display,
    );
  } else if (units.size === 1) {
    worst = formatDistance(Math.max(...report.clips.map((c) => c.maxError)), [...units][0]);
  }
  const label = `TOTAL (${t.clips} clip${t.clips === 1 ? '' : 's'}${t.failures > 0 ? `, ${t.failures} failed` : ''}${t.skipped > 0 ? `, ${t.skipped} skipped` : ''})`;
  const footer = [
    [
      label,
      '',
      String(report.clips.reduce((s, c) => s + c.sampleCount, 0)),
      String(t.rawBytes),
      String(t.compressedBytes),
      formatRatio(t.ratio),
      worst,
      formatSeconds(t.seconds),
    ],
  ];
  return renderTable(COLUMNS, { body, footer });
}
