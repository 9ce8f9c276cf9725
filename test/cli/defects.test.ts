/**
 * Command-line and output-planning defects once found, one
 * test each, through the built CLI (`npm test` builds first): exit code, stdout and stderr.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

import { Document, NodeIO } from '@gltf-transform/core';
import { afterAll, describe, expect, it } from 'vitest';

import { addChain, addChannel, swingRotations } from './chain-rig.js';
import { CLI, ROOT, fixture, linesOf, makeTempDir, runCli } from './run-cli.js';

const WALK_BACK = fixture('dataset-1_walk-back_sad_001.bvh'); // the longest fixture: a pose dump of 1.7 MB
const DASH = fixture('dataset-1_dash_normal_001.bvh');
const RUN = fixture('dataset-1_run_active_001.bvh');
const temp = makeTempDir('bonepress-defects-');
afterAll(() => temp.remove());

let count = 0;
/** A fresh path in the temp folder (not created). */
function fresh(name = 'out'): string {
  return join(temp.dir, `${name}-${++count}`);
}

/** Runs the CLI with binary stdout. */
function runCliBytes(args: readonly string[]): { code: number | null; stdout: Buffer; stderr: string } {
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, timeout: 60_000, killSignal: 'SIGKILL' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr.toString('utf8') };
}

/** Compresses `input` into a fresh folder and returns the path of its single `.bpk`. */
function compressOne(input: string, ...extra: string[]): string {
  const out = fresh('bpk');
  const run = runCli(['compress', input, '-o', out, '--jobs', '1', ...extra]);
  expect(run.code, run.stderr).toBe(0);
  const [name] = readdirSync(out);
  return join(out, name);
}

interface Take {
  name: string;
  /** Adds a morph-weights channel on a prop node: a reader warning about this animation. */
  morph?: boolean;
  /** Only the prop moves: an animation that is skipped. */
  propOnly?: boolean;
}

/**
 * Writes a GLB with a three-bone skinned chain (metres) and one animation per take, keyed
 * at 30 Hz for one second; with no takes, a file without animation. Returns its path.
 */
async function writeGlb(path: string, takes: readonly Take[]): Promise<string> {
  mkdirSync(dirname(path), { recursive: true });
  const doc = new Document();
  const buffer = doc.createBuffer();
  const scene = doc.createScene('scene');
  const joints = addChain(doc, scene);
  const prop = doc.createNode('Prop').setMesh(doc.createMesh('prop'));
  scene.addChild(prop);
  const samples = 31;
  const times = doc
    .createAccessor()
    .setType('SCALAR')
    .setBuffer(buffer)
    .setArray(Float32Array.from({ length: samples }, (_, s) => s / 30));
  takes.forEach((take, t) => {
    const anim = doc.createAnimation(take.name);
    const channel = (
      target: typeof prop,
      pathName: 'rotation' | 'weights' | 'translation',
      type: 'VEC4' | 'SCALAR' | 'VEC3',
      values: number[],
    ): void => {
      addChannel(doc, buffer, anim, times, target, pathName, type, values);
    };
    if (take.propOnly) {
      channel(
        prop,
        'translation',
        'VEC3',
        Array.from({ length: samples * 3 }, (_, k) => k / 90),
      );
      return;
    }
    joints.forEach((joint, j) => channel(joint, 'rotation', 'VEC4', swingRotations(j, t, samples)));
    if (take.morph)
      channel(
        prop,
        'weights',
        'SCALAR',
        Array.from({ length: samples }, (_, s) => s / (samples - 1)),
      );
  });
  writeFileSync(path, await new NodeIO().writeBinary(doc));
  return path;
}

interface CompressJson {
  clips: { file: string; output: string; name: string; warnings: string[] }[];
  failures: { file: string; code: string; message: string }[];
  skipped: { file: string; message: string }[];
  warnings: { file: string; message: string }[];
  total: { clips: number; failures: number; skipped: number };
}

/** No length in `text` is printed with an exponent (`9.99e-5m`). */
function expectNoExponent(text: string): void {
  expect(text).not.toMatch(/\d(\.\d+)?e[-+]?\d+(mm|cm|m|in|ft)\b/);
}

