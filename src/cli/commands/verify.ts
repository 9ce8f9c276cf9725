/**
 * `bonepress verify <raw> <other>`: the object-space error of `other` (a `.bpk`, a pose dump
 * JSON or any source) against `raw`, with the same metric the compressor holds itself to.
 */
import { extname, resolve } from 'node:path';

import type { Command } from 'commander';

import {
  COMPRESS_DEFAULTS,
  ClipError,
  MetricError,
  OptionsError,
  PARSE_ERROR,
  ParseError,
  compareClips,
  compareCompressed,
  convertLength,
  parseLength,
  readPoseDump,
  type AdditiveOptions,
  type Comparison,
  type CompressOptions,
  type ErrorMetric,
  type Length,
  type LengthUnit,
  type RawClip,
  type ReadOptions,
} from '../../index.js';
import type { CompressedClip } from '../../runtime/index.js';
import {
  isGltfPath,
  readClipFiles,
  readCompressedGltfFile,
  readGltfSourceFile,
  readInputFile,
  type GltfCompressedClip,
} from '../../node/index.js';
import { atVertexBound, transformShare } from '../../node/internal.js';
import { declareCommand } from '../command-list.js';
import { EXIT, FileScopedError, atFile, type ExitCode } from '../exit-codes.js';
import { animationName, isNamed, namedAnimation, openCompressedFile, readSingleClip, warningLines } from '../load.js';
import { collectShellBone, parseLengthArg, parseMetricArg, parsePositiveArg, parseUnitArg } from '../parse.js';
import { renderJson } from '../render/json.js';
import { additiveOptions, parseAdditiveBaseArg, type AdditiveBaseSpec } from '../additive.js';
import { formatDistance, renderFields, renderTable } from '../render/table.js';

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
  /** `--additive-base`: the base an additive .bpk is measured over (and its reference pose when it is not a frame). */
  additiveBase?: AdditiveBaseSpec;
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
  /** Set when `other` is an additive clip: what its errors were measured over. */
  additive?: string;
}

/** Adds the `verify` command to `program`. */
export function registerVerifyCommand(program: Command): void {
  declareCommand(program, 'verify')
    .option(
      '--error <length>',
      'error threshold, with a unit (also the unit of printed errors)',
      parseLengthArg,
      COMPRESS_DEFAULTS.error,
    )
    .option('--shell <length>', 'virtual-vertex distance of every bone', parseLengthArg, COMPRESS_DEFAULTS.shell)
    .option('--shell-bone <name=length>', 'shell distance of one bone (repeatable), e.g. Hips=1m', collectShellBone)
    .option(
      '--metric <metric>',
      'what the threshold bounds, as given to compress --metric: vertices or shell (the whole-shell error is printed either way)',
      parseMetricArg,
      COMPRESS_DEFAULTS.metric,
    )
    .option('--unit <unit>', 'length unit of the raw source, as given to compress --unit', parseUnitArg)
    .option('--rate <hz>', 'resample a glTF raw source at this rate, as given to compress --rate', parsePositiveArg)
    .option(
      '--clip <name>',
      'the clip (glTF animation) to take from a file holding several; default: the name stored in the .bpk, or every clip of a compressed glTF asset',
    )
    .option(
      '--additive-base <file[#animation][@time]>',
      'for an additive clip (.bpk, or an animation of a compressed glTF asset): the base its error is measured over (as given to compress), the pose at @time or the animation played alongside; default its reference pose',
      parseAdditiveBaseArg,
    )
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
  const additive = await additiveOptions(undefined, options.additiveBase, read);
  if (additive) compressOptions.additive = additive;
  if (isGltfPath(otherFile)) {
    const assetClips = await atFile(otherFile, () => readCompressedGltfFile(otherFile));
    if (assetClips.length > 0) return verifyAsset(rawFile, otherFile, assetClips, read, compressOptions, options);
    if (options.clip === undefined && isGltfPath(rawFile)) {
      const code = await verifyKeyframedAssets(rawFile, otherFile, read, compressOptions, options);
      if (code !== undefined) return code;
    }
  }
  const isCompressed = ['.bpk', '.bpt'].includes(extname(otherFile).toLowerCase());
  const compressed = isCompressed ? (await openCompressedFile(otherFile)).clip : undefined;
  // A multi-clip source needs no --clip when the .bpk says which clip it holds.
  const raw = await readSingleClip(
    rawFile,
    { ...read, ...warningOptions(options) },
    { name: options.clip, preferred: compressed?.name },
  );
  if (compressed && compressed.unit !== raw.unit && options.unit === undefined && options.quiet !== true) {
    process.stderr.write(
      `bonepress: note: ${otherFile} stores ${compressed.unit}, and ${rawFile} reads as ${raw.unit}; if it was compressed with --unit ${compressed.unit}, verify with --unit ${compressed.unit}\n`,
    );
  }
  const comparison = await atFile(otherFile, async () => {
    try {
      if (compressed) return compareCompressed(raw, compressed, compressOptions, rawFile);
      const other = await readOther(otherFile, raw, options);
      return compareKeyframed(raw, other, compressOptions, rawFile, options);
    } catch (error) {
      if (error instanceof ClipError && error.code === 'NO_SUCH_BONE')
        throw new OptionsError(`--shell-bone: ${error.message}`);
      if (error instanceof MetricError && compressed) throw withRateHint(error, compressed, raw, options);
      throw error;
    }
  });
  const result = toResult(rawFile, otherFile, comparison);
  if (comparison.additive) result.additive = additiveLabel(options.additiveBase);
  if (options.json) process.stdout.write(renderJson(result));
  else if (options.quiet !== true) process.stdout.write(renderVerify(result, parseLength(options.error).unit));
  return result.pass ? EXIT.OK : EXIT.CHECK_FAILED;
}

