/**
 * The bench's speed figures: native ACL's measurement read from a file (and refused with
 * the file and the field named when it is not one), the generated big skeletons (valid
 * clips of the announced shapes that compress within the threshold), and the effort
 * levels' figures (the sums of compress() at each level).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { bodyFaceFingersClip, chainClip } from '../../src/bench/big-rigs.js';
import { measureEfforts, readAclMeasurement } from '../../src/bench/speed.js';
import { validateRawClip } from '../../src/clip/raw-clip.js';
import { compress } from '../../src/compress/index.js';
import { EFFORTS } from '../../src/compress/options.js';
import { makeTempDir } from '../cli/run-cli.js';
import { loadFixture } from '../utils/clips.js';

const temp = makeTempDir();
afterAll(() => temp.remove());

describe('readAclMeasurement', () => {
  const good = {
    label: 'ACL 2.1.0 acl_compressor',
    clips: 174,
    compressSeconds: 2.76,
    processSeconds: 4.36,
    rawBytes: 28084320,
  };

  it('reads a measurement', async () => {
    const file = join(temp.dir, 'acl.json');
    writeFileSync(file, JSON.stringify({ ...good, extra: 'kept out' }));
    expect(await readAclMeasurement(file)).toEqual(good);
    writeFileSync(file, JSON.stringify({ ...good, processCpuSeconds: 4.2 }));
    expect(await readAclMeasurement(file)).toEqual({ ...good, processCpuSeconds: 4.2 });
  });

  it('refuses a file that is not one, naming the file and the field', async () => {
    const cases: [string, string][] = [
      ['not json', 'Unexpected token'],
      ['[1]', 'expected a JSON object'],
      [JSON.stringify({ ...good, label: '' }), '"label" must be a non-empty string'],
      [JSON.stringify({ ...good, compressSeconds: 0 }), '"compressSeconds" must be a number > 0'],
      [JSON.stringify({ ...good, rawBytes: undefined }), '"rawBytes" must be a number > 0'],
      [JSON.stringify({ ...good, processCpuSeconds: -1 }), '"processCpuSeconds" must be a number > 0'],
    ];
    for (const [i, [text, problem]] of cases.entries()) {
      const file = join(temp.dir, `bad-${i}.json`);
      writeFileSync(file, text);
      await expect(readAclMeasurement(file)).rejects.toMatchObject({
        code: 'BAD_ACL',
        message: expect.stringContaining(file),
      });
      await expect(readAclMeasurement(file)).rejects.toThrow(problem);
    }
    await expect(readAclMeasurement(join(temp.dir, 'missing.json'))).rejects.toMatchObject({ code: 'BAD_ACL' });
  });
});

describe('big skeletons', () => {
  it('a chain of the asked length, each joint the child of the one before', () => {
    const clip = chainClip(1000, 3);
    validateRawClip(clip);
    expect(clip.skeleton.parents).toEqual(Int32Array.from({ length: 1000 }, (_, b) => b - 1));
    expect(clip.sampleCount).toBe(3);
  });

  it('a 300-bone rig: body, 30 finger bones in chains of three, the face under the head', () => {
    const clip = bodyFaceFingersClip(3);
    validateRawClip(clip);
    const { boneNames, parents } = clip.skeleton;
    expect(boneNames).toHaveLength(300);
    expect(new Set(boneNames).size).toBe(300);
    expect(boneNames.filter((name) => name.startsWith('Finger'))).toHaveLength(30);
    const head = boneNames.indexOf('Head');
    const underHead = (b: number): boolean => b === head || (b >= 0 && underHead(parents[b]));
    const face = boneNames.flatMap((name, b) => (name.startsWith('Face') ? [b] : []));
    expect(face).toHaveLength(300 - 52);
    expect(face.every((b) => underHead(parents[b]))).toBe(true);
  });

  it('both compress within the threshold and change with time', { timeout: 120_000 }, () => {
    for (const clip of [chainClip(120, 40), bodyFaceFingersClip(40)]) {
      const { stats } = compress(clip);
      expect(stats.maxError).toBeLessThanOrEqual(stats.threshold);
      expect(stats.tracks.animated).toBeGreaterThan(clip.skeleton.parents.length / 2);
    }
  });
});

describe('measureEfforts', () => {
  it('sums compress() at each level over the clips', { timeout: 120_000 }, () => {
    const clips = ['dataset-1_dash_normal_001.bvh', 'dataset-1_byebye_angry_001.bvh'].map(loadFixture);
    const figures = measureEfforts(clips, {});
    expect(figures.map((f) => f.effort)).toEqual([...EFFORTS]);
    const raw = clips.reduce((sum, clip) => sum + 40 * clip.skeleton.parents.length * clip.sampleCount, 0);
    for (const f of figures) {
      const bytes = clips.reduce((sum, clip) => sum + compress(clip, { effort: f.effort }).bytes.length, 0);
      expect(f.compressedBytes).toBe(bytes);
      expect(f.ratio).toBeCloseTo(raw / bytes, 12);
      expect([f.clips, f.withinThreshold]).toEqual([2, 2]);
      expect(f.seconds).toBeGreaterThan(0);
    }
  });
});
