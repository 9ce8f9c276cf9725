/**
 * `bonepress verify <raw> <other>`: the object-space error of `other` (a `.bpk`, a pose dump
 * JSON or any source) against `raw`, with the same metric the compressor holds itself to.
 */
import { extname } from 'node:path';

import type { Command } from 'commander';

import {
  COMPRESS_DEFAULTS, ClipError, MetricError, OptionsError, compareClips, compareCompressed, parseLength, readPoseDump, type Comparison, type CompressOptions, type ErrorMetric, type LengthUnit, type RawClip, type ReadOptions,
} from '../../index.js';
import type { CompressedClip } from '../../runtime/index.js';
import { readInputFile } from '../../node/index.js';
import { EXIT, atFile, type ExitCode } from '../exit-codes.js';
import { openCompressedFile, readSingleClip } from '../load.js';
import { collectShellBone, parseLengthArg, parseMetricArg, parsePositiveArg, parseUnitArg } from '../parse.js';
import { renderJson } from '../render/json.js';
import { formatDistance, renderFields } from '../render/table.js';

/** Options of `verify` as commander parses them. */
export interface VerifyCliOptions {
  error: string;
  shell: string;
  shellBone?: Record<string, string>;
  /** What the threshold bounds (as given to `compress --metric`). */
  metric: ErrorMetric;
  /** Which clip of a multi-clip source (a glTF animation name) to take from each side. */
  clip?: string;
  /** Length unit of the raw source (as given to `compress --unit`). */
  unit?: LengthUnit;
  /** Resampling rate of a keyframed raw source (as given to `compress --rate`). */
  rate?: number;
  json?: boolean;
  quiet?: boolean;
}

/** What `verify --json` prints. Errors and threshold are in `unit` (the raw clip's). */
export interface VerifyResult {
  raw: string;
  other: string;
  boneCount: number;
  sampleCount: number;
  /** The metric of `maxError` and the errors below, but `shellMaxError`. */
  metric: ErrorMetric;
  /** Largest error at any time: at the samples and, for a .bpk, between them. */
  maxError: number;
  /** Largest whole-shell error (every point of each bone's shell sphere) where `maxError` is measured, whatever `metric`. */
  shellMaxError: number;
  /** For a .bpk: the largest error at the samples, and between them (¼, ½, ¾ of every interval). */
  sampleMaxError?: number;
  betweenMaxError?: number;
  p99Error: number;
  meanError: number;
  /** Name of the bone with the largest error at the samples. */
  worstBone: string;
  worstBoneIndex: number;
  worstSample: number;
  unit: LengthUnit;
  threshold: number;
  /** maxError ≤ threshold. */
  pass: boolean;
}

/** Adds the `verify` command to `program`. */
export function registerVerifyCommand(program: Command): void {
  program
    .command('verify')
    .description('measure the error of a clip (.bpk, pose dump .json, or a BVH/glTF/SJSON source) against its raw source')
    .argument('<raw>', 'the reference clip (BVH, glTF/GLB, ACL SJSON or pose dump)')
    .argument('<other>', 'the clip to measure: .bpk (or its transport form .bpt), pose dump .json, or any source format')
    .option('--error <length>', 'error threshold, with a unit (also the unit of printed errors)', parseLengthArg, COMPRESS_DEFAULTS.error)
    .option('--shell <length>', 'virtual-vertex distance of every bone', parseLengthArg, COMPRESS_DEFAULTS.shell)
    .option('--shell-bone <name=length>', 'shell distance of one bone (repeatable), e.g. Hips=1m', collectShellBone)
    .option('--metric <metric>', 'what the threshold bounds, as given to compress --metric: vertices or shell (the whole-shell error is printed either way)', parseMetricArg, COMPRESS_DEFAULTS.metric)
    .option('--unit <unit>', 'length unit of the raw source, as given to compress --unit', parseUnitArg)
    .option('--rate <hz>', 'resample a glTF raw source at this rate, as given to compress --rate', parsePositiveArg)
    .option('--clip <name>', 'the clip (glTF animation) to take from a file holding several; default: the name stored in the .bpk')
    .option('--json', 'print one JSON object instead of text')
    .addHelpText('after', '\nExit status: 0 when the max error is within the threshold, 1 above it, 2 on bad input.')
    .action(async (raw: string, other: string, _options: VerifyCliOptions, command: Command) => {
      process.exitCode = await runVerify(raw, other, command.optsWithGlobals<VerifyCliOptions>());
    });
}

/**
 * Runs `verify`: prints the report and returns {@link EXIT.OK} within the threshold,
 * {@link EXIT.CHECK_FAILED} above it. Throws (scoped to the file at fault) on bad input.
 * A `.bpk` is opened (validated) first and its shape compared before anything is decoded.
 */
