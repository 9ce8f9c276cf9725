/**
 * `compress --additive [<frame>]` and `--additive-base <file>[#animation][@time]` through
 * the built CLI: the written clip is additive, `info` and `verify` say so (text and
 * --json), `verify` measures it over the base it was compressed for, and bad input
 * (a frame the clip lacks, another skeleton, a missing animation, a library cache) is
 * refused with one error line. With glTF output (`-o x.bp.glb`) the animations become
 * additive over a base animation of the asset, `info` and `verify` name them, and the asset
 * validates. `info` names morph-weight bones as weight tracks.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { clipToPoseDump } from '../../src/readers/pose-dump.js';
import { readClips } from '../../src/readers/index.js';
import { makeRigs } from '../utils/gltf-rigs.js';
import { ROOT, fixture, linesOf, makeTempDir, runCli } from './run-cli.js';

const validator = createRequire(import.meta.url)('gltf-validator') as {
  validateBytes(data: Uint8Array): Promise<{ issues: { messages: { message: string; severity: number }[] } }>;
};

const BOW = fixture('dataset-1_bow_normal_001.bvh');
const KICK = fixture('dataset-1_kick_normal_001.bvh');
const temp = makeTempDir();
afterAll(() => temp.remove());

/** The bow fixture as a pose dump with its bones renamed by `rename`, written to the temp folder. */
async function renamedDump(name: string, rename: (bone: string, index: number) => string): Promise<string> {
  const [clip] = await readClips(BOW, new Uint8Array(readFileSync(join(ROOT, BOW))));
  const dump = clipToPoseDump(clip);
  dump.bones = dump.bones.map(rename);
  const path = join(temp.dir, name);
  writeFileSync(path, JSON.stringify(dump));
  return path;
}