/** What an additive clip's errors were measured over, for the report. */
function additiveLabel(base: AdditiveBaseSpec | undefined): string {
  return base
    ? `applied to ${base.file}${base.animation ? `#${base.animation}` : ''}${base.time !== undefined ? `@${base.time}` : ' (played alongside)'}`
    : 'applied to its reference pose';
}

/**
 * The base (and reference pose) of `--additive-base` when it names an animation of the
 * source asset itself: that animation as read beside the compared clips, so that its bones
 * are theirs (extra bones included). Undefined for a base in another file.
 */
function sourceBase(
  clips: readonly RawClip[],
  rawFile: string,
  base: AdditiveBaseSpec | undefined,
): Pick<AdditiveOptions, 'reference' | 'base'> | undefined {
  if (!base || base.animation === undefined || resolve(base.file) !== resolve(rawFile)) return undefined;
  const clip = clips.find((c) => c.name === base.animation);
  if (!clip) return undefined;
  const pose = { clip, ...(base.time !== undefined ? { time: base.time } : {}) };
  return { reference: pose, base: base.time !== undefined ? pose : clip };
}

/** What `verify --json` prints when `other` is a glTF asset with compressed animations: one result per clip compared. */
export interface VerifyAssetResult {
  raw: string;
  other: string;
  clips: VerifyClipResult[];
  /** Animations of the source that the asset does not hold compressed (kept as plain channels, or moving nothing compressible). */
  notCompressed: string[];
  /** Every clip within its threshold. */
  pass: boolean;
}

/** One clip of a compressed glTF asset measured against the source's clip of the same name. */
export interface VerifyClipResult extends VerifyResult {
  /** The animation's name, `animation_<index>` when it has none (as the glTF reader names its clip). */
  clip: string;
  /** Bones of the clip's bone table (skeleton bones). */
  skeletonBones: number;
  /** Extra bones compared (node bones and morph-weight bones, docs/gltf-extension.md "Extra bones"). */
  extraBones: number;
  /** Extra bones of the source not compared because the asset keeps them as plain channels (compressed without extras). */
  extraBonesNotCompared: number;
}

/**
 * `verify` of a glTF asset whose animations are compressed: each compressed clip (or the one
 * `--clip` names) against the source's animation of the same name, read as the compressor
 * read it (with its extra bones, each held to its own shell distance: a prop's mesh radius,
 * a camera's metre). An asset compressed without extra bones is compared on its skeleton,
 * and the source's extra bones are counted as not compared.
 */
