/**
 * The bench's regression gate: a baseline file (the repository's is `bench/baseline.json`)
 * of compressed size and max error per clip, and the comparison of a run against it. Sizes
 * and errors are compared; timings never are.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';

import { writeFileAtomic } from '../node/files.js';
import { BENCH_ERROR, BenchError, type BenchClip, type BenchResult, type BenchSettings } from './run.js';

/** Baseline layout version. Serialized: bump when the layout changes. */
export const BASELINE_VERSION = 1;

/** Growth of the total compressed size (over the clips both runs have) that fails a check: 0.5 %. */
export const SIZE_GROWTH_TOLERANCE = 0.005;

/** One clip of a baseline. */
export interface BaselineClip {
  rawBytes: number;
  compressedBytes: number;
  /** In the clip's unit. */
  maxError: number;
}

/** What a baseline records: settings, totals and each clip by its bench id. */
export interface Baseline {
  version: typeof BASELINE_VERSION;
  /** `metric` only when not the default (`vertices`), so baselines made before it still match. */
  settings: Pick<BenchSettings, 'error' | 'shell' | 'ladder' | 'rotationReference'> &
    Partial<Pick<BenchSettings, 'metric'>>;
  total: {
    clips: number;
    rawBytes: number;
    compressedBytes: number;
    ratio: number;
    maxError: number | null;
    unit: string | null;
  };
  /** By clip id, sorted by id so the file diffs cleanly. */
  clips: Record<string, BaselineClip>;
}

/** What a comparison needs of a clip. */
export type ComparableClip = Pick<BenchClip, 'id' | 'rawBytes' | 'compressedBytes' | 'maxError' | 'threshold' | 'unit'>;

/** What a comparison needs of a run. */
export interface ComparableRun {
  readonly clips: readonly ComparableClip[];
  readonly settings?: Partial<Baseline['settings']>;
}

/** A clip whose compressed size changed. */
export interface ClipSizeChange {
  id: string;
  before: number;
  after: number;
  /** (after − before) / before. */
  growth: number;
}

/** A clip above its threshold. */
export interface ClipOverThreshold {
  id: string;
  maxError: number;
  threshold: number;
  unit: string;
}

/** The outcome of {@link compareToBaseline}. */
export interface BaselineComparison {
  /** No problem: size within tolerance, every clip within its threshold, some clip compared. */
  ok: boolean;
  tolerance: number;
  /** Clips in both the run and the baseline. */
  compared: number;
  /** Compressed bytes of the compared clips in the baseline and in the run. */
  before: number;
  after: number;
  /** (after − before) / before; NaN when nothing was compared. */
  growth: number;
  sizeRegressed: boolean;
  overThreshold: ClipOverThreshold[];
  /** Compared clips that grew, largest growth first. */
  grown: ClipSizeChange[];
  /** Compared clips that shrank, largest shrink first. */
  shrunk: ClipSizeChange[];
  /** Compared clips whose max error rose (information: the threshold is what fails). */
  errorRaised: { id: string; before: number; after: number }[];
  /** Baseline clips this run does not have. */
  missing: string[];
  /** Clips of this run the baseline does not have. */
  added: string[];
  /** Settings that differ from the baseline's, as `name: baseline → run`. */
  settingsDiffer: string[];
  /** Why the check fails, one line each (empty when `ok`). */
  problems: string[];
}

/** Options of {@link compareToBaseline}. */
export interface CompareOptions {
  /** Default {@link SIZE_GROWTH_TOLERANCE}. */
  tolerance?: number;
}

/**
 * Compares a run with a baseline. Fails (`ok: false`, with `problems`) when the total
 * compressed size of the clips both have grew by more than `tolerance`, when any clip of
 * the run is above its threshold, or when no clip of the run is in the baseline. Clips that
 * grew, shrank, are missing or new, and settings that differ are reported without failing.
 */
