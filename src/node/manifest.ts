/**
 * The manifest of a library build: every input → its outputs (or its failure), with its
 * cache key, sizes, ratio and max error. It is the record a build system reads, so it holds
 * nothing that varies between runs of the same inputs (no times, no absolute paths that
 * were not given, no order of completion): one run, a resumed run and the merge of sharded
 * runs write the same bytes.
 */
import { readFile } from 'node:fs/promises';

import { BonepressError } from '../shared/errors.js';
import { canonicalJson, type CodecVersions } from './cache.js';
import { writeFileAtomic } from './files.js';

/** Version of the manifest's layout. Serialized: bump it when a field changes meaning. */
export const MANIFEST_VERSION = 1;

/** One output of an input. */
export interface ManifestOutput {
  /** The `.bpk` path, as the batch wrote it (the output folder joined with the file name). */
  readonly path: string;
  /** The clip's name. */
  readonly clip: string;
  readonly boneCount: number;
  readonly sampleCount: number;
  /** 40 · bones · samples. */
  readonly rawBytes: number;
  /** Size of the `.bpk`. */
  readonly bytes: number;
  /** rawBytes / bytes. */
  readonly ratio: number;
  /** Largest measured error, in `unit`. */
  readonly maxError: number;
  /** The error threshold, in `unit`. */
  readonly threshold: number;
  readonly unit: string;
}

/** Why an input failed (the same code and problem `compress` reports). */
export interface ManifestFailure {
  readonly code: string;
  readonly message: string;
}

/** One input: `outputs` when it succeeded, `failure` when it did not. */
export interface ManifestInput {
  /** The input path as given on the command line. */
  readonly input: string;
  /** Its cache key (cache.ts `cacheKey`); absent when the input could not be read. */
  readonly key?: string;
  readonly outputs?: readonly ManifestOutput[];
  readonly failure?: ManifestFailure;
  /** The reader's warnings, in order; absent when none. */
  readonly warnings?: readonly string[];
}

/** Sums over the inputs. */
export interface ManifestTotal {
  readonly inputs: number;
  readonly outputs: number;
  readonly failures: number;
  /** Outputs whose max error is above their threshold. */
  readonly overThreshold: number;
  readonly rawBytes: number;
  readonly bytes: number;
  /** rawBytes / bytes; null when nothing was written. */
  readonly ratio: number | null;
}

/** A `--shard i/n` slice. */
export interface ManifestShard {
  readonly index: number;
  readonly count: number;
}

/** A whole manifest. */
export interface Manifest {
  readonly manifestVersion: number;
  readonly bonepress: string;
  readonly formatVersion: number;
  /** The settings that change outputs (the object the keys hash), keys sorted. */
  readonly settings: unknown;
  /** Present in the partial manifest of a `--shard` run; a merge drops it. */
  readonly shard?: ManifestShard;
  /** Sorted by `input` (code units). */
  readonly inputs: readonly ManifestInput[];
  readonly total: ManifestTotal;
}

/** A manifest that cannot be read or merged. `file` is the manifest it concerns. */
export class ManifestError extends BonepressError {
  override readonly name = 'ManifestError';
  declare readonly code: ManifestErrorCode;
  declare readonly file: string;
  constructor(
    code: ManifestErrorCode,
    readonly problem: string,
    file: string,
  ) {
    super(code, `${file}: ${problem}`, { file, detail: problem });
  }
}

/** Codes of {@link ManifestError}. */
export const MANIFEST_ERROR = {
  /** Not JSON, or not the shape of a manifest. */
  MALFORMED: 'BAD_MANIFEST',
  /** Parts made by different bonepress versions or settings. */
  MISMATCH: 'MANIFEST_MISMATCH',
  /** Two parts disagree about an input or an output path. */
  CONFLICT: 'MANIFEST_CONFLICT',
  /** Shard parts that do not cover every slice. */
  MISSING_SHARD: 'MISSING_SHARD',
} as const;
export type ManifestErrorCode = (typeof MANIFEST_ERROR)[keyof typeof MANIFEST_ERROR];

const compareCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * A manifest of `inputs` (any order; sorted here by input path), with the totals and a
 * fixed key order, so equal content always renders to equal bytes.
 */
export function buildManifest(
  inputs: readonly ManifestInput[],
  versions: CodecVersions,
  settings: unknown,
  shard?: ManifestShard,
): Manifest {
  const sorted = [...inputs].map(normalizeInput).sort((a, b) => compareCodeUnits(a.input, b.input));
  let outputs = 0,
    failures = 0,
    overThreshold = 0,
    rawBytes = 0,
    bytes = 0;
  for (const entry of sorted) {
    if (entry.failure) failures++;
    for (const o of entry.outputs ?? []) {
      outputs++;
      rawBytes += o.rawBytes;
      bytes += o.bytes;
      if (o.maxError > o.threshold) overThreshold++;
    }
  }
  return {
    manifestVersion: MANIFEST_VERSION,
    bonepress: versions.package,
    formatVersion: versions.format,
    // Keys sorted, as the cache keys hash them: the same settings always render alike.
    settings: JSON.parse(canonicalJson(settings)) as unknown,
    ...(shard ? { shard: { index: shard.index, count: shard.count } } : {}),
    inputs: sorted,
    total: {
      inputs: sorted.length,
      outputs,
      failures,
      overThreshold,
      rawBytes,
      bytes,
      ratio: bytes > 0 ? rawBytes / bytes : null,
    },
  };
}