async function verifyAsset(
  rawFile: string,
  otherFile: string,
  assetClips: GltfCompressedClip[],
  read: ReadOptions,
  compressOptions: CompressOptions,
  options: VerifyCliOptions,
): Promise<ExitCode> {
  const clipName = options.clip;
  const chosen = clipName === undefined ? assetClips : assetClips.filter((c) => isNamed(c, clipName));
  // None of that name: the error that names the ones it holds.
  if (clipName !== undefined && chosen.length === 0)
    await atFile(otherFile, () => namedAnimation(otherFile, assetClips, clipName));
  if (!isGltfPath(rawFile)) {
    throw new OptionsError(
      `${otherFile} is a glTF asset with compressed animations: verify it against its glTF/GLB source, not ${rawFile}`,
    );
  }
  const warnings: string[] = [];
  const withExtras = await atFile(rawFile, () =>
    readGltfSourceFile(rawFile, { ...read, extraTracks: true, onWarning: (message) => warnings.push(message) }),
  );
  printWarnings(rawFile, warnings, options);
  const pairs = pairByNameThenIndex(
    withExtras.clips.map((c) => c.name),
    assetClips.map(animationName),
  );
  let plain: RawClip[] | undefined;
  const clips: VerifyClipResult[] = [];
  for (const asset of chosen) {
    const label = `animation ${asset.index} ${JSON.stringify(asset.name)}`;
    const extraBones = asset.nodes.length + asset.weights.reduce((n, w) => n + w.scales.length, 0);
    const rawIndex = pairs.indexOf(assetClips.indexOf(asset));
    let raw = rawIndex >= 0 ? withExtras.clips[rawIndex] : undefined;
    let notCompared = 0;
    if (raw && !sameBones(raw, asset) && extraBones === 0) {
      // Compressed without extra bones: the clip holds the whole skeleton, as the reader gives it without extraTracks.
      plain ??= (await atFile(rawFile, () => readGltfSourceFile(rawFile, { ...read }))).clips;
      const skeletal = plain.find((c) => c.name === raw!.name);
      if (skeletal && sameBones(skeletal, asset)) {
        notCompared =
          raw.skeleton.boneNames.length -
          (withExtras.extras?.[withExtras.clips.indexOf(raw)]?.skeletonBones ?? raw.skeleton.boneNames.length);
        raw = skeletal;
      }
    }
    if (!raw)
      throw new FileScopedError(
        rawFile,
        new ParseError(
          PARSE_ERROR.UNSUPPORTED,
          `has no animation named ${JSON.stringify(animationName(asset))}, nor one at its place, to compare with ${label} of ${otherFile}`,
          rawFile,
        ),
      );
    if (!sameBones(raw, asset)) {
      throw new FileScopedError(
        otherFile,
        new MetricError(
          `${label}: its bones bind other nodes than the source's clip ${JSON.stringify(raw.name)} (${describeNodes(asset)} against nodes ${Array.from(raw.skeleton.nodeIndices ?? []).join(', ')}); was it compressed from ${rawFile}?`,
        ),
      );
    }
    if (asset.clip.unit !== raw.unit && options.unit === undefined && options.quiet !== true) {
      process.stderr.write(
        `bonepress: note: ${otherFile} stores ${asset.clip.unit}, and ${rawFile} reads as ${raw.unit}; if it was compressed with --unit ${asset.clip.unit}, verify with --unit ${asset.clip.unit}\n`,
      );
    }
    // The extra bones were compressed at their own distances (compressDocument keeps them whatever --shell says).
    const shellBones: Record<string, string | Length> = {};
    const b0 = asset.joints.length;
    for (let b = b0; b < raw.skeleton.boneNames.length; b++)
      shellBones[raw.skeleton.boneNames[b]] = { value: raw.skeleton.shellDistances[b], unit: raw.unit };
    // Weights and transforms add at a morphed vertex: held to the shares they were compressed at (compress/morph-bound.ts).
    const shared = asset.weights.length > 0 && b0 + asset.nodes.length > 0;
    const clipOptions: CompressOptions = {
      ...compressOptions,
      ...(shared ? { error: transformShare(compressOptions.error ?? COMPRESS_DEFAULTS.error) } : {}),
      shellBones: { ...shellBones, ...compressOptions.shellBones },
    };
    // An additive clip over a base animation of the source: that animation as the compressor read it (extra bones too).
    const base = asset.clip.additive ? sourceBase(withExtras.clips, rawFile, options.additiveBase) : undefined;
    if (base) clipOptions.additive = { ...compressOptions.additive, ...base };
    const comparison = await atFile(otherFile, () => {
      try {
        const measured = compareCompressed(raw, asset.clip, clipOptions, rawFile);
        return shared ? atVertexBound(measured) : measured;
      } catch (error) {
        if (error instanceof ClipError && error.code === 'NO_SUCH_BONE')
          throw new OptionsError(`--shell-bone: ${error.message}`);
        if (error instanceof MetricError)
          throw new MetricError(`${label}: ${withRateHint(error, asset.clip, raw, options).message}`);
        throw error;
      }
    });
    clips.push({
      clip: animationName(asset),
      ...toResult(rawFile, otherFile, comparison),
      ...(asset.clip.additive ? { additive: additiveLabel(options.additiveBase) } : {}),
      skeletonBones: b0,
      extraBones,
      extraBonesNotCompared: notCompared,
    });
  }
  const notCompressed =
    options.clip === undefined ? withExtras.clips.filter((_, i) => pairs[i] < 0).map((c) => c.name) : [];
  const result: VerifyAssetResult = {
    raw: rawFile,
    other: otherFile,
    clips,
    notCompressed,
    pass: clips.every((c) => c.pass),
  };
  if (options.json) process.stdout.write(renderJson(result));
  else if (options.quiet !== true) {
    const notes: [string, string][] = [];
    const extras = clips.reduce((n, c) => n + c.extraBones, 0),
      notCompared = clips.reduce((n, c) => n + c.extraBonesNotCompared, 0);
    if (extras > 0 || notCompared > 0)
      notes.push([
        'extra bones',
        `${extras} compared (props, cameras, morph weights)${notCompared > 0 ? `; ${notCompared} of the source not compared (plain channels in the asset)` : ''}`,
      ]);
    if (notCompressed.length > 0)
      notes.push([
        'not compressed',
        `${notCompressed.map((n) => JSON.stringify(n)).join(', ')} (plain channels in the asset, not compared)`,
      ]);
    process.stdout.write(renderClipTable(result, parseLength(options.error).unit, notes));
  }
  return result.pass ? EXIT.OK : EXIT.CHECK_FAILED;
}

