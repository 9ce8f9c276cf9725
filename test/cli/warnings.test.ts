/**
 * What the glTF reader skips (a channel on a node outside the skeleton, a morph-weights
 * channel) reaches the user: as `bonepress: <file>: warning: <message>` lines on stderr from
 * the built CLI, in `compress --json`, and in each `compressFiles` result whatever the
 * number of jobs. Runs dist/ (`npm test` builds first).
 */
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { Document, NodeIO } from '@gltf-transform/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { ReadOptions } from '../../src/readers/options.js';
import { addChain, addChannel } from './chain-rig.js';
import { FIXTURES, ROOT, linesOf, makeTempDir, runCli } from './run-cli.js';

type NodeModule = typeof import('../../src/node/index.js');
let node: NodeModule;

const temp = makeTempDir('bonepress-warnings-');
afterAll(() => temp.remove());

const LONG = { timeout: 180_000 };
const OUTSIDE = /animation "wave": 1 channel animates nodes outside the skeleton \(Prop\)/;
const MORPH = /morph-target weight channel \(Prop\) not supported/;

/**
 * A GLB with a skinned three-bone chain whose animation turns every joint, plus a
 * translation channel and a morph-weights channel on "Prop", a node outside the skin.
 */
async function riggedGlb(): Promise<Uint8Array> {
  const doc = new Document();
  const buffer = doc.createBuffer();
  const scene = doc.createScene('scene');
  const joints = addChain(doc, scene);
  const prop = doc.createNode('Prop');
  scene.addChild(prop);

  const samples = 31;
  const times = doc
    .createAccessor()
    .setType('SCALAR')
    .setBuffer(buffer)
    .setArray(Float32Array.from({ length: samples }, (_, s) => s / 30));
  const anim = doc.createAnimation('wave');
  const channel = (
    target: typeof prop,
    path: 'rotation' | 'translation' | 'weights',
    type: 'VEC4' | 'VEC3' | 'SCALAR',
    values: number[],
  ): void => {
    addChannel(doc, buffer, anim, times, target, path, type, values);
  };
  joints.forEach((joint, j) => {
    const values: number[] = [];
    for (let s = 0; s < samples; s++) {
      const half = ((0.4 + 0.2 * j) * Math.sin((2 * Math.PI * s) / (samples - 1))) / 2;
      values.push(0, 0, Math.sin(half), Math.cos(half));
    }
    channel(joint, 'rotation', 'VEC4', values);
  });
  channel(
    prop,
    'translation',
    'VEC3',
    Array.from({ length: samples * 3 }, (_, k) => (k % 3 === 0 ? k / 90 : 0)),
  );
  channel(
    prop,
    'weights',
    'SCALAR',
    Array.from({ length: samples }, (_, s) => s / (samples - 1)),
  );
  return new NodeIO().writeBinary(doc);
}

let glbA: string;
let glbB: string;
beforeAll(async () => {
  node = (await import(pathToFileURL(join(ROOT, 'dist', 'node', 'index.js')).href)) as NodeModule;
  const bytes = await riggedGlb();
  glbA = join(temp.dir, 'rig-a.glb');
  glbB = join(temp.dir, 'rig-b.glb');
  writeFileSync(glbA, bytes);
  writeFileSync(glbB, bytes);
});

/** The warning lines of `stderr` about `file`, message only. */
function warningsIn(stderr: string, file: string): string[] {
  const prefix = `bonepress: ${file}: warning: `;
  return linesOf(stderr)
    .filter((line) => line.startsWith(prefix))
    .map((line) => line.slice(prefix.length));
}