describe('compress --additive', () => {
  const additive = join(temp.dir, 'bow-additive.bpk');

  it('writes an additive clip within the threshold over the base; info and verify name it additive', () => {
    const run = runCli(['compress', BOW, '--additive', '2', '--additive-base', KICK, '-o', additive, '--json']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const [clip] = JSON.parse(run.stdout).clips;
    expect(clip.additive).toEqual({ mode: 'local', reference: { kind: 'frame', frame: 2, time: 2 / 30 } });
    expect(clip.maxError).toBeLessThanOrEqual(0.01);

    const info = runCli(['info', additive]);
    expect(info.code).toBe(0);
    expect(info.stdout).toMatch(/poses\s+additive \(deltas to apply to a base pose\), against frame 2 of the source/);
    expect(info.stdout).toMatch(/additive\s+16/);
    const infoJson = JSON.parse(runCli(['info', additive, '--json']).stdout);
    expect(infoJson.additive).toEqual(clip.additive);
    expect(infoJson.weightTracks).toBe(0);

    const verify = runCli(['verify', BOW, additive, '--additive-base', KICK, '--json']);
    expect(verify.code).toBe(0);
    const result = JSON.parse(verify.stdout);
    expect(result.additive).toBe(`applied to ${KICK} (played alongside)`);
    expect(result.pass).toBe(true);
    expect(result.maxError).toBeCloseTo(clip.maxError, 12);
    const table = runCli(['compress', BOW, '--additive', '-o', join(temp.dir, 'table.bpk')]);
    expect(table.stdout).toMatch(/^table \(additive\)\s+22/m);
    const text = runCli(['verify', BOW, additive, '--additive-base', KICK]);
    expect(text.stdout).toMatch(new RegExp(`additive\\s+applied to ${KICK}`));
  });

  it('with only --additive-base <file>@<time>: additive against that pose; verify needs the pose to measure it', () => {
    const out = join(temp.dir, 'bow-pose.bpk');
    const run = runCli(['compress', BOW, '--additive-base', `${KICK}@0.5`, '-o', out, '--json']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).clips[0].additive).toEqual({
      mode: 'local',
      reference: { kind: 'pose', time: 0.5 },
    });
    const ok = runCli(['verify', BOW, out, '--additive-base', `${KICK}@0.5`]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/result\s+PASS/);
    const missing = runCli(['verify', BOW, out]);
    expect(missing.code).toBe(2);
    expect(linesOf(missing.stderr)).toEqual([
      `bonepress: ${out}: clip "dataset-1_bow_normal_001" is additive against a pose of another clip (at 0.5 s): name that clip as its base (--additive-base <file>[#animation]@<time>)`,
    ]);
  });

  it('refuses a frame the clip lacks, a base of another skeleton, a missing animation, a bad time and a library cache', async () => {
    const out = join(temp.dir, 'bad');
    const frame = runCli(['compress', BOW, '--additive', '500', '-o', out]);
    expect(frame.code).toBe(2);
    expect(linesOf(frame.stderr)).toEqual([
      `bonepress: ${BOW}: additive reference frame 500: clip "dataset-1_bow_normal_001" has frames 0..137`,
    ]);
    const other = await renamedDump('other.json', (bone, i) => (i === 3 ? 'Tail' : bone));
    const skeleton = runCli(['compress', BOW, '--additive-base', other, '-o', out]);
    expect(skeleton.code).toBe(2);
    expect(skeleton.stderr).toMatch(/additive reference "other": bone 3 is "Tail" .*not the same skeleton/);
    const animation = runCli(['compress', BOW, '--additive-base', `${KICK}#run`, '-o', out]);
    expect(animation.code).toBe(2);
    expect(animation.stderr).toContain(`${KICK}: holds no clip named "run"`);
    const time = runCli(['compress', BOW, '--additive-base', `${KICK}@-1`, '-o', out]);
    expect(time.code).toBe(2);
    expect(time.stderr).toMatch(/expected <file>\[#animation\]\[@seconds ≥ 0\], got time "-1"/);
    const notFrame = runCli(['compress', BOW, '--additive', 'x', '-o', out]);
    expect(notFrame.code).toBe(2);
    expect(notFrame.stderr).toMatch(/expected a frame index/);
    const cache = runCli(['compress', BOW, '--additive', '-o', temp.dir, '--cache', join(temp.dir, 'cache')]);
    expect(cache.code).toBe(2);
    expect(cache.stderr).toMatch(
      /--additive and --additive-base write clips, not a library; they cannot go with --cache/,
    );
  });

  it('info names morph-weight bones (<node>.weights[<t>]) as weight tracks', async () => {
    const dump = await renamedDump('face.json', (bone, i) => (i >= 20 ? `Face.weights[${i - 20}]` : bone));
    const out = join(temp.dir, 'face.bpk');
    expect(runCli(['compress', dump, '-o', out, '-q']).code).toBe(0);
    const info = runCli(['info', out]);
    expect(info.stdout).toMatch(/poses\s+absolute; 2 of 22 bones are morph-target weight tracks/);
    expect(info.stdout).toMatch(/20 Face\.weights\[0\] \(weight track\)/);
    expect(JSON.parse(runCli(['info', out, '--json']).stdout).weightTracks).toBe(2);
  });
});

describe('compress --additive with glTF output', () => {
  let walk: string;
  beforeAll(async () => {
    // Two animations of one skeleton: Walk, Wave.
    walk = join(temp.dir, 'blender.glb');
    writeFileSync(walk, (await makeRigs()).find((r) => r.name === 'blender')!.glb);
  });

  it('every animation but the base becomes additive over it; the asset validates, and info and verify name the additive animation', async () => {
    const out = join(temp.dir, 'walk.bp.glb');
    const run = runCli(['compress', walk, '--additive', '2', '--additive-base', `${walk}#Wave`, '-o', out, '--json']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as {
      animations: { animation: string; stats: { additive?: unknown; maxError: number; threshold: number } }[];
    };
    expect(report.animations.map((a) => [a.animation, a.stats.additive])).toEqual([
      ['Walk', { mode: 'local', reference: { kind: 'frame', frame: 2, time: 2 / 24 } }],
      ['Wave', undefined],
    ]);
    for (const a of report.animations) expect(a.stats.maxError).toBeLessThanOrEqual(a.stats.threshold);
    const errors = (await validator.validateBytes(new Uint8Array(readFileSync(out)))).issues.messages.filter(
      (m) => m.severity === 0,
    );
    expect(errors).toEqual([]);
    const table = runCli(['compress', walk, '--additive', '-o', join(temp.dir, 'table.bp.glb')]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^Walk \(additive\)\s+\d/m);
    expect(table.stdout).toMatch(/^Wave \(additive\)\s+\d/m);

    const info = runCli(['info', out]);
    expect(info.stdout).toMatch(/^0 "Walk" \(additive\)\s+\d/m);
    expect(info.stdout).toMatch(/^1 "Wave"\s+\d/m);
    expect(runCli(['info', out, '--clip', 'Walk']).stdout).toMatch(
      /poses\s+additive \(deltas to apply to a base pose\), against frame 2 of the source/,
    );

    const verify = runCli(['verify', walk, out, '--additive-base', `${walk}#Wave`, '--json']);
    expect(verify.code).toBe(0);
    const result = JSON.parse(verify.stdout) as { clips: { clip: string; additive?: string; maxError: number }[] };
    expect(result.clips.map((c) => [c.clip, c.additive])).toEqual([
      ['Walk', `applied to ${walk}#Wave (played alongside)`],
      ['Wave', undefined],
    ]);
    // verify measures what compress measured: the same figure.
    expect(result.clips[0].maxError).toBeCloseTo(report.animations[0].stats.maxError, 12);
    expect(runCli(['verify', walk, out, '--additive-base', `${walk}#Wave`]).stdout).toMatch(/^"Walk" \(additive\)\s/m);
  });

  it('refuses a base outside the asset, without #animation or with a batch, a frame the animation lacks, and a fallback', () => {
    const out = join(temp.dir, 'bad.bp.glb');
    const other = runCli(['compress', walk, '--additive-base', `${KICK}#Wave`, '-o', out]);
    expect(other.code).toBe(2);
    expect(linesOf(other.stderr)).toEqual([
      `bonepress: ${walk}: --additive-base ${KICK}#Wave: with glTF output the base is an animation of the asset itself: ${walk}#<animation>[@time]`,
    ]);
    const unnamed = runCli(['compress', walk, '--additive-base', walk, '-o', out]);
    expect(unnamed.code).toBe(2);
    expect(unnamed.stderr).toContain('with glTF output the base is an animation of the asset itself');
    const batch = runCli(['compress', walk, '--additive-base', `${walk}#Wave`, '--format', 'glb', '-o', temp.dir]);
    expect(batch.code).toBe(2);
    expect(batch.stderr).toMatch(/--additive-base with glTF output names an animation of the one input asset/);
    const frame = runCli(['compress', walk, '--additive', '500', '-o', out]);
    expect(frame.code).toBe(2);
    expect(linesOf(frame.stderr)).toEqual([
      `bonepress: ${walk}: additive reference frame 500: clip "Walk" has frames 0..48`,
    ]);
    const fallback = runCli(['compress', walk, '--additive', '--fallback', '-o', out]);
    expect(fallback.code).toBe(2);
    expect(fallback.stderr).toMatch(/additive animations keep no fallback channels/);
    const missing = runCli(['compress', walk, '--additive-base', `${walk}#Run`, '-o', out]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/additive base "Run": the document has no such animation \(0 "Walk", 1 "Wave"\)/);
  });
});