/** What `verify --json` prints when both files are glTF assets holding several clips and no `--clip` was given. */
export interface VerifyAssetsResult {
  raw: string;
  other: string;
  /** One result per pair of clips, in the source's order; `clip` names the source's, `otherClip` the other's. */
  clips: (VerifyResult & { clip: string; otherClip: string })[];
  /** Clips of the source with no counterpart in the other asset (by name or by place): the comparison fails. */
  missing: string[];
  /** Every clip compared, within its threshold, and none missing. */
  pass: boolean;
}

/**
 * `verify` of two keyframed glTF assets without `--clip`: every clip of the source against
 * the other's clip of the same name, else the one at the same place ({@link pairByNameThenIndex}).
 * Returns undefined (the single-clip report applies) when both hold one clip.
 */
async function verifyKeyframedAssets(
  rawFile: string,
  otherFile: string,
  read: ReadOptions,
  compressOptions: CompressOptions,
  options: VerifyCliOptions,
): Promise<ExitCode | undefined> {
  const readAll = async (file: string): Promise<RawClip[]> => {
    const warnings: string[] = [];
    const clips = await atFile(file, () =>
      readClipFiles(file, { ...read, onWarning: (message) => warnings.push(message) }),
    );
    printWarnings(file, warnings, options);
    return clips;
  };
  const raws = await readAll(rawFile);
  // The other asset is resampled as the source is: two keyframed assets compare on one grid.
  const others = await readAll(otherFile);
  if (raws.length === 1 && others.length === 1) return undefined;
  const pairs = pairByNameThenIndex(
    raws.map((c) => c.name),
    others.map((c) => c.name),
  );
  const clips: VerifyAssetsResult['clips'] = [];
  for (const [i, raw] of raws.entries()) {
    if (pairs[i] < 0) continue;
    const other = others[pairs[i]];
    const comparison = await atFile(otherFile, () => {
      try {
        return compareKeyframed(raw, other, compressOptions, rawFile, options);
      } catch (error) {
        if (error instanceof ClipError && error.code === 'NO_SUCH_BONE')
          throw new OptionsError(`--shell-bone: ${error.message}`);
        if (error instanceof MetricError) throw new MetricError(`clip ${JSON.stringify(other.name)}: ${error.message}`);
        throw error;
      }
    });
    clips.push({ clip: raw.name, otherClip: other.name, ...toResult(rawFile, otherFile, comparison) });
  }
  const missing = raws.filter((_, i) => pairs[i] < 0).map((c) => c.name);
  const result: VerifyAssetsResult = {
    raw: rawFile,
    other: otherFile,
    clips,
    missing,
    pass: missing.length === 0 && clips.every((c) => c.pass),
  };
  if (options.json) process.stdout.write(renderJson(result));
  else if (options.quiet !== true) {
    const notes: [string, string][] = [];
    if (missing.length > 0)
      notes.push([
        'missing',
        `${missing.map((n) => JSON.stringify(n)).join(', ')}: no clip of ${otherFile} has that name or place`,
      ]);
    process.stdout.write(renderClipTable(result, parseLength(options.error).unit, notes));
  }
  return result.pass ? EXIT.OK : EXIT.CHECK_FAILED;
}

