/**
 * `bonepress verify <raw> <other>`: the object-space error of `other` (a BVH, a pose dump
 * JSON or a `.bpk`) against `raw`, with the same metric the compressor holds itself to.
 */
import { extname } from 'node:path';

import type { Command } from 'commander';

import { readPoseDump } from '../../clip/pose-dump.js';
import type { RawClip } from '../../clip/raw-clip.js';
import { ClipError, resolveShellDistances } from '../../clip/skeleton.js';
import { convertLength, parseLength, type Length, type LengthUnit } from '../../clip/units.js';
import { MetricError, measureClipError, type ErrorReport } from '../../compress/error-metric.js';
import { COMPRESS_DEFAULTS, OptionsError } from '../../compress/options.js';
import { decompressClip } from '../../compress/verify.js';
import { readInputFile } from '../../node/files.js';
import { EXIT, atFile, type ExitCode } from '../exit-codes.js';
import { anonymousBoneName, openCompressedFile, readSingleClip } from '../load.js';
import { collectShellBone, parseLengthArg } from '../parse.js';
import { renderJson } from '../render/json.js';
import { formatDistance, renderFields } from '../render/table.js';

/** Options of `verify` as commander parses them. */
export interface VerifyCliOptions {
  error: string;
  shell: string;
  shellBone?: Record<string, string>;
  /** Which clip of a multi-clip source (a glTF animation name) to take from each side. */
  clip?: string;
  json?: boolean;
}

/** What `verify --json` prints. Errors and threshold are in `unit` (the raw clip's). */
export interface VerifyResult {
  raw: string;
  other: string;
  boneCount: number;
  sampleCount: number;
  maxError: number;
  p99Error: number;
  meanError: number;
  /** Name of the bone with the largest error. */
  worstBone: string;
  worstBoneIndex: number;
  worstSample: number;
  unit: LengthUnit;
  threshold: number;
  /** maxError ≤ threshold. */
  pass: boolean;
}

/** Relative difference under which two sample rates are the same rate. */
const RATE_TOLERANCE = 1e-6;

/** Adds the `verify` command to `program`. */
export function registerVerifyCommand(program: Command): void {
  program
    .command('verify')
    .description('measure the error of a clip (BVH, pose dump .json or .bpk) against its raw source')
    .argument('<raw>', 'the reference clip (BVH, glTF, ACL SJSON or pose dump)')
    .argument('<other>', 'the clip to measure: .bpk, pose dump .json, or any source format')
    .option('--error <length>', 'error threshold, with a unit', parseLengthArg, COMPRESS_DEFAULTS.error)
    .option('--shell <length>', 'virtual-vertex distance of every bone', parseLengthArg, COMPRESS_DEFAULTS.shell)
    .option('--shell-bone <name=length>', 'shell distance of one bone (repeatable), e.g. Hips=1m', collectShellBone)
    .option('--clip <name>', 'the clip (glTF animation) to take from a file holding several')
    .option('--json', 'print one JSON object instead of text')
    .addHelpText('after', '\nExit status: 0 when the max error is within the threshold, 1 above it, 2 on bad input.')
    .action(async (raw: string, other: string, options: VerifyCliOptions) => {
      process.exitCode = await runVerify(raw, other, options);
    });
}

/**
 * Runs `verify`: prints the report and returns {@link EXIT.OK} within the threshold,
 * {@link EXIT.CHECK_FAILED} above it. Throws (scoped to the file at fault) on bad input.
 */
export async function runVerify(rawFile: string, otherFile: string, options: VerifyCliOptions): Promise<ExitCode> {
  const raw = await readSingleClip(rawFile, {}, options.clip);
  const other = await readOther(otherFile, raw, options.clip);
  const shellDistances = await atFile(rawFile, () => resolveShell(raw, options));
  const threshold = convertLength(parseLength(options.error), raw.unit);
  const report = await atFile(otherFile, () => {
    checkComparable(raw, other, rawFile);
    return measureClipError(raw, inUnit(other, raw.unit), shellDistances);
  });
  const result = toResult(rawFile, otherFile, report, threshold);
  process.stdout.write(options.json ? renderJson(result) : renderVerify(result));
  return result.pass ? EXIT.OK : EXIT.CHECK_FAILED;
}