export async function runVerify(rawFile: string, otherFile: string, options: VerifyCliOptions): Promise<ExitCode> {
  const read: ReadOptions = {};
  if (options.unit !== undefined) read.unit = options.unit;
  if (options.rate !== undefined) read.sampleRate = options.rate;
  const compressOptions: CompressOptions = { error: options.error, shell: options.shell, metric: options.metric };
  if (options.shellBone) compressOptions.shellBones = options.shellBone;
  const isCompressed = ['.bpk', '.bpt'].includes(extname(otherFile).toLowerCase());
  const compressed = isCompressed ? await openCompressedFile(otherFile) : undefined;
  // A multi-clip source needs no --clip when the .bpk says which clip it holds.
  const raw = await readSingleClip(rawFile, read, { name: options.clip, preferred: compressed?.name });
  if (compressed && compressed.unit !== raw.unit && options.unit === undefined && options.quiet !== true) {
    process.stderr.write(`bonepress: note: ${otherFile} stores ${compressed.unit}, and ${rawFile} reads as ${raw.unit}; if it was compressed with --unit ${compressed.unit}, verify with --unit ${compressed.unit}\n`);
  }
  const comparison = await atFile(otherFile, async () => {
    try {
      if (compressed) return compareCompressed(raw, compressed, compressOptions, rawFile);
      const other = await readOther(otherFile, raw, options.clip);
      return compareClips(raw, other, compressOptions, rawFile);
    } catch (error) {
      if (error instanceof ClipError && error.code === 'NO_SUCH_BONE') throw new OptionsError(`--shell-bone: ${error.message}`);
      if (error instanceof MetricError && compressed) throw withRateHint(error, compressed, raw, options);
      throw error;
    }
  });
  const result = toResult(rawFile, otherFile, comparison);
  if (options.json) process.stdout.write(renderJson(result));
  else if (options.quiet !== true) process.stdout.write(renderVerify(result, parseLength(options.error).unit));
  return result.pass ? EXIT.OK : EXIT.CHECK_FAILED;
}

/** A sample-count mismatch against a `.bpk` made at another rate says which `--rate` to give. */
function withRateHint(error: MetricError, compressed: CompressedClip, raw: RawClip, options: VerifyCliOptions): MetricError {
  if (options.rate !== undefined || compressed.sampleCount === raw.sampleCount || compressed.sampleRate === raw.sampleRate) return error;
  return new MetricError(`${error.message}; it was compressed at ${compressed.sampleRate} Hz: verify with --rate ${compressed.sampleRate}`);
}

/** Reads a pose dump (which takes the raw clip's hierarchy) or any other source. */
async function readOther(file: string, raw: RawClip, clipName: string | undefined): Promise<RawClip> {
  if (extname(file).toLowerCase() === '.json') {
    return atFile(file, async () => readPoseDump(new TextDecoder().decode(await readInputFile(file)), file, raw.skeleton, raw.unit));
  }
  return readSingleClip(file, {}, { name: clipName });
}

function toResult(raw: string, other: string, report: Comparison): VerifyResult {
  return {
    raw,
    other,
    boneCount: report.boneCount,
    sampleCount: report.sampleCount,
    metric: report.metric,
    maxError: report.maxError,
    shellMaxError: report.shellMaxError,
    ...(report.betweenMaxError !== undefined ? { sampleMaxError: report.sampleMaxError, betweenMaxError: report.betweenMaxError } : {}),
    p99Error: report.p99Error,
    meanError: report.meanError,
    worstBone: report.worstBoneName,
    worstBoneIndex: report.worstBone,
    worstSample: report.worstSample,
    unit: report.unit,
    threshold: report.threshold,
    pass: report.pass,
  };
}

function renderVerify(r: VerifyResult, display: LengthUnit): string {
  return renderFields([
    ['raw', r.raw],
    ['other', r.other],
    ['bones', String(r.boneCount)],
    ['samples', String(r.sampleCount)],
    ...(r.betweenMaxError !== undefined
      ? [
        ['max error', formatDistance(r.maxError, r.unit, display)] as [string, string],
        ['at samples', `${formatDistance(r.sampleMaxError!, r.unit, display)} (bone ${r.worstBone}, sample ${r.worstSample})`] as [string, string],
        ['between samples', formatDistance(r.betweenMaxError, r.unit, display)] as [string, string],
      ]
      : [['max error', `${formatDistance(r.maxError, r.unit, display)} (bone ${r.worstBone}, sample ${r.worstSample})`] as [string, string]]),
    ...(r.metric === 'shell' ? [] : [['whole-shell error', formatDistance(r.shellMaxError, r.unit, display)] as [string, string]]),
    ['p99 error', formatDistance(r.p99Error, r.unit, display)],
    ['mean error', formatDistance(r.meanError, r.unit, display)],
    ['threshold', formatDistance(r.threshold, r.unit, display)],
    ['metric', r.metric === 'shell' ? 'shell (every point of the shell sphere)' : 'vertices (three virtual vertices per bone)'],
    ['result', r.pass ? 'PASS' : 'FAIL: max error above the threshold'],
  ]);
}
