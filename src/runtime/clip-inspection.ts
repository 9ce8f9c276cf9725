/**
 * What tools and hosts read of an opened clip beyond its fields (`bonepress info`, the
 * viewer, the glTF writers): its sections' sizes, each segment's bit rates, each track's
 * class and whether it steps, each sample's time. Free functions rather than methods of
 * {@link CompressedClip}, so a page that only plays clips does not download them.
 */
import { HEADER, KIND_POSE_OFFSET, RATE_MASK, TRACKS_PER_BONE } from './format.js';
import type { CompressedClip } from './compressed-clip.js';
import { POSE_STRIDE } from '../shared/pose-layout.js';

/** Class of a track in a compressed clip. */
export type TrackClass = 'default' | 'constant' | 'animated';

/** By clip-reader.ts's track classes (CLASS_DEFAULT, CLASS_CONSTANT, CLASS_ANIMATED). */
const TRACK_CLASS_NAMES: readonly TrackClass[] = ['default', 'constant', 'animated'];

/** Byte ranges of a clip's sections, for tools (`bonepress info`). */
export interface SectionSizes {
  header: number;
  parents: number;
  bitsets: number;
  constants: number;
  clipRanges: number;
  rotationRefs: number;
  nodeIndices: number;
  keyTimes: number;
  /** The additive record (16 bytes on additive clips, else 0). */
  additive: number;
  segments: number;
  names: number;
  total: number;
}

/** Byte size of each section of `clip`. */
export function sectionSizes(clip: CompressedClip): SectionSizes {
  const { layout, segmentsEnd, namesOffset } = clip.sections;
  const size = clip.byteLength;
  // Each optional section ends where the next present one starts.
  const after = (...starts: number[]) => starts.find((at) => at > 0) ?? layout.segments;
  return {
    header: HEADER.SIZE,
    parents: layout.bitsets - layout.parents,
    bitsets: layout.constants - layout.bitsets,
    constants: layout.clipRanges - layout.constants,
    clipRanges: layout.rotationRefs - layout.clipRanges,
    rotationRefs: after(layout.nodeIndices, layout.keyTimes, layout.additive) - layout.rotationRefs,
    nodeIndices: layout.nodeIndices ? after(layout.keyTimes, layout.additive) - layout.nodeIndices : 0,
    keyTimes: layout.keyTimes ? after(layout.additive) - layout.keyTimes : 0,
    additive: layout.additive ? layout.segments - layout.additive : 0,
    segments: segmentsEnd - layout.segments,
    names: namesOffset ? size - namesOffset : 0,
    total: size,
  };
}

/** Class of track `kind` (0 rotation, 1 translation, 2 scale) of `bone` in `clip`. */
export function trackClassOf(clip: CompressedClip, bone: number, kind: number): TrackClass {
  return TRACK_CLASS_NAMES[clip.trackClass[bone * TRACKS_PER_BONE + kind]];
}

/** Whether animated track `kind` of `bone` in `clip` holds each sample until the next (STEP) instead of blending. */
export function isStepTrack(clip: CompressedClip, bone: number, kind: number): boolean {
  const { poseOffset, step } = clip.tables.animated;
  const a = poseOffset.indexOf(bone * POSE_STRIDE + KIND_POSE_OFFSET[kind]);
  return a >= 0 && step[a] === 1;
}

/** The time of sample `k` (0 … sampleCount − 1) of `clip` on the source's timeline: its key time, or startTime + k / sampleRate. */
export function keyTime(clip: CompressedClip, k: number): number {
  return clip.keyTimes ? clip.keyTimes[k] : clip.startTime + k / clip.sampleRate;
}

/** Duration of `clip`'s sampled span, (sampleCount − 1) / sampleRate seconds from its startTime. */
export function sampledSpan(clip: CompressedClip): number {
  return clip.sampleCount > 1 ? (clip.sampleCount - 1) / clip.sampleRate : 0;
}

/** Bit rate (bits per component; 32 = raw float) of each animated track of `clip` in `segment`. A copy. */
export function segmentBitRates(clip: CompressedClip, segment: number): Uint8Array {
  const off = clip.tables.segRates[segment];
  return clip.bytes.slice(off, off + clip.animatedTrackCount).map((r) => r & RATE_MASK);
}

/** Bone and kind of animated track `index` of `clip`. */
export function animatedTrack(clip: CompressedClip, index: number): { bone: number; kind: number } {
  const { poseOffset, kind } = clip.tables.animated;
  return { bone: (poseOffset[index] / POSE_STRIDE) | 0, kind: kind[index] };
}
