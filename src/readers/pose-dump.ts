/**
 * Pose dump JSON: every sample of a clip as plain numbers, the format `decompress` writes
 * and `verify` reads (docs/pose-dump.md). Arrays are sample-major, then bone:
 * `rotations[(s * bones.length + b) * 4 + c]` (xyzw), translations and scales with 3.
 */
import { BonepressError } from '../shared/errors.js';
import { createRawClip, MAX_MAGNITUDE, validateRawClip, type RawClip } from '../clip/raw-clip.js';
import { createSkeleton, POSE_STRIDE, setIdentity, type Skeleton } from '../clip/skeleton.js';
import { isLengthUnit, type LengthUnit } from '../clip/units.js';

/** The JSON shape of a pose dump. */
export interface PoseDump {
  bones: string[];
  /** Parent index per bone (-1 root). Optional on input: taken from a reference by position. */
  parents?: number[];
  sampleRate: number;
  numSamples: number;
  /** Length unit of translations; optional on input (defaults to the reference's). */
  unit?: LengthUnit;
  rotations: number[];
  translations: number[];
  scales: number[];
}

/** Thrown when a pose dump is malformed; names the file and the field. */
export class PoseDumpError extends BonepressError {
  override readonly name = 'PoseDumpError';
  declare readonly code: 'BAD_POSE_DUMP';
  declare readonly file: string;
  constructor(
    readonly problem: string,
    file: string,
  ) {
    super('BAD_POSE_DUMP', `${file}: ${problem}`, { file, detail: problem });
  }
}

/** Converts a clip to a pose dump object. */
export function clipToPoseDump(clip: RawClip): PoseDump {
  const boneCount = clip.skeleton.boneNames.length;
  const n = clip.sampleCount;
  const rotations = new Array<number>(n * boneCount * 4);
  const translations = new Array<number>(n * boneCount * 3);
  const scales = new Array<number>(n * boneCount * 3);
  for (let s = 0; s < n; s++) {
    for (let b = 0; b < boneCount; b++) {
      const src = b * n + s,
        dst = s * boneCount + b;
      for (let c = 0; c < 4; c++) rotations[dst * 4 + c] = clip.rotations[src * 4 + c];
      for (let c = 0; c < 3; c++) translations[dst * 3 + c] = clip.translations[src * 3 + c];
      for (let c = 0; c < 3; c++) scales[dst * 3 + c] = clip.scales[src * 3 + c];
    }
  }
  return {
    bones: [...clip.skeleton.boneNames],
    parents: Array.from(clip.skeleton.parents),
    sampleRate: clip.sampleRate,
    numSamples: n,
    unit: clip.unit,
    rotations,
    translations,
    scales,
  };
}

/** Serialises a clip as pose dump JSON text. */
export function writePoseDump(clip: RawClip): string {
  return JSON.stringify(clipToPoseDump(clip));
}

/** Smallest squared length a rotation quaternion may have (as {@link validateRawClip} requires). */
const MIN_QUAT_LENGTH2 = 1e-12;

/**
 * Parses pose dump JSON text into a clip named after the file's base name without its
 * extension (`out/walk.json` → `walk`).
 *
 * Without `parents` in the file, `reference`'s skeleton supplies the hierarchy: bones are
 * taken by position (bone i of the dump gets the parent of bone i of the reference), and
 * only the bone counts are compared here; names are not looked up or checked (`verify`
 * checks them pair by pair). Without either, every bone is a root.
 *
 * Throws {@link PoseDumpError} naming the file and the field: a missing or mistyped field,
 * an array of the wrong length, a value that is not finite or not finite as a float32 (or
 * larger than {@link MAX_MAGNITUDE}), a zero-length rotation quaternion (naming the sample
 * and bone), two bones with the same name, or a bad hierarchy.
 */