export function compareToBaseline(
  run: ComparableRun,
  baseline: Baseline,
  options: CompareOptions = {},
): BaselineComparison {
  const tolerance = options.tolerance ?? SIZE_GROWTH_TOLERANCE;
  const runIds = new Set(run.clips.map((clip) => clip.id));
  let before = 0,
    after = 0,
    compared = 0;
  const grown: ClipSizeChange[] = [];
  const shrunk: ClipSizeChange[] = [];
  const errorRaised: BaselineComparison['errorRaised'] = [];
  const added: string[] = [];
  const overThreshold: ClipOverThreshold[] = [];
  for (const clip of run.clips) {
    if (!(clip.maxError <= clip.threshold)) {
      overThreshold.push({ id: clip.id, maxError: clip.maxError, threshold: clip.threshold, unit: clip.unit });
    }
    const base = Object.hasOwn(baseline.clips, clip.id) ? baseline.clips[clip.id] : undefined;
    if (!base) {
      added.push(clip.id);
      continue;
    }
    compared++;
    before += base.compressedBytes;
    after += clip.compressedBytes;
    const change = {
      id: clip.id,
      before: base.compressedBytes,
      after: clip.compressedBytes,
      growth: (clip.compressedBytes - base.compressedBytes) / base.compressedBytes,
    };
    if (change.growth > 0) grown.push(change);
    else if (change.growth < 0) shrunk.push(change);
    if (clip.maxError > base.maxError) errorRaised.push({ id: clip.id, before: base.maxError, after: clip.maxError });
  }
  grown.sort((a, b) => b.growth - a.growth);
  shrunk.sort((a, b) => a.growth - b.growth);
  const missing = Object.keys(baseline.clips)
    .filter((id) => !runIds.has(id))
    .sort();

  const settingsDiffer: string[] = [];
  for (const key of ['error', 'shell', 'ladder', 'rotationReference'] as const) {
    const mine = run.settings?.[key];
    if (mine !== undefined && mine !== baseline.settings[key])
      settingsDiffer.push(`${key}: ${baseline.settings[key]} → ${mine}`);
  }
  const baseMetric = baseline.settings.metric ?? 'vertices';
  if (run.settings?.metric !== undefined && run.settings.metric !== baseMetric)
    settingsDiffer.push(`metric: ${baseMetric} → ${run.settings.metric}`);

  const growth = compared > 0 ? (after - before) / before : Number.NaN;
  const sizeRegressed = compared > 0 && growth > tolerance;
  const problems: string[] = [];
  if (compared === 0)
    problems.push('no clip of this run is in the baseline; run with --update-baseline over the same corpus');
  if (sizeRegressed) {
    problems.push(
      `total compressed size of ${compared} clips grew by ${formatPercent(growth)} (${before} → ${after} bytes), more than the ${(tolerance * 100).toFixed(2)}% allowed`,
    );
  }
  for (const clip of overThreshold) {
    problems.push(
      `${clip.id}: max error ${clip.maxError}${clip.unit} is above the threshold ${clip.threshold}${clip.unit}`,
    );
  }
  return {
    ok: problems.length === 0,
    tolerance,
    compared,
    before,
    after,
    growth,
    sizeRegressed,
    overThreshold,
    grown,
    shrunk,
    errorRaised,
    missing,
    added,
    settingsDiffer,
    problems,
  };
}

/** `0.0123` → `+1.23%`. */
export function formatPercent(share: number): string {
  const text = `${(share * 100).toFixed(2)}%`;
  return share > 0 ? `+${text}` : text;
}

/** A baseline of `result`: its settings, totals and every clip's size and max error, sorted by id. */
export function baselineFromResult(result: Pick<BenchResult, 'clips' | 'settings' | 'totals'>): Baseline {
  const clips: Record<string, BaselineClip> = {};
  const sorted = [...result.clips].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const clip of sorted)
    clips[clip.id] = { rawBytes: clip.rawBytes, compressedBytes: clip.compressedBytes, maxError: clip.maxError };
  const { error, shell, ladder, rotationReference, metric } = result.settings;
  const t = result.totals;
  return {
    version: BASELINE_VERSION,
    settings: {
      error,
      shell,
      ladder,
      rotationReference,
      ...(metric !== undefined && metric !== 'vertices' ? { metric } : {}),
    },
    total: {
      clips: t.clips,
      rawBytes: t.rawBytes,
      compressedBytes: t.compressedBytes,
      ratio: t.ratio,
      maxError: t.maxError,
      unit: t.unit,
    },
    clips,
  };
}

/**
 * Parses and checks a baseline's text. Throws {@link BenchError} `BAD_BASELINE` naming
 * `path` and the first field that is wrong.
 */
export function parseBaseline(text: string, path: string): Baseline {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new BenchError(BENCH_ERROR.BAD_BASELINE, `${path}: not JSON (${(error as Error).message})`);
  }
  const fail = (what: string): never => {
    throw new BenchError(BENCH_ERROR.BAD_BASELINE, `${path}: ${what}`);
  };
  if (!isRecord(value)) return fail('expected a JSON object');
  if (value.version !== BASELINE_VERSION)
    return fail(
      `version ${JSON.stringify(value.version)} is not the supported ${BASELINE_VERSION}; regenerate with --update-baseline`,
    );
  if (!isRecord(value.settings)) return fail('"settings" must be an object');
  if (!isRecord(value.total)) return fail('"total" must be an object');
  if (!isRecord(value.clips)) return fail('"clips" must be an object');
  for (const [id, clip] of Object.entries(value.clips)) {
    if (!isRecord(clip)) return fail(`clip "${id}" must be an object`);
    for (const field of ['rawBytes', 'compressedBytes', 'maxError'] as const) {
      const n = clip[field];
      if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) fail(`clip "${id}": "${field}" must be a number ≥ 0`);
    }
    if ((clip.compressedBytes as number) === 0) fail(`clip "${id}": "compressedBytes" must be > 0`);
  }
  return value as unknown as Baseline;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads the baseline at `path`. Throws {@link BenchError}: `NO_BASELINE` when there is no
 * file, `BAD_BASELINE` when it cannot be read or is not a baseline.
 */
export async function readBaseline(path: string): Promise<Baseline> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new BenchError(BENCH_ERROR.NO_BASELINE, `${path}: no baseline; create it with --update-baseline`);
    }
    throw new BenchError(BENCH_ERROR.BAD_BASELINE, `${path}: ${(error as Error).message}`);
  }
  return parseBaseline(text, path);
}

/** The text of a baseline file: indented JSON with a trailing newline. */
export function renderBaseline(baseline: Baseline): string {
  return JSON.stringify(baseline, null, 2) + '\n';
}

/** Writes `baseline` to `path` atomically, creating its folder. */
export async function writeBaseline(path: string, baseline: Baseline): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFileAtomic(path, renderBaseline(baseline));
}
