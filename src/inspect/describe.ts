/**
 * What is inside a compressed clip, as `bonepress info` shows it: header fields, section
 * sizes, track classes (in total and per bone) and the bit-rate histogram. Time and memory
 * are bounded by the bones and the animated tracks × segments actually stored: a clip with
 * no animated track is described without visiting its segments, however many it declares.
 */
import { rawSizeBytes } from '../clip/raw-clip.js';
import { RAW_BITS, ROTATION_FORMAT, TRACK_KIND } from '../runtime/format.js';
import {
  sectionSizes,
  segmentBitRates,
  trackClassOf,
  type AdditiveInfo,
  type CompressedClip,
  type SectionSizes,
  type TrackClass,
} from '../runtime/index.js';
import { anonymousBoneName } from './compare.js';

/** Bits per component that mean "raw float32" in {@link ClipDescription}.bitRateHistogram. */
export { RAW_BITS };

/** The name of each rotation format (ROTATION_FORMAT). */
const ROTATION_FORMAT_NAMES: Record<number, string> = { [ROTATION_FORMAT.DROP_ONE]: 'drop-one' };

/** Track kinds in file order (TRACK_KIND). */
const KINDS = [
  ['rotation', TRACK_KIND.ROTATION],
  ['translation', TRACK_KIND.TRANSLATION],
  ['scale', TRACK_KIND.SCALE],
] as const;
type KindName = (typeof KINDS)[number][0];

/** The name of a bone carrying a glTF node's morph-target weight `t` (its translation x): `<node>.weights[<t>]`. @internal */
export const WEIGHT_BONE = /\.weights\[\d+\]$/;

/** Counts of each track class. */
export type ClassCounts = Record<TrackClass, number>;

/** What {@link describeCompressedClip} finds. */
export interface ClipDescription {
  /** Clip name, or null when names were stripped. */
  name: string | null;
  version: number;
  rotationFormat: string;
  hasChecksum: boolean;
  hasNames: boolean;
  boneCount: number;
  sampleCount: number;
  sampleRate: number;
  /** Seconds. */
  duration: number;
  segmentCount: number;
  unit: string;
  byteLength: number;
  /** 40 · bones · samples. */
  rawBytes: number;
  ratio: number;
  sections: SectionSizes;
  /** An additive clip's record (its poses are deltas to apply to a base), or null for absolute poses. */
  additive: AdditiveInfo | null;
  /** Bones that are morph-target weight tracks (named `<node>.weights[<t>]`), not transforms. */
  weightTracks: number;
  trackClasses: Record<KindName | 'total', ClassCounts>;
  bones: {
    index: number;
    name: string;
    parent: number;
    /** The bone is a morph-target weight track, named `<node>.weights[<t>]`. */
    weight: boolean;
    rotation: TrackClass;
    translation: TrackClass;
    scale: TrackClass;
  }[];
  /** (segment, animated track) pairs per bit rate; key = bits per component (32 = raw float). */
  bitRateHistogram: Record<string, number>;
}

/** The track kinds of {@link ClipDescription}, in file order. */
export const TRACK_KIND_NAMES: readonly KindName[] = KINDS.map(([name]) => name);

/** Describes `clip` (see {@link ClipDescription}). */
export function describeCompressedClip(clip: CompressedClip): ClipDescription {
  const empty = (): ClassCounts => ({ default: 0, constant: 0, animated: 0 });
  const trackClasses = { rotation: empty(), translation: empty(), scale: empty(), total: empty() };
  const bones: ClipDescription['bones'] = [];
  for (let b = 0; b < clip.boneCount; b++) {
    const classes = {} as Record<KindName, TrackClass>;
    for (const [kindName, kind] of KINDS) {
      const cls = trackClassOf(clip, b, kind);
      classes[kindName] = cls;
      trackClasses[kindName][cls]++;
      trackClasses.total[cls]++;
    }
    const name = clip.boneNames?.[b] ?? anonymousBoneName(b);
    bones.push({ index: b, name, parent: clip.parents[b], weight: WEIGHT_BONE.test(name), ...classes });
  }
  const bitRateHistogram: Record<string, number> = {};
  const counts = new Map<number, number>();
  // Without animated tracks every segment's rate list is empty: nothing to visit.
  if (clip.animatedTrackCount > 0) {
    for (let s = 0; s < clip.segmentCount; s++) {
      for (const bits of segmentBitRates(clip, s)) counts.set(bits, (counts.get(bits) ?? 0) + 1);
    }
  }
  for (const bits of [...counts.keys()].sort((a, b) => a - b)) bitRateHistogram[String(bits)] = counts.get(bits) ?? 0;
  const rawBytes = rawSizeBytes(clip.boneCount, clip.sampleCount);
  return {
    name: clip.name ?? null,
    version: clip.version,
    rotationFormat: ROTATION_FORMAT_NAMES[clip.rotationFormat] ?? String(clip.rotationFormat),
    hasChecksum: clip.hasChecksum,
    hasNames: clip.boneNames !== undefined,
    boneCount: clip.boneCount,
    sampleCount: clip.sampleCount,
    sampleRate: clip.sampleRate,
    duration: clip.duration,
    segmentCount: clip.segmentCount,
    unit: clip.unit,
    byteLength: clip.byteLength,
    rawBytes,
    ratio: rawBytes / clip.byteLength,
    sections: sectionSizes(clip),
    additive: clip.additive ?? null,
    weightTracks: bones.filter((b) => b.weight).length,
    trackClasses,
    bones,
    bitRateHistogram,
  };
}