/**
 * For each name of `source`, the index in `other` of its counterpart, or -1: the clip of the
 * same name first, then, for those left, the one at the same index when that one is left too.
 */
export function pairByNameThenIndex(source: readonly string[], other: readonly string[]): number[] {
  const taken = new Set<number>();
  const pairs = source.map((name) => {
    const j = other.findIndex((candidate, k) => candidate === name && !taken.has(k));
    if (j >= 0) taken.add(j);
    return j;
  });
  return pairs.map((j, i) => {
    if (j >= 0 || i >= other.length || taken.has(i)) return j;
    taken.add(i);
    return i;
  });
}

/**
 * {@link compareClips} for a keyframed `other`; a sample-count mismatch from clips sampled at
 * different rates (gltfpack resamples to 30 Hz) says which `--rate` puts them on one grid.
 */
function compareKeyframed(
  raw: RawClip,
  other: RawClip,
  compressOptions: CompressOptions,
  rawFile: string,
  options: VerifyCliOptions,
): Comparison {
  try {
    return compareClips(raw, other, compressOptions, rawFile);
  } catch (error) {
    if (
      !(error instanceof MetricError) ||
      options.rate !== undefined ||
      Math.abs(raw.sampleRate - other.sampleRate) < 1e-6 * raw.sampleRate
    )
      throw error;
    throw new MetricError(
      `${error.message}; its keys are at ${formatRate(other.sampleRate)} Hz: verify with --rate ${formatRate(other.sampleRate)} to resample ${rawFile} on that grid`,
    );
  }
}

function formatRate(hz: number): string {
  return String(Number(hz.toFixed(3)));
}

/** One row per clip compared and a total row, then `notes` as fields. */
function renderClipTable(
  result: { clips: (VerifyResult & { clip: string })[]; pass: boolean },
  display: LengthUnit,
  notes: [string, string][],
): string {
  const columns = ['clip', 'bones', 'samples', 'max error', 'p99 error', 'threshold', 'result'].map((header, i) => ({
    header,
    align: i === 0 || i === 6 ? ('left' as const) : ('right' as const),
  }));
  const body = result.clips.map((c) => [
    JSON.stringify(c.clip) + (c.additive ? ' (additive)' : ''),
    String(c.boneCount),
    String(c.sampleCount),
    formatDistance(c.maxError, c.unit, display),
    formatDistance(c.p99Error, c.unit, display),
    formatDistance(c.threshold, c.unit, display),
    c.pass ? 'PASS' : 'FAIL',
  ]);
  const failed = result.clips.filter((c) => !c.pass).length;
  const worst = result.clips.reduce<VerifyResult | undefined>(
    (w, c) =>
      w === undefined ||
      convertLength({ value: c.maxError, unit: c.unit }, display) >
        convertLength({ value: w.maxError, unit: w.unit }, display)
        ? c
        : w,
    undefined,
  );
  const footer = [
    [
      `TOTAL (${result.clips.length} clip${result.clips.length === 1 ? '' : 's'}${failed > 0 ? `, ${failed} above the threshold` : ''})`,
      '',
      String(result.clips.reduce((n, c) => n + c.sampleCount, 0)),
      worst ? formatDistance(worst.maxError, worst.unit, display) : '',
      '',
      '',
      result.pass ? 'PASS' : 'FAIL',
    ],
  ];
  return renderTable(columns, { body, footer }) + (notes.length > 0 ? renderFields(notes) : '');
}