describe('command-line defects', () => {
  it('decompress -o - into a reader that stops early ends quietly with exit 0 (no EPIPE trace)', async () => {
    const bpk = compressOne(WALK_BACK);
    const child = spawn(process.execPath, [CLI, 'decompress', bpk, '-o', '-'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    let received = 0;
    // Like `| head -c 200`: read the first chunk, then close the pipe.
    child.stdout.once('data', (chunk: Buffer) => {
      received = chunk.length;
      child.stdout.destroy();
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(received).toBeGreaterThan(0);
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  describe('-o means the same in every command: a folder, a file with the output extension, or - for stdout', () => {
    it('compress -o - writes the .bpk to stdout and creates no folder named "-"', () => {
      const run = runCliBytes(['compress', DASH, '-o', '-', '--jobs', '1']);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const bpk = compressOne(DASH);
      expect(run.stdout.equals(readFileSync(bpk))).toBe(true);
      expect(existsSync(join(ROOT, '-'))).toBe(false);
    });

    it('compress -o dir/file.bpk writes that file (creating dir), not a folder', () => {
      const target = join(fresh('o5'), 'file.bpk');
      const run = runCli(['compress', DASH, '-o', target, '--jobs', '1']);
      expect(run.code, run.stderr).toBe(0);
      expect(statSync(target).isFile()).toBe(true);
      expect(linesOf(run.stdout).some((l) => l.startsWith('file '))).toBe(true);
    });

    it('compress -o file.bpk with several clips fails before writing anything (exit 2)', () => {
      const target = join(fresh('two'), 'both.bpk');
      const run = runCli(['compress', DASH, RUN, '-o', target]);
      expect(run.code).toBe(2);
      expect(linesOf(run.stderr)).toEqual([
        `bonepress: -o ${target} takes one clip, but there are 2 inputs; give a folder`,
      ]);
      expect(existsSync(target)).toBe(false);
    });

    it('decompress -o newdir/x.json creates the folder; -o out/ writes out/<clip>.json', () => {
      const bpk = compressOne(DASH);
      const file = join(fresh('newdir'), 'x.json');
      const toFile = runCli(['decompress', bpk, '-o', file]);
      expect(toFile.code, toFile.stderr).toBe(0);
      expect(JSON.parse(readFileSync(file, 'utf8')).numSamples).toBe(20);
      const folder = fresh('folder') + '/';
      const toFolder = runCli(['decompress', bpk, '-o', folder]);
      expect(toFolder.code, toFolder.stderr).toBe(0);
      expect(readFileSync(join(folder, 'dataset-1_dash_normal_001.json'), 'utf8')).toBe(readFileSync(file, 'utf8'));
      const toStdout = runCli(['decompress', bpk, '-o', '-']);
      expect(toStdout.stdout).toBe(readFileSync(file, 'utf8'));
    });
  });

  describe('verify takes --rate, --unit and the clip name from the .bpk', () => {
    it('--rate: a glTF keyed at 30 Hz and compressed at 60 Hz verifies, with --rate 60 as without (the .bpk is compared on its own grid)', async () => {
      const glb = await writeGlb(join(fresh('rate'), 'wave.glb'), [{ name: 'wave' }]);
      const bpk = compressOne(glb, '--rate', '60');
      for (const extra of [['--rate', '60'], []]) {
        const run = runCli(['verify', glb, bpk, ...extra, '--json']);
        expect(run.code, run.stderr).toBe(0);
        expect(JSON.parse(run.stdout)).toMatchObject({ pass: true, sampleCount: 61 });
      }
      const refused = runCli(['verify', glb, bpk, '--rate', '0']);
      expect(refused.code).toBe(2);
    });

    it('--unit: a metre file compressed with --unit cm verifies with --unit cm; without it a note says so', async () => {
      const glb = await writeGlb(join(fresh('unit'), 'wave.glb'), [{ name: 'wave' }]);
      const bpk = compressOne(glb, '--unit', 'cm');
      const without = runCli(['verify', glb, bpk]);
      expect(without.code).toBe(1);
      expect(without.stderr).toContain('if it was compressed with --unit cm, verify with --unit cm');
      const withUnit = runCli(['verify', glb, bpk, '--unit', 'cm']);
      expect(withUnit.code, withUnit.stderr).toBe(0);
      expect(withUnit.stderr).toBe('');
    });

    it('a multi-clip source needs no --clip: the .bpk names its clip', async () => {
      const glb = await writeGlb(join(fresh('takes'), 'takes.glb'), [{ name: 'walk' }, { name: 'idle' }]);
      const out = fresh('takes-out');
      expect(runCli(['compress', glb, '-o', out, '--jobs', '1']).code).toBe(0);
      const run = runCli(['verify', glb, join(out, 'takes_idle.bpk')]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/result\s+PASS/);
    });
  });

  it('compress takes a folder and compresses the clip files in it, sorted', () => {
    const out = fresh();
    const run = runCli(['compress', 'fixtures', '-o', out, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as CompressJson;
    const expected = readdirSync(join(ROOT, 'fixtures'))
      .filter((n) => n.endsWith('.bvh'))
      .sort()
      .map((n) => join('fixtures', n));
    expect(report.clips.map((c) => c.file)).toEqual(expected);
    expect(readdirSync(out)).toHaveLength(expected.length);
  });

  it('-q prints nothing but errors; -v also names every output written', () => {
    const quiet = runCli(['-q', 'compress', DASH, '-o', fresh(), '--jobs', '1']);
    expect(quiet).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const quietFail = runCli(['compress', '--quiet', join(temp.dir, 'missing.bvh'), '-o', fresh()]);
    expect(quietFail.code).toBe(2);
    expect(quietFail.stdout).toBe('');
    expect(linesOf(quietFail.stderr)).toHaveLength(1);
    const out = fresh();
    const verbose = runCli(['-v', 'compress', DASH, '-o', out, '--jobs', '1']);
    expect(verbose.code).toBe(0);
    expect(linesOf(verbose.stderr)).toEqual([
      `bonepress: ${DASH}: wrote ${join(out, 'dataset-1_dash_normal_001.bpk')} (${statSync(join(out, 'dataset-1_dash_normal_001.bpk')).size} bytes)`,
    ]);
  });

  it('--rate on a BVH is refused (exit 2), not silently ignored', () => {
    const out = fresh();
    const run = runCli(['compress', DASH, '-o', out, '--rate', '60']);
    expect(run.code).toBe(2);
    expect(linesOf(run.stderr)).toEqual([
      `bonepress: --rate resamples glTF/GLB inputs only; ${DASH} keeps the rate it was sampled at (compress it without --rate)`,
    ]);
    expect(existsSync(out)).toBe(false);
  });

  it('a run where every input failed prints no empty table', () => {
    const run = runCli(['compress', join(temp.dir, 'nope-1.bvh'), join(temp.dir, 'nope-2.bvh'), '-o', fresh()]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(linesOf(run.stderr)).toHaveLength(2);
  });

  it('--skip-empty skips a file without animation instead of failing the batch', async () => {
    const still = await writeGlb(join(fresh('still'), 'prop.glb'), []);
    const failing = runCli(['compress', DASH, still, '-o', fresh(), '--jobs', '1']);
    expect(failing.code).toBe(2);
    expect(failing.stderr).toContain('no animations in the file');
    const out = fresh();
    const skipping = runCli(['compress', DASH, still, '-o', out, '--jobs', '1', '--skip-empty']);
    expect(skipping.code, skipping.stderr).toBe(0);
    expect(linesOf(skipping.stderr)).toEqual([`bonepress: ${still}: skipped: no animations in the file`]);
    expect(linesOf(skipping.stdout).at(-1)).toMatch(/^TOTAL \(1 clip, 1 skipped\)/);
    const json = JSON.parse(
      runCli(['compress', DASH, still, '-o', fresh(), '--jobs', '1', '--skip-empty', '--json']).stdout,
    ) as CompressJson;
    expect(json.skipped).toEqual([{ file: still, message: 'no animations in the file' }]);
    expect(json.total).toMatchObject({ clips: 1, failures: 0, skipped: 1 });
  });

  it('compress --json gives each clip only the warnings about its own animation (and the file)', async () => {
    const glb = await writeGlb(join(fresh('warn'), 'takes.glb'), [{ name: 'wave', morph: true }, { name: 'idle' }]);
    const run = runCli(['compress', glb, '-o', fresh(), '--jobs', '1', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as CompressJson;
    const byName = new Map(report.clips.map((c) => [c.name, c.warnings]));
    expect(byName.get('wave')!.length).toBeGreaterThan(0);
    for (const warning of byName.get('wave')!) expect(warning).toMatch(/^animation "wave"/);
    expect(byName.get('idle')).toEqual([]);
    expect(report.warnings.map((w) => w.message)).toEqual(byName.get('wave'));
  });

  it('lengths print one way everywhere: in the unit of --error, three significant digits, no exponent', async () => {
    const glb = await writeGlb(join(fresh('units'), 'wave.glb'), [{ name: 'wave' }]);
    const out = fresh();
    const compress = runCli(['compress', glb, '-o', out, '--jobs', '1']);
    expect(compress.code, compress.stderr).toBe(0);
    expectNoExponent(compress.stdout);
    // A metre clip, printed in cm like the default threshold.
    expect(linesOf(compress.stdout)[2]).toMatch(/ \d+(\.\d+)?cm\s+\d/);
    const verify = runCli(['verify', glb, join(out, 'wave.bpk')]);
    expectNoExponent(verify.stdout);
    expect(verify.stdout).toMatch(/threshold\s+0\.01cm\n/);
    const inMm = runCli(['verify', glb, join(out, 'wave.bpk'), '--error', '0.1mm']);
    expect(inMm.stdout).toMatch(/threshold\s+0\.1mm\n/);
    expect(inMm.stdout).toMatch(/max error\s+\d+(\.\d+)?mm\b/);
  });

  it('sample --time takes 1s, 1000ms and 1 alike', () => {
    const bpk = compressOne(DASH);
    const runs = ['0.5s', '500ms', '0.5'].map((time) => runCli(['sample', bpk, '--time', time, '--json']));
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    const bones = runs.map((run) => JSON.parse(run.stdout).bones);
    expect(bones[1]).toEqual(bones[0]);
    expect(bones[2]).toEqual(bones[0]);
    expect(JSON.parse(runs[0].stdout).time).toBe(0.5);
    const bad = runCli(['sample', bpk, '--time', '1h']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('expected a duration such as 1.5, 1.5s or 1500ms');
  });

  it('bench works outside the repository: needs a corpus, writes nothing unless asked, no reference figures for another corpus', () => {
    const cwd = fresh('elsewhere');
    mkdirSync(cwd);
    const bench = (...args: string[]) =>
      spawnSync(process.execPath, [CLI, 'bench', ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
    const noCorpus = bench();
    expect(noCorpus.status).toBe(2);
    expect(noCorpus.stderr).toContain("missing required argument 'corpus'");
    const noBaseline = bench(join(ROOT, DASH), '--check');
    expect(noBaseline.status).toBe(2);
    expect(noBaseline.stderr).toBe('bonepress: --check needs --baseline <file>\n');
    const run = bench(join(ROOT, DASH), '--jobs', '1', '--no-decode', '--no-speed');
    expect(run.status, run.stderr).toBe(0);
    expect(readdirSync(cwd)).toEqual([]);
    expect(run.stdout).not.toMatch(/ACL|gltfpack|reference|goal|ANCHORS/);
    expectNoExponent(run.stdout);
    expect(run.stdout).toMatch(/^max error\s+\d+(\.\d+)?cm /m);
    const reports = join(cwd, 'reports');
    const saved = bench(join(ROOT, DASH), '--jobs', '1', '--no-decode', '--no-speed', '--out', reports, '--json');
    expect(saved.status, saved.stderr).toBe(0);
    expect(
      readdirSync(reports)
        .map((n) => n.replace(/bench-.*\./, 'bench-<time>.'))
        .sort(),
    ).toEqual(['bench-<time>.html', 'bench-<time>.json']);
  });

  it('messages speak to CLI users: a missing glTF buffer is a missing file, not a library option', async () => {
    const folder = fresh('gltf');
    mkdirSync(folder);
    const glb = await writeGlb(join(folder, 'wave.glb'), [{ name: 'wave' }]);
    const io = new NodeIO();
    const gltf = join(folder, 'wave.gltf');
    await io.write(gltf, await io.read(glb));
    const bin = readdirSync(folder).find((n) => n.endsWith('.bin'))!;
    rmSync(join(folder, bin));
    const run = runCli(['compress', gltf, '-o', fresh(), '--jobs', '1']);
    expect(run.code).toBe(2);
    expect(linesOf(run.stderr)).toEqual([
      `bonepress: ${gltf}: missing buffer "${bin}" (buffer 0): no such file next to the glTF`,
    ]);
  });

  it('top-level help describes verify with every source format', () => {
    const run = runCli(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout.replace(/\s+/g, ' ')).toMatch(
      /verify \[options\] <raw> <other> measure the error of a clip \([^)]*glTF/,
    );
  });
});

describe('outputs planned for the whole batch', () => {
  it('animations "b", "b_2", "b" get three outputs', async () => {
    const glb = await writeGlb(join(fresh('names'), 'a.glb'), [{ name: 'b' }, { name: 'b_2' }, { name: 'b' }]);
    const out = fresh();
    const run = runCli(['compress', glb, '-o', out, '--jobs', '1', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as CompressJson;
    expect(report.clips.map((c) => c.output)).toEqual(['a_b', 'a_b_2', 'a_b_3'].map((n) => join(out, `${n}.bpk`)));
    expect(readdirSync(out).sort()).toEqual(['a_b.bpk', 'a_b_2.bpk', 'a_b_3.bpk']);
  });

  it('two inputs writing one output both fail with OUTPUT_CLASH, and nothing is written over anything', async () => {
    const folder = fresh('clash');
    mkdirSync(folder);
    const bvh = join(folder, 'walk_run.bvh');
    writeFileSync(bvh, readFileSync(join(ROOT, DASH)));
    const glb = await writeGlb(join(folder, 'walk.glb'), [{ name: 'run' }, { name: 'idle' }]);
    const out = fresh();
    mkdirSync(out);
    writeFileSync(join(out, 'walk_run.bpk'), 'from an earlier run');
    const run = runCli(['compress', bvh, glb, '-o', out, '--jobs', '2', '--json']);
    expect(run.code).toBe(2);
    const report = JSON.parse(run.stdout) as CompressJson;
    expect(report.clips).toEqual([]);
    expect(report.failures.map((f) => [f.file, f.code])).toEqual([
      [bvh, 'OUTPUT_CLASH'],
      [glb, 'OUTPUT_CLASH'],
    ]);
    expect(report.failures[0].message).toContain(glb);
    expect(report.failures[1].message).toContain(bvh);
    expect(readdirSync(out)).toEqual(['walk_run.bpk']);
    expect(readFileSync(join(out, 'walk_run.bpk'), 'utf8')).toBe('from an earlier run');
  });

  it('an output never replaces an input: a GLB named model.bpk compressed into its own folder', async () => {
    const folder = fresh('self');
    mkdirSync(folder);
    const source = await writeGlb(join(folder, 'model.bpk'), [{ name: 'wave' }]);
    const before = readFileSync(source);
    const run = runCli(['compress', source, '-o', folder, '--jobs', '1']);
    expect(run.code).toBe(2);
    expect(linesOf(run.stderr)).toEqual([
      `bonepress: ${source}: its output ${source} is the input ${source}; an output never replaces an input`,
    ]);
    expect(readFileSync(source).equals(before)).toBe(true);
  });

  it('-o never replaces or follows a symbolic link', () => {
    const bpk = compressOne(DASH);
    const folder = fresh('links');
    mkdirSync(folder);
    const victim = join(folder, 'victim.json');
    writeFileSync(victim, 'keep me');
    const link = join(folder, 'link.json');
    symlinkSync(victim, link);
    const run = runCli(['decompress', bpk, '-o', link]);
    expect(run.code).toBe(2);
    expect(linesOf(run.stderr)).toEqual([
      `bonepress: ${link}: ${link} is a symbolic link; bonepress does not replace or follow links (remove it or write elsewhere)`,
    ]);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(victim);
    expect(readFileSync(victim, 'utf8')).toBe('keep me');

    const out = fresh();
    mkdirSync(out);
    symlinkSync(victim, join(out, 'dataset-1_dash_normal_001.bpk'));
    const batch = runCli(['compress', DASH, '-o', out, '--jobs', '1', '--json']);
    expect(batch.code).toBe(2);
    expect((JSON.parse(batch.stdout) as CompressJson).failures.map((f) => f.code)).toEqual(['OUTPUT_LINK']);
    expect(readFileSync(victim, 'utf8')).toBe('keep me');
  });
});
