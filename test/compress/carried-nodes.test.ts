/**
 * A node an animated node carries without animating it (a camera 50 m off): its own bone,
 * so the compressed clip holds the error there, not only at the animated node's 3 cm shell.
 * Checked against the source's keys in float64, independently of the compressor's metric.
 */
import { Document, NodeIO } from '@gltf-transform/core';
import { describe, expect, it } from 'vitest';

import { compress } from '../../src/compress/index.js';
import { readGltf } from '../../src/readers/index.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { sampleKey } from '../../src/runtime/sampler.js';

const RATE = 30;
const KEYS = 31;
/** The rig's swing about y at key k (radians) and its position. */
const swing = (k: number): number => 0.5 * Math.sin((2 * Math.PI * k) / (KEYS - 1));
const place = (k: number): number[] => [0.3 * Math.sin(k / 5), 1, (0.2 * k) / KEYS];

async function cameraRig(): Promise<Uint8Array> {
  const doc = new Document();
  const buffer = doc.createBuffer();
  const rig = doc.createNode('rig');
  const camera = doc.createNode('camera').setTranslation([0, 0, -50]);
  camera.setCamera(doc.createCamera('view').setType('perspective'));
  rig.addChild(camera);
  doc.createScene().addChild(rig);
  const times = Float32Array.from({ length: KEYS }, (_, k) => k / RATE);
  const rotations = Float32Array.from({ length: KEYS * 4 }, (_, i) => {
    const a = swing(Math.floor(i / 4)) / 2;
    return [0, Math.sin(a), 0, Math.cos(a)][i % 4];
  });
  const translations = Float32Array.from({ length: KEYS * 3 }, (_, i) => place(Math.floor(i / 3))[i % 3]);
  const anim = doc.createAnimation('look');
  for (const [path, values, type] of [
    ['rotation', rotations, 'VEC4'],
    ['translation', translations, 'VEC3'],
  ] as const) {
    const sampler = doc
      .createAnimationSampler()
      .setInput(doc.createAccessor().setType('SCALAR').setArray(times).setBuffer(buffer))
      .setOutput(doc.createAccessor().setType(type).setArray(values).setBuffer(buffer))
      .setInterpolation('LINEAR');
    anim
      .addSampler(sampler)
      .addChannel(doc.createAnimationChannel().setTargetNode(rig).setTargetPath(path).setSampler(sampler));
  }
  return new NodeIO().writeBinary(doc);
}

describe('nodes an animated node carries', () => {
  it('are bones, and the compressed clip holds the camera 50 m off within the threshold at every key', async () => {
    const [clip] = await readGltf(await cameraRig(), 'camera.glb');
    expect(clip.skeleton.boneNames).toEqual(['rig', 'camera']);
    const result = compress(clip);
    expect(result.stats.maxError).toBeLessThanOrEqual(1e-4);
    const compressed = CompressedClip.open(result.bytes);
    const pose = new Float32Array(compressed.boneCount * 10);
    let worst = 0;
    for (let k = 0; k < KEYS; k++) {
      sampleKey(compressed.createSampler(), k, pose);
      // The camera's position: the rig's rotation applied to (0, 0, -50), plus the rig's position.
      const [x, y, z, w] = pose.subarray(0, 4);
      const cz = -50;
      const decoded = [
        2 * (x * z + w * y) * cz + pose[4],
        2 * (y * z - w * x) * cz + pose[5],
        (1 - 2 * (x * x + y * y)) * cz + pose[6],
      ];
      const a = swing(k);
      const source = [Math.fround(Math.sin(a / 2)), Math.fround(Math.cos(a / 2))];
      const p = place(k).map(Math.fround);
      const expected = [2 * source[1] * source[0] * cz + p[0], p[1], (1 - 2 * source[0] * source[0]) * cz + p[2]];
      worst = Math.max(worst, Math.hypot(...decoded.map((v, i) => v - expected[i])));
    }
    expect(worst).toBeLessThanOrEqual(1e-4);
    // Not a bound a 3 cm shell alone would hold: the rig's rotation is within 1e-4 / 50 rad.
    expect(worst).toBeGreaterThan(1e-6);
  });
});
