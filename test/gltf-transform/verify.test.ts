/**
 * `bonepress verify source.glb out.bp.glb` through the built CLI (npm run build): every
 * compressed animation of the asset measured against the source's clip of the same name,
 * extra bones (morph weights, props, cameras) included; a clip above a tighter threshold
 * fails with exit 1, and a corrupted clip payload is a typed error (exit 2) naming the file
 * and the animation.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { NodeIO } from '@gltf-transform/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BONEPRESS_ANIMATION_COMPRESSION } from '../../src/gltf-transform/index.js';
import { compressGltfFile, readCompressedGltfFile } from '../../src/node/index.js';
import { runCli } from '../cli/run-cli.js';
import { makeExtendedSceneRig, makePropRig, makeSceneRig } from '../utils/gltf-rigs.js';
import { sampleKey } from '../../src/runtime/sampler.js';

interface ClipReport {
  clip: string;
  maxError: number;
  threshold: number;
  pass: boolean;
  boneCount: number;
  skeletonBones: number;
  extraBones: number;
  extraBonesNotCompared: number;
}
interface AssetReport {
  clips: ClipReport[];
  notCompressed: string[];
  pass: boolean;
}

describe('verify with a compressed glTF asset', () => {
  let dir: string;
  let scene: string, sceneOut: string, props: string, propsOut: string;
  let propStats: { animation: string; stats: { maxError: number } }[];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bonepress-gltf-verify-'));
    scene = join(dir, 'scene.glb');
    sceneOut = join(dir, 'scene.bp.glb');
    props = join(dir, 'props.glb');
    propsOut = join(dir, 'props.bp.glb');
    writeFileSync(scene, await makeSceneRig());
    writeFileSync(props, await makePropRig());
    expect(runCli(['compress', scene, '-o', sceneOut, '-q']).code).toBe(0);
    const compressed = runCli(['compress', props, '-o', propsOut, '--json']);
    expect(compressed.code).toBe(0);
    propStats = (JSON.parse(compressed.stdout) as { animations: { animation: string; stats: { maxError: number } }[] })
      .animations;
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('readCompressedGltfFile opens each compressed clip with its name and bone lists; a plain asset has none', async () => {
    const clips = await readCompressedGltfFile(sceneOut);
    expect(clips.map((c) => c.name)).toEqual(['WalkA', 'WaveB', 'Both', 'CameraFly']);
    for (const c of clips) {
      expect(c.clip.boneCount).toBe(
        c.joints.length + c.nodes.length + c.weights.reduce((n, w) => n + w.scales.length, 0),
      );
    }
    // WalkA holds the face's morph weight; CameraFly only the camera node.
    expect(clips[0].weights).toHaveLength(1);
    expect(clips[3].joints).toEqual([]);
    expect(clips[3].nodes).toHaveLength(1);
    expect(await readCompressedGltfFile(scene)).toEqual([]);
  });

  it('passes at the default error, one report per clip, extra bones compared', () => {
    const run = runCli(['verify', scene, sceneOut, '--json']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as AssetReport;
    expect(report.pass).toBe(true);
    expect(report.notCompressed).toEqual([]);
    expect(report.clips.map((c) => c.clip)).toEqual(['WalkA', 'WaveB', 'Both', 'CameraFly']);
    for (const c of report.clips) {
      expect(c.pass).toBe(true);
      expect(c.maxError).toBeLessThanOrEqual(c.threshold);
      expect(c.boneCount).toBe(c.skeletonBones + c.extraBones);
      expect(c.extraBonesNotCompared).toBe(0);
    }
    expect(report.clips[0].extraBones).toBe(1);
    expect(report.clips[3]).toMatchObject({ skeletonBones: 0, extraBones: 1 });

    const text = runCli(['verify', scene, sceneOut, '--clip', 'WaveB']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('"WaveB"');
    expect(text.stdout).not.toContain('"WalkA"');
    expect(text.stdout).toContain('PASS');
  });

  it('measures props and morph weights at their own distances, and fails with exit 1 under a tighter --error', () => {
    const run = runCli(['verify', props, propsOut, '--json']);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as AssetReport;
    expect(report.clips.map((c) => c.clip)).toEqual(['Scene', 'Props']);
    expect(report.clips.every((c) => c.pass && c.extraBones > 0)).toBe(true);
    // The same figure the compressor measured, at the distances it held each bone to (the
    // crate at its mesh radius, not --shell's 3 cm).
    expect(report.clips.map((c) => c.maxError)).toEqual(propStats.map((a) => a.stats.maxError));
    // The crate's distance counts: nearer, its error is no larger; far out, it is the largest.
    const crateAt = (length: string): number =>
      (
        JSON.parse(
          runCli(['verify', props, propsOut, '--json', '--clip', 'Props', '--shell-bone', `Crate=${length}`]).stdout,
        ) as AssetReport
      ).clips[0].maxError;
    expect(crateAt('3cm')).toBeLessThanOrEqual(report.clips[1].maxError);
    expect(crateAt('10m')).toBeGreaterThan(report.clips[1].maxError);
    const worst = Math.max(...report.clips.map((c) => c.maxError));
    expect(worst).toBeGreaterThan(0);
    // Half the largest error that was reached: the clip that reached it no longer passes.
    const tight = runCli(['verify', props, propsOut, '--json', '--error', `${worst / 2}m`]);
    expect(tight.code).toBe(1);
    const failed = JSON.parse(tight.stdout) as AssetReport;
    expect(failed.pass).toBe(false);
    expect(failed.clips.some((c) => !c.pass)).toBe(true);
  });

  it('an asset compressed without extra bones is compared on its skeleton, the rest counted as not compared', async () => {
    const plain = join(dir, 'scene.noextras.glb');
    await compressGltfFile(scene, plain, { extras: false });
    const run = runCli(['verify', scene, plain, '--json']);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as AssetReport;
    // CameraFly moves no skeleton: without extras it stays plain channels.
    expect(report.clips.map((c) => c.clip)).toEqual(['WalkA', 'WaveB', 'Both']);
    expect(report.notCompressed).toEqual(['CameraFly']);
    expect(report.clips[0]).toMatchObject({ extraBones: 0, extraBonesNotCompared: 1, pass: true });
  });

  it('an asset without the extension is measured as a source, whatever else it requires', async () => {
    const other = join(dir, 'requires-unknown.glb');
    writeFileSync(other, await makeExtendedSceneRig({ requireUnknown: true }));
    expect(await readCompressedGltfFile(other)).toEqual([]);
    const run = runCli(['verify', scene, other, '--clip', 'WalkA', '--json']);
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as { maxError: number }).maxError).toBe(0);
  });

  it('a corrupted clip payload is a typed error naming the file and the animation (exit 2)', async () => {
    const glb = new Uint8Array(readFileSync(sceneOut));
    const { json } = await new NodeIO().binaryToJSON(glb);
    const animation = 1;
    const view =
      json.bufferViews![
        (json.animations![animation].extensions![BONEPRESS_ANIMATION_COMPRESSION] as { bufferView: number }).bufferView
      ];
    // The BIN chunk's data starts after the 12-byte header, the JSON chunk and the BIN chunk header.
    const jsonLength = new DataView(glb.buffer, glb.byteOffset).getUint32(12, true);
    const at = 12 + 8 + jsonLength + 8 + (view.byteOffset ?? 0) + Math.floor(view.byteLength / 2);
    const broken = glb.slice();
    broken[at] ^= 0x5a;
    const bad = join(dir, 'broken.bp.glb');
    writeFileSync(bad, broken);
    const run = runCli(['verify', scene, bad]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(bad);
    expect(run.stderr).toContain('animation 1 "WaveB"');
    await expect(readCompressedGltfFile(bad)).rejects.toMatchObject({
      name: 'ParseError',
      code: 'BAD_VALUE',
      file: bad,
    });
  });

  it('info, sample and decompress read an animation of a compressed asset, chosen with --clip', async () => {
    const clips = await readCompressedGltfFile(sceneOut);
    const waveB = clips.find((c) => c.name === 'WaveB')!.clip;
    const info = runCli(['info', sceneOut, '--clip', 'WaveB', '--json']);
    expect(info.code).toBe(0);
    expect(JSON.parse(info.stdout)).toMatchObject({
      file: sceneOut,
      name: 'WaveB',
      boneCount: waveB.boneCount,
      sampleCount: waveB.sampleCount,
    });

    const sampled = runCli(['sample', sceneOut, '--clip', 'WaveB', '--time', '0.3', '--json']);
    expect(sampled.code).toBe(0);
    const pose = waveB.createSampler().sample(0.3, new Float32Array(waveB.boneCount * 10));
    const bones = (
      JSON.parse(sampled.stdout) as { bones: { rotation: number[]; translation: number[]; scale: number[] }[] }
    ).bones;
    expect(bones.flatMap((b) => [...b.rotation, ...b.translation, ...b.scale])).toEqual(Array.from(pose));

    const out = join(dir, 'dumps');
    const dumped = runCli(['decompress', sceneOut, '--clip', 'Both', '-o', out]);
    expect(dumped.code).toBe(0);
    const both = clips.find((c) => c.name === 'Both')!.clip;
    const dump = JSON.parse(readFileSync(join(out, 'scene.bp_Both.json'), 'utf8')) as {
      bones: string[];
      numSamples: number;
      rotations: number[];
    };
    expect(dump.bones).toHaveLength(both.boneCount);
    expect(dump.numSamples).toBe(both.sampleCount);
    expect(dump.rotations.slice(0, 4 * both.boneCount)).toEqual(
      Array.from(sampleKey(both.createSampler(), 0, new Float32Array(both.boneCount * 10))).filter(
        (_, i) => i % 10 < 4,
      ),
    );
  });

  it('sample on an asset refuses, naming the file: several animations and no --clip, an unknown --clip; info: none compressed is said so', () => {
    const several = runCli(['sample', sceneOut, '--time', '0']);
    expect(several.code).toBe(2);
    expect(several.stderr).toContain(sceneOut);
    expect(several.stderr).toContain(
      '4 compressed animations ("WalkA", "WaveB", "Both", "CameraFly"); name one with --clip',
    );
    const unknown = runCli(['sample', sceneOut, '--clip', 'Nope', '--time', '0']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no compressed animation named "Nope"');
    // An asset with no compressed animation (a source, or an output that kept every animation
    // as plain channels because compressing would not have made it smaller) is summarised as such.
    const plain = runCli(['info', scene]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain(`${scene}: no compressed animations`);
  });
});
