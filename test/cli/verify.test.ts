import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { NodeIO } from '@gltf-transform/core';
import { afterAll, describe, expect, it } from 'vitest';

import { clipToPoseDump, type PoseDump } from '../../src/readers/pose-dump.js';
import { readClips } from '../../src/readers/index.js';
import { ROOT, fixture, linesOf, makeTempDir, runCli } from './run-cli.js';
import { clipToDocument } from '../utils/gltf.js';

const BOW = fixture('dataset-1_bow_normal_001.bvh');
const temp = makeTempDir();
afterAll(() => temp.remove());

/** The fixture as a pose dump, changed by `edit`, written to the temp folder. */
async function poseDumpOf(name: string, edit: (dump: PoseDump) => void = () => {}): Promise<string> {
  const [clip] = await readClips(BOW, new Uint8Array(readFileSync(join(ROOT, BOW))));
  const dump = clipToPoseDump(clip);
  edit(dump);
  const path = join(temp.dir, name);
  writeFileSync(path, JSON.stringify(dump));
  return path;
}

/** Asserts the single-line failure format: `bonepress: <file>: <problem>`, no stack. */
function expectOneErrorLine(stderr: string, file: string): string {
  const lines = linesOf(stderr);
  expect(lines).toHaveLength(1);
  expect(lines[0].startsWith(`bonepress: ${file}: `)).toBe(true);
  expect(stderr).not.toMatch(/^\s+at /m);
  return lines[0];
}

describe('bonepress verify', () => {
  it('passes a fixture against itself (exit 0)', () => {
    const run = runCli(['verify', BOW, BOW]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/result\s+PASS/);
  });

  it('prints one JSON object with --json', () => {
    const run = runCli(['verify', BOW, BOW, '--json', '--error', '0.5mm']);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(report).toMatchObject({
      maxError: 0,
      p99Error: 0,
      meanError: 0,
      worstSample: 0,
      unit: 'cm',
      threshold: 0.05,
      pass: true,
    });
    expect(typeof report.worstBone).toBe('string');
  });

  it('passes an unchanged pose dump (exit 0)', async () => {
    const dump = await poseDumpOf('same.json');
    expect(runCli(['verify', BOW, dump]).code).toBe(0);
  });

  it('fails a perturbed pose dump (exit 1) and names the worst bone and sample', async () => {
    const dump = await poseDumpOf('moved.json', (d) => {
      d.translations[(5 * d.bones.length + 0) * 3] += 1; // root moved 1 cm at sample 5
    });
    const run = runCli(['verify', BOW, dump, '--json']);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as {
      maxError: number;
      worstSample: number;
      pass: boolean;
      threshold: number;
    };
    expect(report.pass).toBe(false);
    expect(report.worstSample).toBe(5);
    expect(report.maxError).toBeCloseTo(1, 3);
    // The same difference is within a 2 cm budget.
    expect(runCli(['verify', BOW, dump, '--error', '2cm']).code).toBe(0);
  });

  it('rejects a missing file with one line (exit 2)', () => {
    const missing = join(temp.dir, 'missing.bvh');
    const run = runCli(['verify', BOW, missing]);
    expect(run.code).toBe(2);
    expect(expectOneErrorLine(run.stderr, missing)).toContain('no such file');
    expect(run.stdout).toBe('');
  });

  it('rejects a malformed BVH with one line (exit 2)', () => {
    const bad = join(temp.dir, 'truncated.bvh');
    writeFileSync(bad, readFileSync(join(ROOT, BOW), 'utf8').split('\n').slice(0, 20).join('\n'));
    const run = runCli(['verify', bad, BOW]);
    expect(run.code).toBe(2);
    expectOneErrorLine(run.stderr, bad);
  });

  it('rejects an unknown --shell-bone (exit 2)', () => {
    const run = runCli(['verify', BOW, BOW, '--shell-bone', 'NoSuchBone=1m']);
    expect(run.code).toBe(2);
    expect(expectOneErrorLine(run.stderr, BOW)).toContain('NoSuchBone');
  });

  it('accepts a known --shell-bone with units', () => {
    const run = runCli(['verify', BOW, BOW, '--shell-bone', 'Hips=1m', '--shell-bone', 'Spine=30mm', '--shell', '5cm']);
    expect(run.code).toBe(0);
  });

  it('rejects a malformed length (exit 2)', () => {
    const run = runCli(['verify', BOW, BOW, '--error', '0.01parsecs']);
    expect(run.code).toBe(2);
    expect(linesOf(run.stderr)[0]).toMatch(/^bonepress: .*--error/);
    expect(run.stderr).not.toMatch(/^\s+at /m);
  });

  it('rejects bones whose names differ at the same position, naming the bone (exit 2)', async () => {
    const dump = await poseDumpOf('renamed.json', (d) => {
      d.bones[3] = 'NotTheSameBone';
    });
    const run = runCli(['verify', BOW, dump]);
    expect(run.code).toBe(2);
    const line = expectOneErrorLine(run.stderr, dump);
    expect(line).toContain('bone 3');
    expect(line).toContain('NotTheSameBone');
  });

  it('rejects clips with different sample counts (exit 2)', () => {
    const run = runCli(['verify', BOW, fixture('dataset-1_dash_normal_001.bvh')]);
    expect(run.code).toBe(2);
    expectOneErrorLine(run.stderr, fixture('dataset-1_dash_normal_001.bvh'));
  });

  it('prints the stack with --debug', () => {
    const missing = join(temp.dir, 'missing.bvh');
    const run = runCli(['--debug', 'verify', BOW, missing]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^\s+at /m);
  });
});