/** The reader's warnings about `file` on stderr, summarised ({@link warningLines}); none with --json or -q. */
function printWarnings(file: string, warnings: readonly string[], options: VerifyCliOptions): void {
  if (options.quiet !== true && options.json !== true) process.stderr.write(warningLines(file, warnings));
}

/** Read options that silence the reader's warnings with --json or -q (else load.ts `readSingleClip` prints them). */
function warningOptions(options: VerifyCliOptions): ReadOptions {
  return options.quiet === true || options.json === true ? { onWarning: () => {} } : {};
}

/** The clip's bones bind the nodes the compressed animation's table, node and weight lists name, in that order. */
function sameBones(raw: RawClip, asset: GltfCompressedClip): boolean {
  const expected = [...asset.joints, ...asset.nodes, ...asset.weights.flatMap((w) => w.scales.map(() => w.node))];
  const nodes = raw.skeleton.nodeIndices;
  return nodes !== undefined && nodes.length === expected.length && expected.every((n, b) => nodes[b] === n);
}

function describeNodes(asset: GltfCompressedClip): string {
  const parts = [`bone table nodes ${asset.joints.join(', ') || 'none'}`];
  if (asset.nodes.length > 0) parts.push(`node bones ${asset.nodes.join(', ')}`);
  if (asset.weights.length > 0) parts.push(`weights of nodes ${asset.weights.map((w) => w.node).join(', ')}`);
  return parts.join('; ');
}

/** A sample-count mismatch against a `.bpk` made at another rate says which `--rate` to give. */
function withRateHint(
  error: MetricError,
  compressed: CompressedClip,
  raw: RawClip,
  options: VerifyCliOptions,
): MetricError {
  if (
    options.rate !== undefined ||
    compressed.sampleCount === raw.sampleCount ||
    compressed.sampleRate === raw.sampleRate
  )
    return error;
  return new MetricError(
    `${error.message}; it was compressed at ${compressed.sampleRate} Hz: verify with --rate ${compressed.sampleRate}`,
  );
}

/**
 * Reads a pose dump (which takes the raw clip's hierarchy) or any other source; a keyframed
 * glTF is resampled at `--rate` as the raw source is.
 */
async function readOther(file: string, raw: RawClip, options: VerifyCliOptions): Promise<RawClip> {
  if (extname(file).toLowerCase() === '.json') {
    return atFile(file, async () =>
      readPoseDump(new TextDecoder().decode(await readInputFile(file)), file, raw.skeleton, raw.unit),
    );
  }
  const read = warningOptions(options);
  if (options.rate !== undefined && isGltfPath(file)) read.sampleRate = options.rate;
  return readSingleClip(file, read, { name: options.clip });
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
    ...(report.betweenMaxError !== undefined
      ? { sampleMaxError: report.sampleMaxError, betweenMaxError: report.betweenMaxError }
      : {}),
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
    ...(r.additive ? [['additive', r.additive] as [string, string]] : []),
    ...(r.betweenMaxError !== undefined
      ? [
          ['max error', formatDistance(r.maxError, r.unit, display)] as [string, string],
          [
            'at samples',
            `${formatDistance(r.sampleMaxError!, r.unit, display)} (bone ${r.worstBone}, sample ${r.worstSample})`,
          ] as [string, string],
          ['between samples', formatDistance(r.betweenMaxError, r.unit, display)] as [string, string],
        ]
      : [
          [
            'max error',
            `${formatDistance(r.maxError, r.unit, display)} (bone ${r.worstBone}, sample ${r.worstSample})`,
          ] as [string, string],
        ]),
    ...(r.metric === 'shell'
      ? []
      : [['whole-shell error', formatDistance(r.shellMaxError, r.unit, display)] as [string, string]]),
    ['p99 error', formatDistance(r.p99Error, r.unit, display)],
    ['mean error', formatDistance(r.meanError, r.unit, display)],
    ['threshold', formatDistance(r.threshold, r.unit, display)],
    [
      'metric',
      r.metric === 'shell' ? 'shell (every point of the shell sphere)' : 'vertices (three virtual vertices per bone)',
    ],
    ['result', r.pass ? 'PASS' : 'FAIL: max error above the threshold'],
  ]);
}
