/**
 * `bonepress compress model.glb -o model.bp.glb` through the built CLI (npm run build):
 * a GLB or .gltf with the extension comes out, validates, reads back with the extension,
 * and `--json` counts the animation bytes of source and output alike.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { NodeIO } from '@gltf-transform/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  BONEPRESS_ANIMATION_COMPRESSION,
  BonepressAnimationCompression,
  animationBytes,
} from '../../src/gltf-transform/index.js';
import { runCli } from '../cli/run-cli.js';
import { makeRigs, makeSceneRig } from '../utils/gltf-rigs.js';

const validator = createRequire(import.meta.url)('gltf-validator') as {
  validateBytes(data: Uint8Array): Promise<{ issues: { numErrors: number } }>;
};

describe('compress with glTF output', () => {
  let dir: string;
  let scene: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bonepress-gltf-'));
    scene = join(dir, 'scene.glb');
    writeFileSync(scene, await makeSceneRig());
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('-o x.glb writes a valid GLB with the extension, smaller than the source, and --json reports the animation bytes', async () => {
    const out = join(dir, 'scene.bp.glb');
    const run = runCli(['compress', scene, '-o', out, '--json']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as {
      format: string;
      animations: {
        animation: string;
        stats: { maxError: number; threshold: number; boneCount: number; sampleCount: number };
      }[];
      sourceAnimation: { total: number };
      outputAnimation: { total: number; compressedBytes: number };
      sourceFileBytes: number;
      outputFileBytes: number;
      animationRatio: number;
      rawBytes: number;
    };
    expect(report.format).toBe('glb');
    expect(report.animations.map((a) => a.animation)).toEqual(['WalkA', 'WaveB', 'Both', 'CameraFly']);
    const glb = new Uint8Array(readFileSync(out));
    expect(report.outputFileBytes).toBe(glb.byteLength);
    expect(report.sourceFileBytes).toBe(readFileSync(scene).byteLength);
    const io = new NodeIO().registerExtensions([BonepressAnimationCompression]);
    const { json } = await io.binaryToJSON(glb);
    expect(report.outputAnimation).toEqual(animationBytes(json));
    expect(report.sourceAnimation).toEqual(
      animationBytes((await io.binaryToJSON(new Uint8Array(readFileSync(scene)))).json),
    );
    expect(report.outputAnimation.compressedBytes).toBeGreaterThan(0);
    expect(report.outputAnimation.total).toBeLessThan(report.sourceAnimation.total);
    // Beside the raw figure: 40 bytes per bone per sample of the compressed clips.
    expect(report.rawBytes).toBe(
      report.animations.reduce((sum, a) => sum + 40 * a.stats.boneCount * a.stats.sampleCount, 0),
    );
    expect(json.extensionsRequired).toEqual([BONEPRESS_ANIMATION_COMPRESSION]);
    expect((await validator.validateBytes(glb)).issues.numErrors).toBe(0);
  });

  it('--format gltf writes JSON and a .bin beside it; --fallback keeps the extension optional', async () => {
    const out = join(dir, 'walk.gltf');
    const rig = (await makeRigs())[0];
    const input = join(dir, 'mixamo.glb');
    writeFileSync(input, rig.glb);
    const run = runCli(['compress', input, '-o', out, '--format', 'gltf', '--fallback', '-q']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const json = JSON.parse(readFileSync(out, 'utf8')) as {
      extensionsUsed: string[];
      extensionsRequired?: string[];
      buffers: { uri: string }[];
    };
    expect(json.extensionsUsed).toContain(BONEPRESS_ANIMATION_COMPRESSION);
    expect(json.extensionsRequired ?? []).toEqual([]);
    expect(existsSync(join(dir, json.buffers[0].uri))).toBe(true);
    const doc = await new NodeIO().registerExtensions([BonepressAnimationCompression]).read(out);
    expect(
      doc
        .getRoot()
        .listAnimations()
        .map((a) => a.getExtension(BONEPRESS_ANIMATION_COMPRESSION) !== null),
    ).toEqual([true, true]);

    const quantized = join(dir, 'walk.q.glb');
    const q = runCli(['compress', input, '-o', quantized, '--fallback', 'quantized', '--json']);
    expect(q.code).toBe(0);
    const full = JSON.parse(
      runCli(['compress', input, '-o', join(dir, 'walk.o.glb'), '--fallback', '--json']).stdout,
    ) as { outputAnimation: { total: number } };
    expect((JSON.parse(q.stdout) as { outputAnimation: { total: number } }).outputAnimation.total).toBeLessThan(
      full.outputAnimation.total,
    );
    expect((await validator.validateBytes(new Uint8Array(readFileSync(quantized)))).issues.numErrors).toBe(0);
    expect(runCli(['compress', input, '-o', quantized, '--fallback', 'tiny']).stderr).toMatch(
      /expected one of original, quantized/,
    );
  });

  it('--no-extras leaves morph weights and the camera as plain channels, and is refused for loose clips', async () => {
    const out = join(dir, 'scene.noextras.glb');
    const run = runCli(['compress', scene, '-o', out, '--no-extras', '--json']);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as { animations: { animation: string; stats: { boneCount: number } }[] };
    // CameraFly moves only the camera: nothing of it is compressed without extra bones.
    expect(report.animations.map((a) => a.animation)).toEqual(['WalkA', 'WaveB', 'Both']);
    const { json } = await new NodeIO()
      .registerExtensions([BonepressAnimationCompression])
      .binaryToJSON(new Uint8Array(readFileSync(out)));
    const walk = json.animations!.find((a) => a.name === 'WalkA')!;
    expect(walk.extensions![BONEPRESS_ANIMATION_COMPRESSION]).not.toHaveProperty('weights');
    expect(walk.channels.some((c) => c.target.path === 'weights')).toBe(true);
    const fly = json.animations!.find((a) => a.name === 'CameraFly')!;
    expect(fly.extensions?.[BONEPRESS_ANIMATION_COMPRESSION]).toBeUndefined();
    expect(fly.channels.map((c) => c.target.path)).toEqual(['translation']);
    // WalkA without extras holds the whole skeleton (both characters, 6 bones, and the face
    // mesh a joint of A carries); with them, A's 3 bones and the face's weight bone.
    const withExtras = JSON.parse(
      runCli(['compress', scene, '-o', join(dir, 'scene.extras.glb'), '--json']).stdout,
    ) as typeof report;
    expect(withExtras.animations.find((a) => a.animation === 'WalkA')!.stats.boneCount).toBe(
      report.animations[0].stats.boneCount - 4 + 1,
    );

    const loose = runCli(['compress', scene, '-o', `${join(dir, 'loose')}/`, '--no-extras']);
    expect(loose.code).toBe(2);
    expect(loose.stderr).toMatch(/--no-extras applies to glTF output/);
  });

  it('refuses glTF output for a BVH input and several inputs, and a bad --format, with exit 2', () => {
    const bvh = join('fixtures', 'dataset-1_bow_normal_001.bvh');
    const a = runCli(['compress', bvh, '-o', join(dir, 'x.glb')]);
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/glTF output needs a \.glb or \.gltf input/);
    const b = runCli(['compress', scene, scene, '-o', join(dir, 'y.glb')]);
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/glTF output takes one glTF\/GLB input, got 2/);
    const c = runCli(['compress', scene, '-o', join(dir, 'z.glb'), '--format', 'fbx']);
    expect(c.code).toBe(2);
    expect(c.stderr).toMatch(/expected one of glb, gltf, bpk/);
  });

  it('names the file when the input is not glTF, and keeps .bpk output for -o folder/', () => {
    const bad = join(dir, 'bad.glb');
    writeFileSync(bad, 'not a glb');
    const run = runCli(['compress', bad, '-o', join(dir, 'bad.bp.glb')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(bad);
    const folder = join(dir, 'clips');
    const loose = runCli(['compress', scene, '-o', `${folder}/`, '-q']);
    expect(loose.code).toBe(0);
    expect(existsSync(join(folder, 'scene_WalkA.bpk'))).toBe(true);
  });
});