/** `entry` with its members in the fixed order, and empty warnings left out. */
function normalizeInput(entry: ManifestInput): ManifestInput {
  return {
    input: entry.input,
    ...(entry.key !== undefined ? { key: entry.key } : {}),
    ...(entry.outputs !== undefined
      ? {
          outputs: entry.outputs.map((o) => ({
            path: o.path,
            clip: o.clip,
            boneCount: o.boneCount,
            sampleCount: o.sampleCount,
            rawBytes: o.rawBytes,
            bytes: o.bytes,
            ratio: o.ratio,
            maxError: o.maxError,
            threshold: o.threshold,
            unit: o.unit,
          })),
        }
      : {}),
    ...(entry.failure !== undefined ? { failure: { code: entry.failure.code, message: entry.failure.message } } : {}),
    ...(entry.warnings !== undefined && entry.warnings.length > 0 ? { warnings: [...entry.warnings] } : {}),
  };
}

/** The manifest's text: two-space JSON and a final newline. */
export function renderManifest(manifest: Manifest): string {
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

/**
 * Writes `manifest` to `path` atomically (files.ts `writeFileAtomic`), unless the file
 * already holds exactly these bytes: an unchanged build rewrites nothing. Returns whether
 * it wrote. The folder must exist.
 */
export async function writeManifest(path: string, manifest: Manifest): Promise<boolean> {
  const text = renderManifest(manifest);
  try {
    if ((await readFile(path, 'utf8')) === text) return false;
  } catch {
    // Missing or unreadable: write it.
  }
  await writeFileAtomic(path, text);
  return true;
}

/**
 * Parses the text of a manifest; `file` names it in errors. Checks the shape the merge
 * relies on; throws a {@link ManifestError} (`BAD_MANIFEST`) naming the first problem.
 */
export function parseManifest(text: string, file: string): Manifest {
  const fail = (problem: string): never => {
    throw new ManifestError(MANIFEST_ERROR.MALFORMED, problem, file);
  };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return fail(`not JSON (${(error as Error).message})`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return fail('not a JSON object');
  const m = json as Record<string, unknown>;
  if (m.manifestVersion !== MANIFEST_VERSION)
    fail(`manifestVersion ${JSON.stringify(m.manifestVersion)} is not supported (expected ${MANIFEST_VERSION})`);
  if (typeof m.bonepress !== 'string') fail('"bonepress" must be a version string');
  if (!Number.isInteger(m.formatVersion)) fail('"formatVersion" must be a whole number');
  if (!('settings' in m)) fail('"settings" is missing');
  if (m.shard !== undefined) {
    const s = m.shard as { index?: unknown; count?: unknown } | null;
    if (
      s === null ||
      typeof s !== 'object' ||
      !Number.isInteger(s.index) ||
      !Number.isInteger(s.count) ||
      (s.count as number) < 1 ||
      (s.index as number) < 1 ||
      (s.index as number) > (s.count as number)
    )
      fail('"shard" must be { index, count } with 1 <= index <= count');
  }
  if (!Array.isArray(m.inputs)) return fail('"inputs" must be an array');
  m.inputs.forEach((entry: unknown, i: number) => {
    const e = entry as Record<string, unknown> | null;
    const where = `inputs[${i}]`;
    if (e === null || typeof e !== 'object' || typeof e.input !== 'string') fail(`${where}: "input" must be a string`);
    const ee = e as Record<string, unknown>;
    if (ee.key !== undefined && typeof ee.key !== 'string') fail(`${where}: "key" must be a string`);
    if ((ee.outputs === undefined) === (ee.failure === undefined))
      fail(`${where}: needs exactly one of "outputs" and "failure"`);
    if (ee.outputs !== undefined) {
      if (!Array.isArray(ee.outputs)) fail(`${where}: "outputs" must be an array`);
      (ee.outputs as unknown[]).forEach((o, j) => {
        const out = o as Record<string, unknown> | null;
        if (
          out === null ||
          typeof out !== 'object' ||
          typeof out.path !== 'string' ||
          typeof out.clip !== 'string' ||
          typeof out.unit !== 'string'
        )
          fail(`${where}.outputs[${j}]: needs "path", "clip" and "unit" strings`);
        for (const field of ['boneCount', 'sampleCount', 'rawBytes', 'bytes', 'ratio', 'maxError', 'threshold']) {
          if (typeof (out as Record<string, unknown>)[field] !== 'number')
            fail(`${where}.outputs[${j}]: "${field}" must be a number`);
        }
      });
    }
    if (ee.failure !== undefined) {
      const f = ee.failure as Record<string, unknown> | null;
      if (f === null || typeof f !== 'object' || typeof f.code !== 'string' || typeof f.message !== 'string')
        fail(`${where}: "failure" needs "code" and "message" strings`);
    }
    if (ee.warnings !== undefined && (!Array.isArray(ee.warnings) || !ee.warnings.every((w) => typeof w === 'string')))
      fail(`${where}: "warnings" must be an array of strings`);
  });
  return m as unknown as Manifest;
}

/** Reads and parses the manifest at `path` ({@link parseManifest}); a read failure becomes a `BAD_MANIFEST` error naming it. */
export async function readManifest(path: string): Promise<Manifest> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ManifestError(
      MANIFEST_ERROR.MALFORMED,
      `cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      path,
    );
  }
  return parseManifest(text, path);
}

/** A manifest and the file it came from (for error messages). */
export interface ManifestPart {
  readonly file: string;
  readonly manifest: Manifest;
}

/**
 * Joins the partial manifests of a sharded build into the manifest one run over every input
 * would have written (same bytes once rendered). Throws a {@link ManifestError}:
 * `MANIFEST_MISMATCH` when parts come from different bonepress or format versions or
 * settings; `MANIFEST_CONFLICT` when two parts list the same input differently, or two
 * inputs write the same output path; `MISSING_SHARD` when the parts are shards of different
 * counts, or do not cover every slice 1..n. A part listed twice (the same slice re-run)
 * is fine when it agrees.
 */
export function mergeManifests(parts: readonly ManifestPart[]): Manifest {
  if (parts.length === 0) throw new RangeError('mergeManifests needs at least one part');
  const first = parts[0];
  const settingsText = canonicalJson(first.manifest.settings);
  for (const part of parts.slice(1)) {
    const m = part.manifest;
    const differs =
      m.bonepress !== first.manifest.bonepress
        ? `bonepress ${m.bonepress}, not ${first.manifest.bonepress}`
        : m.formatVersion !== first.manifest.formatVersion
          ? `format version ${m.formatVersion}, not ${first.manifest.formatVersion}`
          : canonicalJson(m.settings) !== settingsText
            ? 'different settings'
            : undefined;
    if (differs !== undefined)
      throw new ManifestError(MANIFEST_ERROR.MISMATCH, `made with ${differs} than ${first.file}`, part.file);
  }
  checkShardCoverage(parts);

  const byInput = new Map<string, { entry: ManifestInput; text: string; file: string }>();
  const outputOwner = new Map<string, { input: string; file: string }>();
  for (const { file, manifest } of parts) {
    for (const entry of manifest.inputs) {
      const text = JSON.stringify(normalizeInput(entry));
      const known = byInput.get(entry.input);
      if (known !== undefined) {
        if (known.text !== text)
          throw new ManifestError(
            MANIFEST_ERROR.CONFLICT,
            `input ${entry.input} differs from its entry in ${known.file}`,
            file,
          );
        continue;
      }
      byInput.set(entry.input, { entry, text, file });
      for (const output of entry.outputs ?? []) {
        const owner = outputOwner.get(output.path);
        if (owner !== undefined) {
          throw new ManifestError(
            MANIFEST_ERROR.CONFLICT,
            `output ${output.path} of ${entry.input} is also written by ${owner.input} (${owner.file})`,
            file,
          );
        }
        outputOwner.set(output.path, { input: entry.input, file });
      }
    }
  }
  const versions = { package: first.manifest.bonepress, format: first.manifest.formatVersion };
  return buildManifest(
    [...byInput.values()].map((v) => v.entry),
    versions,
    first.manifest.settings,
  );
}

/** Shard parts must share one count and cover each slice; unsharded parts are taken as they are. */
function checkShardCoverage(parts: readonly ManifestPart[]): void {
  const sharded = parts.filter((p) => p.manifest.shard !== undefined);
  if (sharded.length === 0) return;
  const count = sharded[0].manifest.shard!.count;
  for (const part of sharded) {
    if (part.manifest.shard!.count !== count) {
      throw new ManifestError(
        MANIFEST_ERROR.MISSING_SHARD,
        `is shard ${part.manifest.shard!.index}/${part.manifest.shard!.count}, but ${sharded[0].file} is one of ${count}`,
        part.file,
      );
    }
  }
  const seen = new Set(sharded.map((p) => p.manifest.shard!.index));
  const missing: number[] = [];
  for (let i = 1; i <= count; i++) if (!seen.has(i)) missing.push(i);
  if (missing.length > 0) {
    throw new ManifestError(
      MANIFEST_ERROR.MISSING_SHARD,
      `shard${missing.length > 1 ? 's' : ''} ${missing.map((i) => `${i}/${count}`).join(', ')} missing from the parts`,
      sharded[0].file,
    );
  }
}
