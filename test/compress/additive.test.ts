/**
 * Additive clips: the compressor stores deltas against a reference pose and bounds the
 * error of the deltas applied to a base. Checked independently (src/bench/additive.ts's
 * float64 check, three.js's additive arithmetic written out) at random times, on generated
 * clips with animated scales and on fixture clips over another fixture clip as base; the
 * additive record round-trips; bad options and corrupt records are refused.
 */
import { describe, expect, it } from 'vitest';

import { checkAdditive } from '../../src/bench/additive.js';
import type { RawClip } from '../../src/clip/raw-clip.js';
import { compress } from '../../src/compress/index.js';
import { OptionsError } from '../../src/compress/options.js';
import { ADDITIVE, FLAGS, HEADER } from '../../src/runtime/format.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { sectionSizes } from '../../src/runtime/clip-inspection.js';
import { FORMAT_ERROR, FormatError } from '../../src/runtime/errors.js';
import { applyAdditivePose } from '../../src/runtime/pose.js';
import { loadFixture, patched, resealChecksum } from '../utils/clips.js';
import { thrownBy } from '../utils/errors.js';
import { makeSyntheticClip } from '../utils/synthetic.js';
import { sampleKey } from '../../src/runtime/sampler.js';

/** `clip` played backwards: the same skeleton, other poses (a base for it). */
function reversed(clip: RawClip): RawClip {
  const n = clip.sampleCount;
  const flip = (values: Float32Array, width: number) => {
    const out = new Float32Array(values.length);
    for (let b = 0; b < values.length / (n * width); b++)
      for (let s = 0; s < n; s++)
        for (let c = 0; c < width; c++) out[(b * n + s) * width + c] = values[(b * n + n - 1 - s) * width + c];
    return out;
  };
  return {
    ...clip,
    name: `${clip.name} reversed`,
    rotations: flip(clip.rotations, 4),
    translations: flip(clip.translations, 3),
    scales: flip(clip.scales, 3),
  };
}

/** The record's byte offset in `bytes` (right before the segments). */
function recordOffset(bytes: Uint8Array): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return view.getUint32(HEADER.SEGMENTS_OFFSET, true) - ADDITIVE.BYTES;
}

const generated = [
  makeSyntheticClip({ boneCount: 24, sampleCount: 90, seed: 3, animatedScale: true, animatedTranslationShare: 0.4 }),
  makeSyntheticClip({ boneCount: 12, sampleCount: 61, seed: 8, shape: 'chain', animatedScale: true }),
];