export function readPoseDump(text: string, file: string, reference?: Skeleton, referenceUnit?: LengthUnit): RawClip {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new PoseDumpError(`not JSON: ${(e as Error).message}`, file);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new PoseDumpError('expected a JSON object', file);
  const o = json as Record<string, unknown>;
  const bones = o.bones;
  if (!Array.isArray(bones) || bones.length === 0 || !bones.every((x) => typeof x === 'string')) {
    throw new PoseDumpError('"bones" must be a non-empty array of names', file);
  }
  const boneCount = bones.length;
  // Unique names: --shell-bone, `sample --bone` and name matching look bones up by name.
  const firstIndex = new Map<string, number>();
  (bones as string[]).forEach((name, b) => {
    const first = firstIndex.get(name);
    if (first !== undefined)
      throw new PoseDumpError(
        `"bones" names "${name}" twice (bones ${first} and ${b}); bone names must be unique`,
        file,
      );
    firstIndex.set(name, b);
  });
  const num = (key: string): number => {
    const v = o[key];
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new PoseDumpError(`"${key}" must be a number`, file);
    return v;
  };
  const sampleRate = num('sampleRate');
  if (!(sampleRate > 0)) throw new PoseDumpError(`"sampleRate" must be > 0, got ${sampleRate}`, file);
  const n = num('numSamples');
  if (!Number.isInteger(n) || n < 1)
    throw new PoseDumpError(`"numSamples" must be a whole number >= 1, got ${n}`, file);
  let unit: LengthUnit = referenceUnit ?? 'cm';
  if (o.unit !== undefined) {
    if (typeof o.unit !== 'string' || !isLengthUnit(o.unit))
      throw new PoseDumpError(`"unit" is not a length unit: ${String(o.unit)}`, file);
    unit = o.unit;
  }
  let parents: number[];
  if (o.parents !== undefined) {
    if (!Array.isArray(o.parents) || o.parents.length !== boneCount || !o.parents.every((p) => Number.isInteger(p))) {
      throw new PoseDumpError(`"parents" must hold ${boneCount} whole numbers`, file);
    }
    parents = o.parents as number[];
  } else if (reference) {
    if (reference.boneNames.length !== boneCount) {
      throw new PoseDumpError(`${boneCount} bones, but the reference has ${reference.boneNames.length}`, file);
    }
    parents = Array.from(reference.parents);
  } else {
    parents = new Array<number>(boneCount).fill(-1);
  }
  /** Sample and bone of element `i` of a track array with `width` numbers per bone sample. */
  const where = (i: number, width: number): string => {
    const t = Math.floor(i / width);
    return `sample ${Math.floor(t / boneCount)}, bone ${t % boneCount} "${bones[t % boneCount] as string}"`;
  };
  const arr = (key: string, width: number): number[] => {
    const v = o[key];
    const expected = n * boneCount * width;
    if (!Array.isArray(v)) throw new PoseDumpError(`"${key}" must be an array`, file);
    if (v.length !== expected)
      throw new PoseDumpError(
        `"${key}" holds ${v.length} numbers, expected ${expected} (${n} samples × ${boneCount} bones × ${width})`,
        file,
      );
    for (let i = 0; i < v.length; i++) {
      if (typeof v[i] !== 'number' || !Number.isFinite(v[i]))
        throw new PoseDumpError(`"${key}"[${i}] is not a finite number`, file);
      // Tracks are float32: 1e39 is finite here but Infinity once stored.
      if (!(Math.abs(Math.fround(v[i] as number)) <= MAX_MAGNITUDE)) {
        throw new PoseDumpError(
          `"${key}"[${i}] is ${v[i] as number}, beyond ±${MAX_MAGNITUDE} (${where(i, width)})`,
          file,
        );
      }
    }
    return v as number[];
  };
  const rotations = arr('rotations', 4);
  const translations = arr('translations', 3);
  const scales = arr('scales', 3);
  for (let t = 0; t < n * boneCount; t++) {
    // Measured on the float32 values the clip will hold, as validateRawClip measures them.
    let len2 = 0;
    for (let c = 0; c < 4; c++) len2 += Math.fround(rotations[t * 4 + c]) ** 2;
    if (!(len2 >= MIN_QUAT_LENGTH2)) {
      throw new PoseDumpError(
        `"rotations"[${t * 4}..${t * 4 + 3}] is a zero-length quaternion (${where(t * 4, 4)})`,
        file,
      );
    }
  }
  const defaultPose = new Float32Array(boneCount * POSE_STRIDE);
  for (let b = 0; b < boneCount; b++) setIdentity(defaultPose, b);
  let skeleton: Skeleton;
  try {
    skeleton = createSkeleton(bones as string[], parents, defaultPose, unit);
  } catch (e) {
    throw new PoseDumpError((e as Error).message, file);
  }
  const clip = createRawClip(clipNameOf(file), skeleton, sampleRate, n, unit);
  for (let s = 0; s < n; s++) {
    for (let b = 0; b < boneCount; b++) {
      const dst = b * n + s,
        src = s * boneCount + b;
      for (let c = 0; c < 4; c++) clip.rotations[dst * 4 + c] = rotations[src * 4 + c];
      for (let c = 0; c < 3; c++) clip.translations[dst * 3 + c] = translations[src * 3 + c];
      for (let c = 0; c < 3; c++) clip.scales[dst * 3 + c] = scales[src * 3 + c];
    }
  }
  // The checks above cover what validateRawClip checks; this keeps the two from drifting apart.
  try {
    validateRawClip(clip);
  } catch (e) {
    throw new PoseDumpError((e as Error).message, file);
  }
  return clip;
}

/** The clip name for a path: base name without its last extension (`out/walk.json` → `walk`). */
function clipNameOf(file: string): string {
  const base = file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(0, dot) : base;
}