/** Reads `other` by kind: a `.bpk` is decoded, a pose dump takes the raw clip's hierarchy. */
async function readOther(file: string, raw: RawClip, clipName: string | undefined): Promise<RawClip> {
  const ext = extname(file).toLowerCase();
  if (ext === '.bpk') {
    const compressed = await openCompressedFile(file);
    return decompressClip(compressed);
  }
  if (ext === '.json') {
    return atFile(file, async () => readPoseDump(new TextDecoder().decode(await readInputFile(file)), file, raw.skeleton, raw.unit));
  }
  return readSingleClip(file, {}, clipName);
}

function resolveShell(raw: RawClip, options: VerifyCliOptions): Float32Array {
  const overrides: Record<string, Length> = {};
  for (const [name, text] of Object.entries(options.shellBone ?? {})) overrides[name] = parseLength(text);
  try {
    return resolveShellDistances(raw.skeleton, raw.unit, parseLength(options.shell), overrides);
  } catch (error) {
    if (error instanceof ClipError && error.code === 'NO_SUCH_BONE') throw new OptionsError(`--shell-bone: ${error.message}`);
    throw error;
  }
}

/**
 * Bones are matched by position. Names must agree where both sides have real names (a
 * `bone_<i>` name stands for a stripped one); counts and sample rates must agree.
 */
function checkComparable(raw: RawClip, other: RawClip, rawFile: string): void {
  const rawNames = raw.skeleton.boneNames, otherNames = other.skeleton.boneNames;
  if (rawNames.length !== otherNames.length) {
    throw new MetricError(`${otherNames.length} bones, but ${rawFile} has ${rawNames.length}`);
  }
  for (let b = 0; b < rawNames.length; b++) {
    const a = rawNames[b], o = otherNames[b];
    if (a !== o && a !== anonymousBoneName(b) && o !== anonymousBoneName(b)) {
      throw new MetricError(`bone ${b} is "${o}" here but "${a}" in ${rawFile} (bones are matched by position)`);
    }
  }
  if (other.sampleCount !== raw.sampleCount) {
    throw new MetricError(`${other.sampleCount} samples, but ${rawFile} has ${raw.sampleCount}`);
  }
  if (Math.abs(other.sampleRate - raw.sampleRate) > RATE_TOLERANCE * raw.sampleRate) {
    throw new MetricError(`sample rate ${other.sampleRate} Hz, but ${rawFile} has ${raw.sampleRate} Hz`);
  }
}

/** `clip` with translations converted into `unit` (the same clip when already in it). */
function inUnit(clip: RawClip, unit: LengthUnit): RawClip {
  if (clip.unit === unit) return clip;
  const k = convertLength({ value: 1, unit: clip.unit }, unit);
  return { ...clip, unit, translations: clip.translations.map((v) => v * k) };
}

function toResult(raw: string, other: string, report: ErrorReport, threshold: number): VerifyResult {
  return {
    raw,
    other,
    boneCount: report.boneCount,
    sampleCount: report.sampleCount,
    maxError: report.maxError,
    p99Error: report.p99Error,
    meanError: report.meanError,
    worstBone: report.worstBoneName,
    worstBoneIndex: report.worstBone,
    worstSample: report.worstSample,
    unit: report.unit,
    threshold,
    pass: report.maxError <= threshold,
  };
}

function renderVerify(r: VerifyResult): string {
  return renderFields([
    ['raw', r.raw],
    ['other', r.other],
    ['bones', String(r.boneCount)],
    ['samples', String(r.sampleCount)],
    ['max error', `${formatDistance(r.maxError, r.unit)} (bone ${r.worstBone}, sample ${r.worstSample})`],
    ['p99 error', formatDistance(r.p99Error, r.unit)],
    ['mean error', formatDistance(r.meanError, r.unit)],
    ['threshold', formatDistance(r.threshold, r.unit)],
    ['result', r.pass ? 'PASS' : 'FAIL: max error above the threshold'],
  ]);
}
