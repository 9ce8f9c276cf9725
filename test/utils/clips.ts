/**
 * Test helpers around clips and `.bpk` bytes: the committed fixtures, a writer that runs
 * the compressor's stages with bit rates chosen by the test (so every rate, the dropped
 * components and the raw rate can be exercised on purpose), and byte patching for the
 * corrupt-file tests.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import type { RawClip } from '../../src/clip/raw-clip.js';
import { classifyTracks, type TrackClasses } from '../../src/compress/classify.js';
import { preprocessRotations, type RotationReference } from '../../src/compress/preprocess.js';
import {
  extractClipRanges,
  extractSegmentRanges,
  gatherAnimatedTracks,
  type AnimatedTrack,
  type ClipRanges,
  type SegmentRanges,
} from '../../src/compress/range.js';
import { segmentClip, type SegmentLayout } from '../../src/compress/segment.js';
import { writeClip } from '../../src/compress/write.js';
import { readBvh } from '../../src/readers/bvh.js';
import { CHECKSUM_START, FLAGS, HEADER, crc32 } from '../../src/runtime/format.js';

/** Absolute path of the repository's fixtures/ folder. */
export const FIXTURES_DIR = fileURLToPath(new URL('../../fixtures/', import.meta.url));

/** File names of the BVH fixtures, sorted. */
export function fixtureNames(): string[] {
  return readdirSync(FIXTURES_DIR)
    .filter((f) => f.endsWith('.bvh'))
    .sort();
}

const fixtureCache = new Map<string, RawClip>();

/** Reads fixture `file` (cached: callers must not modify the clip). */
export function loadFixture(file: string): RawClip {
  let clip = fixtureCache.get(file);
  if (!clip) {
    clip = readBvh(readFileSync(FIXTURES_DIR + file, 'utf8'), file);
    fixtureCache.set(file, clip);
  }
  return clip;
}

/** Everything a forced-rate encoding produced: the bytes and the compressor's intermediate data. */
export interface ForcedEncoding {
  readonly bytes: Uint8Array;
  readonly classes: TrackClasses;
  readonly tracks: readonly AnimatedTrack[];
  readonly clipRanges: ClipRanges;
  readonly ranges: SegmentRanges;
  readonly layout: SegmentLayout;
  /** `rates[s * tracks.length + j]`. */
  readonly rates: Uint8Array;
}

/** Options of {@link encodeWithRates}. */
export interface ForcedEncodingOptions {
  /** Classification threshold in clip units; default 0.01. */
  threshold?: number;
  reference?: RotationReference;
  includeNames?: boolean;
  checksum?: boolean;
}

/**
 * Runs the compressor's stages on `clip` but takes every (segment, animated track) bit rate
 * from `rateOf` instead of the search, then writes the file with the real writer.
 */
export function encodeWithRates(
  clip: RawClip,
  rateOf: (segment: number, track: AnimatedTrack, j: number) => number,
  options: ForcedEncodingOptions = {},
): ForcedEncoding {
  const rotations = preprocessRotations(clip);
  const classes = classifyTracks(clip, rotations, options.threshold ?? 0.01, clip.skeleton.shellDistances);
  const layout = segmentClip(clip.sampleCount);
  const tracks = gatherAnimatedTracks(clip, rotations, classes.animated, options.reference ?? 'mean', layout);
  const clipRanges = extractClipRanges(tracks, layout);
  const ranges = extractSegmentRanges(tracks, clipRanges, layout);
  const rates = new Uint8Array(layout.count * tracks.length);
  for (let s = 0; s < layout.count; s++) {
    for (let j = 0; j < tracks.length; j++) rates[s * tracks.length + j] = rateOf(s, tracks[j], j);
  }
  const bytes = writeClip({
    clip,
    classes,
    tracks,
    clipRanges,
    ranges,
    layout,
    rates,
    includeNames: options.includeNames ?? true,
    checksum: options.checksum ?? true,
  });
  return { bytes, classes, tracks, clipRanges, ranges, layout, rates };
}

/**
 * A copy of `bytes` changed by `edit`, with the checksum recomputed when the file has one,
 * so the check under test (not the CRC) is what rejects it.
 */
export function patched(bytes: Uint8Array, edit: (view: DataView, out: Uint8Array) => void): Uint8Array {
  const out = bytes.slice();
  const view = new DataView(out.buffer);
  edit(view, out);
  resealChecksum(out);
  return out;
}

/** Rewrites the CRC-32 of `bytes` in place when its flags say it has one. */
export function resealChecksum(bytes: Uint8Array): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < HEADER.SIZE) return;
  if (view.getUint16(HEADER.FLAGS, true) & FLAGS.HAS_CHECKSUM) {
    view.setUint32(HEADER.CHECKSUM, crc32(bytes, CHECKSUM_START, bytes.byteLength), true);
  }
}
