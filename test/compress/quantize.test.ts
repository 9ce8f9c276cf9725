/**
 * reconstructTrackSegment over part of a segment: the bit-rate search measures a trial at
 * one key from that key alone rebuilt, and keeps its decision only because the key comes
 * out exactly as in the whole segment's rebuild (the one the decoder test checks against
 * the decoder), with or without the component bits passed in.
 */
import { describe, expect, it } from 'vitest';

import { componentBitsOf, reconstructTrackSegment } from '../../src/compress/quantize.js';
import { MAX_QUANTIZED_BITS, RAW_BITS } from '../../src/runtime/format.js';
import { encodeWithRates } from '../utils/clips.js';
import { makeSyntheticClip } from '../utils/synthetic.js';

const RATES = [0, ...Array.from({ length: MAX_QUANTIZED_BITS }, (_, i) => i + 1), RAW_BITS];

describe('reconstructTrackSegment', () => {
  it('rebuilds one key alone exactly as within its segment, at every rate and dropped component', () => {
    // Big rotations (every component dropped somewhere), animated translations and scales,
    // a short last segment.
    const clip = makeSyntheticClip({
      boneCount: 6,
      sampleCount: 45,
      seed: 7,
      animatedScale: true,
      maxAngleDeg: 175,
      animatedTranslationShare: 0.5,
    });
    const enc = encodeWithRates(clip, () => RAW_BITS, { reference: 'identity' });
    const drops = new Set<number>();
    const bits = new Uint8Array(3);
    let compared = 0;
    enc.tracks.forEach((track, j) => {
      for (let s = 0; s < enc.layout.count; s++) {
        const size = enc.layout.sizes[s];
        drops.add(track.drop[s]);
        for (const rate of RATES) {
          const at = { j, trackCount: enc.tracks.length, segment: s, start: enc.layout.starts[s], size };
          const whole = new Float32Array(size * 4);
          reconstructTrackSegment(track, at, rate, enc.clipRanges, enc.ranges, whole, 0, 4);
          if (rate > 0 && rate !== RAW_BITS) componentBitsOf(track, at, rate, enc.clipRanges, enc.ranges, bits);
          for (let k = 0; k < size; k++) {
            const one = { ...at, start: at.start + k, size: 1 };
            const alone = new Float32Array(4);
            reconstructTrackSegment(track, one, rate, enc.clipRanges, enc.ranges, alone, 0, 4);
            expect(alone).toEqual(whole.subarray(k * 4, k * 4 + 4));
            const known = new Float32Array(4);
            reconstructTrackSegment(track, one, rate, enc.clipRanges, enc.ranges, known, 0, 4, bits, 0);
            expect(known).toEqual(alone);
            compared++;
          }
        }
      }
    });
    expect(compared).toBe(enc.tracks.length * clip.sampleCount * RATES.length);
    expect(drops.size).toBeGreaterThan(2);
  });
});