describe('bonepress verify --clip', () => {
  /** A GLB with the bow fixture as two animations, "take_a" and "take_b". */
  async function twoTakeGlb(): Promise<string> {
    const [clip] = await readClips(BOW, new Uint8Array(readFileSync(join(ROOT, BOW))));
    const { doc } = clipToDocument(clip, ['take_a', 'take_b']);
    const path = join(temp.dir, 'takes.glb');
    writeFileSync(path, await new NodeIO().writeBinary(doc));
    return path;
  }

  it('picks one animation of a multi-clip file by --clip or by the name the .bpk stores, and says which names exist otherwise', async () => {
    const glb = await twoTakeGlb();
    const out = join(temp.dir, 'takes-out');
    expect(runCli(['compress', glb, '-o', out, '--jobs', '1']).code).toBe(0);
    const bpk = join(out, 'takes_take_b.bpk');
    const picked = runCli(['verify', glb, bpk, '--clip', 'take_b', '--json']);
    expect(picked.code).toBe(0);
    expect(JSON.parse(picked.stdout).maxError).toBeLessThanOrEqual(0.01);

    // The .bpk stores its clip's name: no --clip needed.
    const byStoredName = runCli(['verify', glb, bpk, '--json']);
    expect(byStoredName.code, byStoredName.stderr).toBe(0);
    expect(JSON.parse(byStoredName.stdout)).toMatchObject({
      pass: true,
      sampleCount: JSON.parse(picked.stdout).sampleCount,
    });

    // A .bpk without names cannot say which clip it holds.
    const stripped = join(temp.dir, 'takes-stripped');
    expect(runCli(['compress', glb, '-o', stripped, '--jobs', '1', '--strip-names']).code).toBe(0);
    const unnamed = runCli(['verify', glb, join(stripped, 'takes_take_b.bpk')]);
    expect(unnamed.code).toBe(2);
    expect(expectOneErrorLine(unnamed.stderr, glb)).toContain(
      'holds 2 clips ("take_a", "take_b"); name one with --clip',
    );

    const wrong = runCli(['verify', glb, bpk, '--clip', 'take_c']);
    expect(wrong.code).toBe(2);
    expect(expectOneErrorLine(wrong.stderr, glb)).toContain('holds no clip named "take_c"');
  });
});
