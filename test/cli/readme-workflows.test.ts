/**
 * The README's "Typical workflows" run as written: every `sh` block of that section, in
 * order, in one folder holding `hero.glb` (the Khronos CesiumMan when ../shared has it, else
 * a generated skinned rig) and a `characters/` tree of the BVH fixtures, with `bonepress`
 * on the PATH as the built CLI.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { makeRigs } from '../utils/gltf-rigs.js';
import { sharedData } from '../utils/shared-data.js';
import { CLI, ROOT, fixture, makeTempDir } from './run-cli.js';

const temp = makeTempDir('bonepress-readme-');
afterAll(() => temp.remove());

/** The `sh` blocks of the README section `## <title>`, in order. */
function shellBlocks(title: string): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf(`## ${title}\n`);
  expect(start).toBeGreaterThanOrEqual(0);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
}

/** A folder with what the workflows read, and a `bin/bonepress` that runs the built CLI. */
async function workspace(): Promise<{ dir: string; bin: string }> {
  const dir = join(temp.dir, 'work');
  const bin = join(temp.dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const shim = join(bin, 'bonepress');
  writeFileSync(shim, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`);
  chmodSync(shim, 0o755);
  const khronos = sharedData('khronos-samples');
  const cesium = khronos && join(khronos, 'CesiumMan', 'CesiumMan.glb');
  mkdirSync(dir, { recursive: true });
  if (cesium && existsSync(cesium)) copyFileSync(cesium, join(dir, 'hero.glb'));
  else writeFileSync(join(dir, 'hero.glb'), (await makeRigs())[0].glb);
  const tree: Record<string, string> = {
    'hero/walk.bvh': 'dataset-1_walk_happy_002.bvh',
    'hero/run.bvh': 'dataset-1_run_active_001.bvh',
    'villain/walk.bvh': 'dataset-1_walk-back_sad_001.bvh',
    'villain/bow.bvh': 'dataset-1_bow_normal_001.bvh',
  };
  for (const [path, source] of Object.entries(tree)) {
    mkdirSync(join(dir, 'characters', path, '..'), { recursive: true });
    copyFileSync(join(ROOT, fixture(source)), join(dir, 'characters', path));
  }
  return { dir, bin };
}

describe('README "Typical workflows"', () => {
  it('every block runs as written and exits 0', { timeout: 300_000 }, async () => {
    const blocks = shellBlocks('Typical workflows');
    expect(blocks).toHaveLength(4);
    const { dir, bin } = await workspace();
    const outputs: string[] = [];
    for (const block of blocks) {
      const run = spawnSync('sh', ['-e', '-c', block], {
        cwd: dir,
        encoding: 'utf8',
        timeout: 240_000,
        killSignal: 'SIGKILL',
        env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` },
      });
      expect(run.status, `${block}\n${run.stderr}`).toBe(0);
      outputs.push(run.stdout);
    }
    // What each promises: the asset compressed and summarised, the tree kept, the rerun
    // taking everything from the cache, the shards adding up to the whole library.
    expect(existsSync(join(dir, 'web', 'hero.bp.glb'))).toBe(true);
    expect(outputs[0]).toContain('ratio');
    for (const clip of ['hero/walk.bpk', 'hero/run.bpk', 'villain/walk.bpk', 'villain/bow.bpk']) {
      expect(existsSync(join(dir, 'build', 'clips', clip)), clip).toBe(true);
      expect(existsSync(join(dir, 'dist', 'clips', clip)), clip).toBe(true);
    }
    expect(outputs[1]).toMatch(/4 inputs: 0 compressed, 4 from the cache/);
    expect(outputs[2]).toContain('PASS');
    const merged = JSON.parse(readFileSync(join(dir, 'dist', 'manifest.json'), 'utf8')) as {
      total: { inputs: number; outputs: number };
    };
    expect(merged.total).toMatchObject({ inputs: 4, outputs: 4 });
  });
});