describe('additive clips', () => {
  it('on generated clips with animated scales: base ∘ additive within the threshold at 500 random times, over the reference pose and over a base clip', () => {
    for (const clip of generated) {
      for (const [frame, base] of [
        [0, undefined],
        [7, reversed(clip)],
      ] as const) {
        const { bytes, stats } = compress(clip, { additive: { reference: frame, base } });
        expect(stats.maxError, clip.name).toBeLessThanOrEqual(stats.threshold);
        const compressed = CompressedClip.open(bytes);
        const check = checkAdditive(clip, compressed, frame, base, 500, frame + 1);
        expect(check.maxError, `${clip.name} frame ${frame}`).toBeGreaterThan(0);
        expect(check.maxError, `${clip.name} frame ${frame} at ${check.worstTime} s`).toBeLessThanOrEqual(
          stats.threshold,
        );
      }
    }
  });

  it('on fixture clips, additive against the first frame over another fixture clip as base: within 0.01 cm at 300 random times', () => {
    const names = ['dataset-1_bow_normal_001.bvh', 'dataset-1_kick_normal_001.bvh', 'dataset-1_run_active_001.bvh'];
    const clips = names.map(loadFixture);
    clips.forEach((clip, i) => {
      const base = clips[(i + 1) % clips.length];
      const { bytes, stats } = compress(clip, { additive: { base } });
      expect(stats.maxError, clip.name).toBeLessThanOrEqual(stats.threshold);
      const check = checkAdditive(clip, CompressedClip.open(bytes), 0, base, 300, i + 1);
      expect(check.maxError, `${clip.name} at ${check.worstTime} s`).toBeLessThanOrEqual(0.01);
    });
  });

  it('the decoded delta applied to the reference pose is the source (applyAdditivePose)', () => {
    const clip = generated[0];
    const { bytes, stats } = compress(clip, { additive: { reference: 5 } });
    const compressed = CompressedClip.open(bytes);
    const reference = new Float32Array(compressed.boneCount * 10);
    const delta = new Float32Array(reference.length);
    const source = new Float32Array(reference.length);
    for (let b = 0; b < compressed.boneCount; b++) {
      for (let c = 0; c < 4; c++) reference[b * 10 + c] = clip.rotations[(b * clip.sampleCount + 5) * 4 + c];
      for (let c = 0; c < 3; c++) reference[b * 10 + 4 + c] = clip.translations[(b * clip.sampleCount + 5) * 3 + c];
      for (let c = 0; c < 3; c++) reference[b * 10 + 7 + c] = clip.scales[(b * clip.sampleCount + 5) * 3 + c];
    }
    let worst = 0;
    for (const s of [0, 5, 40, clip.sampleCount - 1]) {
      sampleKey(compressed.createSampler(), s, delta);
      applyAdditivePose(reference, delta, delta);
      for (let b = 0; b < compressed.boneCount; b++) {
        for (let c = 0; c < 3; c++) source[c] = clip.translations[(b * clip.sampleCount + s) * 3 + c];
        for (let c = 0; c < 3; c++) worst = Math.max(worst, Math.abs(delta[b * 10 + 4 + c] - source[c]));
        for (let c = 0; c < 3; c++)
          worst = Math.max(worst, Math.abs(delta[b * 10 + 7 + c] - clip.scales[(b * clip.sampleCount + s) * 3 + c]));
      }
    }
    // Translations and scales: each within the threshold (a vertex moves by at least as much).
    expect(worst).toBeLessThanOrEqual(stats.threshold);
  });

  it('the additive record round-trips: reference frame and time, or a pose of another clip', () => {
    const clip = generated[1];
    const frame = CompressedClip.open(compress(clip, { additive: { reference: 12 } }).bytes);
    expect(frame.additive).toEqual({ mode: 'local', reference: { kind: 'frame', frame: 12, time: 12 / 30 } });
    expect(sectionSizes(frame).additive).toBe(ADDITIVE.BYTES);
    const pose = compress(clip, { additive: { reference: { clip: reversed(clip), time: 0.5 } } });
    expect(CompressedClip.open(pose.bytes).additive).toEqual({ mode: 'local', reference: { kind: 'pose', time: 0.5 } });
    expect(pose.stats.additive).toEqual({ mode: 'local', reference: { kind: 'pose', time: 0.5 } });
    const absolute = CompressedClip.open(compress(clip).bytes);
    expect(absolute.additive).toBeUndefined();
    expect(sectionSizes(absolute).additive).toBe(0);
  });

  it('refuses a frame the clip does not have and a reference or base of another skeleton or unit', () => {
    const [clip, other] = generated;
    for (const reference of [-1, 90, 2.5]) {
      const e = thrownBy(() => compress(clip, { additive: { reference } }), OptionsError);
      expect(e.message).toContain(`additive reference frame ${reference}: clip "${clip.name}" has frames 0..89`);
    }
    expect(thrownBy(() => compress(clip, { additive: { base: other } }), OptionsError).message).toMatch(
      /additive base "synthetic-8" has 12 bones; clip "synthetic-3" has 24 \(not the same skeleton\)/,
    );
    expect(
      thrownBy(() => compress(clip, { additive: { base: { ...reversed(clip), unit: 'm' } } }), OptionsError).message,
    ).toBe('additive base "synthetic-3 reversed" is in m, clip "synthetic-3" in cm: read both in one unit');
    const renamed = { ...clip, skeleton: { ...clip.skeleton, boneNames: clip.skeleton.boneNames.map((n) => `x${n}`) } };
    expect(
      thrownBy(() => compress(clip, { additive: { reference: { clip: renamed } } }), OptionsError).message,
    ).toMatch(/additive reference "synthetic-3": bone 0 is "x.*not the same skeleton/);
    expect(
      thrownBy(() => compress(clip, { additive: { base: { clip: reversed(clip), time: Number.NaN } } }), OptionsError)
        .message,
    ).toMatch(/additive base: time NaN s/);
  });

  it('a corrupt additive record is a FormatError at its byte', () => {
    const { bytes } = compress(generated[1], { additive: { reference: 3 } });
    const at = recordOffset(bytes);
    const cases: [string, (view: DataView) => void, number, RegExp][] = [
      ['mode', (v) => v.setUint8(at + ADDITIVE.MODE, 7), at + ADDITIVE.MODE, /additive mode 7 \(need 1\)/],
      ['kind', (v) => v.setUint8(at + ADDITIVE.REFERENCE, 2), at + ADDITIVE.REFERENCE, /reference kind 2/],
      ['reserved', (v) => v.setUint16(at + ADDITIVE.RESERVED, 1, true), at + ADDITIVE.RESERVED, /reserved/],
      [
        'pose frame',
        (v) => v.setUint8(at + ADDITIVE.REFERENCE, 1),
        at + ADDITIVE.FRAME,
        /pose reference frame 3 \(need 0\)/,
      ],
      ['time', (v) => v.setFloat64(at + ADDITIVE.TIME, Number.NaN, true), at + ADDITIVE.TIME, /reference time NaN/],
    ];
    for (const [what, edit, offset, message] of cases) {
      const bad = patched(bytes, (view, out) => {
        edit(view);
        resealChecksum(out);
      });
      const e = thrownBy(() => CompressedClip.open(bad), FormatError);
      expect(e.code, what).toBe(FORMAT_ERROR.BAD_VALUE);
      expect(e.byteOffset, what).toBe(offset);
      expect(e.message, what).toMatch(message);
    }
    // The flag cleared: the record's bytes are then read as the segments, at the wrong offset.
    const unflagged = patched(bytes, (view, out) => {
      view.setUint16(HEADER.FLAGS, view.getUint16(HEADER.FLAGS, true) & ~FLAGS.ADDITIVE, true);
      resealChecksum(out);
    });
    expect(thrownBy(() => CompressedClip.open(unflagged), FormatError).code).toBe(FORMAT_ERROR.BAD_OFFSET);
  });
});