describe('reader warnings', () => {
  it('compress prints skipped glTF channels on stderr, writes the .bpk and exits 0', LONG, () => {
    const out = join(temp.dir, 'out-text');
    const run = runCli(['compress', glbA, '-o', out, '--jobs', '1']);
    expect(run.code).toBe(0);
    expect(existsSync(join(out, 'rig-a.bpk'))).toBe(true);
    const messages = warningsIn(run.stderr, glbA);
    expect(messages.some((m) => OUTSIDE.test(m))).toBe(true);
    expect(messages.some((m) => MORPH.test(m))).toBe(true);
    // Nothing else on stderr: every line is one of the file's warnings.
    expect(linesOf(run.stderr)).toHaveLength(messages.length);
  });

  it('compress --json carries the warnings in each clip entry, not on stderr', LONG, () => {
    const out = join(temp.dir, 'out-json');
    const run = runCli([
      'compress',
      glbA,
      join(FIXTURES, 'dataset-1_dash_normal_001.bvh'),
      '-o',
      out,
      '--json',
      '--jobs',
      '2',
    ]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const report = JSON.parse(run.stdout) as { clips: { file: string; warnings: string[] }[]; failures: unknown[] };
    expect(report.failures).toEqual([]);
    expect(report.clips).toHaveLength(2);
    const [gltf, bvh] = report.clips;
    expect(gltf.file).toBe(glbA);
    expect(gltf.warnings.some((m) => OUTSIDE.test(m))).toBe(true);
    expect(gltf.warnings.some((m) => MORPH.test(m))).toBe(true);
    expect(bvh.warnings).toEqual([]);
    expect(readdirSync(out).sort()).toEqual(['dataset-1_dash_normal_001.bpk', 'rig-a.bpk']);

    // The same warnings as the text mode prints.
    const text = runCli(['compress', glbA, '-o', join(temp.dir, 'out-text-2'), '--jobs', '1']);
    expect(warningsIn(text.stderr, glbA)).toEqual(gltf.warnings);
  });

  it(
    'compress warns when the loose clips take more bytes than the source animations, and writes them',
    LONG,
    async () => {
      // Three CUBICSPLINE keys of a bounce: linear playback needs many samples between them.
      const doc = new Document();
      const buffer = doc.createBuffer();
      const ball = doc.createNode('Ball');
      doc.createScene('scene').addChild(ball);
      const accessor = (type: 'SCALAR' | 'VEC3', values: number[]) =>
        doc.createAccessor().setType(type).setBuffer(buffer).setArray(Float32Array.from(values));
      // In-tangent, value, out-tangent per key.
      const bounce = [0, 0, 0, 0, 0, 0, 0, 3, 0, 0, -3, 0, 1, 0, 0, 0, 3, 0, 0, -3, 0, 2, 0, 0, 0, 0, 0];
      const sampler = doc
        .createAnimationSampler()
        .setInput(accessor('SCALAR', [0, 1, 2]))
        .setOutput(accessor('VEC3', bounce))
        .setInterpolation('CUBICSPLINE');
      doc
        .createAnimation('bounce')
        .addSampler(sampler)
        .addChannel(doc.createAnimationChannel().setTargetNode(ball).setTargetPath('translation').setSampler(sampler));
      const file = join(temp.dir, 'ball.glb');
      writeFileSync(file, await new NodeIO().writeBinary(doc));
      const out = join(temp.dir, 'out-ball');
      const run = runCli(['compress', file, '-o', out, '--jobs', '1']);
      expect(run.code).toBe(0);
      const [written] = readdirSync(out);
      const loose = statSync(join(out, written)).size;
      const messages = warningsIn(run.stderr, file);
      expect(messages).toHaveLength(1);
      const said =
        /^the compressed clips take (\d+) bytes, more than the (\d+) bytes of the source's animations .*bp\.glb/.exec(
          messages[0],
        );
      expect(said).not.toBeNull();
      expect(Number(said![1])).toBe(loose);
      expect(loose).toBeGreaterThan(Number(said![2]));
    },
  );

  it('verify prints the source warnings too and still exits 0', LONG, () => {
    const out = join(temp.dir, 'out-verify');
    expect(runCli(['compress', glbA, '-o', out, '--json']).code).toBe(0);
    const run = runCli(['verify', glbA, join(out, 'rig-a.bpk')]);
    expect(run.code).toBe(0);
    const messages = warningsIn(run.stderr, glbA);
    expect(messages.some((m) => OUTSIDE.test(m))).toBe(true);
    expect(messages.some((m) => MORPH.test(m))).toBe(true);
  });

  it("compressFiles returns each file's warnings in input order, equal for 1 and 2 jobs", LONG, async () => {
    const bvh = join(FIXTURES, 'dataset-1_dash_normal_001.bvh');
    const inputs = [glbA, bvh, glbB];
    const one = await node.compressFiles(inputs, {}, { outDir: join(temp.dir, 'jobs-1'), jobs: 1 });
    // A callback cannot cross into a worker: compressFiles drops it instead of failing to clone.
    const read: ReadOptions = {
      onWarning: () => {
        throw new Error('not called');
      },
    };
    const two = await node.compressFiles(inputs, { read }, { outDir: join(temp.dir, 'jobs-2'), jobs: 2 });
    for (const result of [...one, ...two]) expect(result.ok).toBe(true);
    expect(one.map((r) => r.file)).toEqual(inputs);
    expect(two.map((r) => r.warnings)).toEqual(one.map((r) => r.warnings));
    const [a, b, c] = one.map((r) => r.warnings);
    expect(a.some((m) => OUTSIDE.test(m))).toBe(true);
    expect(a.some((m) => MORPH.test(m))).toBe(true);
    expect(b).toEqual([]);
    expect(c).toEqual(a);
    // Plain data: survives JSON as it is.
    expect(JSON.parse(JSON.stringify(two))).toEqual(two);
  });
});
