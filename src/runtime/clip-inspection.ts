/**
 * What tools and hosts read of an opened clip beyond its fields (`bonepress info`, the
 * viewer, the glTF writers): its sections' sizes, each segment's bit rates, each track's
 * class and whether it steps, each sample's time. Free functions rather than methods of
 * {@link CompressedClip}, so a page that only plays clips does not download them.
 */
import { ADDITIVE, BITSET, HEADER, KIND_POSE_OFFSET, RATE_MASK, TRACKS_PER_BONE } from './format.js';
import { trackBit } from './clip-reader.js';
import type { CompressedClip } from './compressed-clip.js';
import { POSE_STRIDE } from '../shared/pose-layout.js';

/** Class of a track in a compressed clip. */
export type TrackClass = 'default' | 'constant' | 'animated';

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

/**
 * Byte size of each section of `clip`, from the offsets in its header (validated where the
 * counts put each section); the optional sections between the rotation references and the
 * segments follow each other without padding.
 */
export function sectionSizes(clip: CompressedClip): SectionSizes {
  const view = new DataView(clip.bytes.buffer, clip.bytes.byteOffset, HEADER.SIZE);
  const offset = (field: HEADER): number => view.getUint32(field, true);
  const size = clip.byteLength;
  const segments = offset(HEADER.SEGMENTS_OFFSET),
    names = offset(HEADER.NAMES_OFFSET);
  const nodeIndices = clip.nodeIndices ? 4 * clip.boneCount : 0,
    keyTimes = clip.keyTimes ? 4 * clip.sampleCount : 0,
    additive = clip.additive ? ADDITIVE.BYTES : 0;
  return {
    header: HEADER.SIZE,
    parents: offset(HEADER.BITSETS_OFFSET) - offset(HEADER.PARENTS_OFFSET),
    bitsets: offset(HEADER.CONSTANTS_OFFSET) - offset(HEADER.BITSETS_OFFSET),
    constants: offset(HEADER.CLIP_RANGES_OFFSET) - offset(HEADER.CONSTANTS_OFFSET),
    clipRanges: offset(HEADER.ROTATION_REFS_OFFSET) - offset(HEADER.CLIP_RANGES_OFFSET),
    rotationRefs: segments - additive - keyTimes - nodeIndices - offset(HEADER.ROTATION_REFS_OFFSET),
    nodeIndices,
    keyTimes,
    additive,
    segments: (names || size) - segments,
    names: names ? size - names : 0,
    total: size,
  };
}

/** Class of track `kind` (0 rotation, 1 translation, 2 scale) of `bone` in `clip`. */
export function trackClassOf(clip: CompressedClip, bone: number, kind: number): TrackClass {
  const t = bone * TRACKS_PER_BONE + kind;
  if (trackBit(clip.bytes, clip.boneCount, BITSET.DEFAULT, t)) return 'default';
  return trackBit(clip.bytes, clip.boneCount, BITSET.CONSTANT, t) ? 'constant' : 'animated';
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
