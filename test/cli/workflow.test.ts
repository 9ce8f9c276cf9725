/**
 * The CLI in a user's real workflow, through the built CLI: outputs never replace an input
 * (whatever the output form, also through links), `-o` creates its folders, folder trees keep
 * their layout, a file that is not what its name says is one clean line, `info` and `verify`
 * cover every animation of an asset, warnings are said once, and help agrees with the docs.
 * Assets are generated here; where ../shared holds the Khronos sample models, the same
 * checks also run on CesiumMan (unnamed animation) and Fox (three animations).
 */
import { existsSync, linkSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { Document, NodeIO } from '@gltf-transform/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { addChain, addChannel, swingRotations } from './chain-rig.js';
import { ROOT, fixture, makeTempDir, runCli } from './run-cli.js';
import { sharedData } from '../utils/shared-data.js';

const WALK = fixture('dataset-1_walk_happy_002.bvh');
const DASH = fixture('dataset-1_dash_normal_001.bvh');
const KHRONOS = sharedData('khronos-samples');
const temp = makeTempDir('bonepress-workflow-');
afterAll(() => temp.remove());
const LONG = { timeout: 120_000 };

let count = 0;
/** A fresh path in the temp folder (not created). */
function fresh(name = 'out'): string {
  return join(temp.dir, `${name}-${++count}`);
}

/**
 * Writes a GLB with a three-bone skinned chain and one animation per name, keyed at
 * `options.rate` (default 30 Hz) for one second; `names[i]` names take i ('' leaves it unnamed). With `morph`, each take also
 * animates a morph weight of a mesh node (a warning per animation when read). Returns its path.
 */
async function writeRig(
  path: string,
  names: readonly string[],
  options: { morph?: boolean; rate?: number } = {},
): Promise<string> {
  mkdirSync(dirname(path), { recursive: true });
  const doc = new Document();
  const buffer = doc.createBuffer();
  const scene = doc.createScene('scene');
  const joints = addChain(doc, scene);
  const face = doc.createNode('Face').setMesh(doc.createMesh('face'));
  scene.addChild(face);
  const rate = options.rate ?? 30;
  const samples = rate + 1;
  const times = doc
    .createAccessor()
    .setType('SCALAR')
    .setBuffer(buffer)
    .setArray(Float32Array.from({ length: samples }, (_, s) => s / rate));
  names.forEach((name, t) => {
    const anim = doc.createAnimation(name);
    const channel = (
      target: typeof face,
      path: 'rotation' | 'weights',
      type: 'VEC4' | 'SCALAR',
      values: number[],
    ): void => addChannel(doc, buffer, anim, times, target, path, type, values);
    joints.forEach((joint, j) => channel(joint, 'rotation', 'VEC4', swingRotations(j, t, samples)));
    if (options.morph)
      channel(
        face,
        'weights',
        'SCALAR',
        Array.from({ length: samples }, (_, s) => s / (samples - 1)),
      );
  });
  writeFileSync(path, await new NodeIO().writeBinary(doc));
  return path;
}

/** The Khronos model's GLB when ../shared holds it, else undefined. */
function khronos(model: string): string | undefined {
  if (!KHRONOS) return undefined;
  const path = join(KHRONOS, model, `${model}.glb`);
  return existsSync(path) ? path : undefined;
}

/** Every file under `folder`, as paths relative to it with `/`, sorted. */
function tree(folder: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, prefix: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name), `${prefix}${entry.name}/`);
      else out.push(prefix + entry.name);
    }
  };
  walk(folder, '');
  return out.sort();
}

/** One clean line: no control character, no U+FFFD, a bounded length. */
function expectOneCleanLine(text: string): void {
  const lines = text.split('\n').filter((line) => line !== '');
  expect(lines).toHaveLength(1);
  expect(lines[0]).not.toMatch(/[\p{C}\uFFFD]/u);
  expect(lines[0].length).toBeLessThan(400);
}

let rig: string; // three named takes
let unnamed: string; // two unnamed takes
let morphRig: string; // 14 named takes, each with a morph weight
beforeAll(async () => {
  rig = await writeRig(join(temp.dir, 'rig', 'hero.glb'), ['Idle', 'Walk', 'Run']);
  unnamed = await writeRig(join(temp.dir, 'rig', 'plain.glb'), ['', '']);
  morphRig = await writeRig(
    join(temp.dir, 'rig', 'faces.glb'),
    Array.from({ length: 14 }, (_, i) => `Take${i}`),
    { morph: true },
  );
});

describe('an output never replaces an input', () => {
  it('glTF output named as its input: refused with OUTPUT_CLASH, exit 2, the source untouched', LONG, () => {
    const dir = fresh('same');
    mkdirSync(dir);
    const source = join(dir, 's2.glb');
    writeFileSync(source, readFileSync(rig));
    const run = runCli(['compress', source, '-o', source]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/is the input .*an output never replaces an input/);
    expect(readFileSync(source).equals(readFileSync(rig))).toBe(true);
  });

  it('through a symbolic link, a hard link, or as a .gltf whose resource is a source file', LONG, () => {
    const dir = fresh('links');
    mkdirSync(dir);
    const source = join(dir, 'hero.glb');
    writeFileSync(source, readFileSync(rig));
    linkSync(source, join(dir, 'hard.glb'));
    symlinkSync('hero.glb', join(dir, 'soft.glb'));
    for (const out of ['hard.glb', 'soft.glb']) {
      const run = runCli(['compress', source, '-o', join(dir, out)]);
      expect(run.code, out).toBe(2);
      expect(run.stderr).toContain('an output never replaces an input');
    }
    expect(readFileSync(source).equals(readFileSync(rig))).toBe(true);
    // A .gltf output writes <name>.bin beside it: here that is the source's own buffer.
    const gltf = join(dir, 'split', 'rig.gltf');
    expect(runCli(['compress', source, '-o', gltf]).code).toBe(0);
    const bin = readFileSync(join(dir, 'split', 'rig.bin'));
    const again = runCli(['compress', gltf, '-o', join(dir, 'split', 'rig.gltf')]);
    expect(again.code).toBe(2);
    const clash = runCli(['compress', gltf, '-o', join(dir, 'split', 'rig.glb')]);
    expect(clash.code).toBe(0);
    const other = runCli(['compress', join(dir, 'split', 'rig.glb'), '-o', join(dir, 'split', 'RIG2.gltf')]);
    expect(other.code).toBe(0);
    expect(readFileSync(join(dir, 'split', 'rig.bin')).equals(bin)).toBe(true);
  });

  it('loose clips, the manifest and decompress refuse a hard link to an input', LONG, () => {
    const dir = fresh('bpk');
    mkdirSync(join(dir, 'out'), { recursive: true });
    const walk = join(dir, 'walk.bvh');
    writeFileSync(walk, readFileSync(WALK));
    linkSync(walk, join(dir, 'out', 'walk.bpk'));
    const run = runCli(['compress', walk, '-o', join(dir, 'out'), '--jobs', '1']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('an output never replaces an input');
    const manifest = runCli([
      'compress',
      walk,
      '-o',
      join(dir, 'lib'),
      '--manifest',
      join(dir, 'walk.bvh'),
      '--jobs',
      '1',
    ]);
    expect(manifest.code).toBe(2);
    expect(manifest.stderr).toContain('an output never replaces an input');
    expect(readFileSync(walk).equals(readFileSync(WALK))).toBe(true);

    const bpk = join(dir, 'clip', 'walk.bpk');
    expect(runCli(['compress', WALK, '-o', bpk]).code).toBe(0);
    linkSync(bpk, join(dir, 'clip', 'dump.json'));
    const dump = runCli(['decompress', bpk, '-o', join(dir, 'clip', 'dump.json')]);
    expect(dump.code).toBe(2);
    expect(dump.stderr).toContain('an output never replaces an input');
  });
});

describe('-o creates missing folders for every output form', () => {
  it('.glb, .gltf, .bpk, .bpt, a folder, a manifest and a pose dump', LONG, () => {
    const base = fresh('deep');
    const runs: [string[], string][] = [
      [['compress', rig, '-o', join(base, 'a', 'x.glb')], join(base, 'a', 'x.glb')],
      [['compress', rig, '-o', join(base, 'b', 'x.gltf')], join(base, 'b', 'x.bin')],
      [['compress', WALK, '-o', join(base, 'c', 'x.bpk')], join(base, 'c', 'x.bpk')],
      [['compress', WALK, '-o', join(base, 'd', 'x.bpt')], join(base, 'd', 'x.bpt')],
      [
        ['compress', WALK, '-o', join(base, 'e', 'f'), '--manifest', join(base, 'g', 'm.json')],
        join(base, 'g', 'm.json'),
      ],
    ];
    for (const [args, made] of runs) {
      const run = runCli([...args, '--jobs', '1']);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
      expect(existsSync(made), made).toBe(true);
    }
    expect(runCli(['decompress', join(base, 'c', 'x.bpk'), '-o', join(base, 'h', 'p.json')]).code).toBe(0);
    expect(existsSync(join(base, 'h', 'p.json'))).toBe(true);
  });
});

describe('a folder input keeps its tree under -o', () => {
  /** lib/a/walk.bvh, lib/b/walk.bvh, lib/b/deep/walk.bvh and lib/hero.glb (three takes). */
  function library(): string {
    const lib = fresh('lib');
    for (const sub of ['a', 'b', join('b', 'deep')]) {
      mkdirSync(join(lib, sub), { recursive: true });
      writeFileSync(join(lib, sub, 'walk.bvh'), readFileSync(sub === 'a' ? WALK : DASH));
    }
    writeFileSync(join(lib, 'hero.glb'), readFileSync(rig));
    return lib;
  }
  const expected = ['a/walk.bpk', 'b/deep/walk.bpk', 'b/walk.bpk', 'hero_Idle.bpk', 'hero_Run.bpk', 'hero_Walk.bpk'];

  it('loose clips: same-named files in different folders do not clash; --flat flattens (and clashes)', LONG, () => {
    const lib = library();
    const out = fresh('tree');
    const run = runCli(['compress', lib, '-o', out, '--jobs', '2']);
    expect(run.code, run.stderr).toBe(0);
    expect(tree(out)).toEqual(expected);
    // The table tells the rows apart by their folder.
    for (const row of ['a/walk', 'b/walk', 'b/deep/walk']) expect(run.stdout).toContain(`${join(...row.split('/'))} `);
    const flat = runCli(['compress', lib, '-o', fresh('flat'), '--flat', '--jobs', '1']);
    expect(flat.code).toBe(2);
    expect(flat.stderr).toContain('is also written by');
  });

  it('glTF output of a folder: each asset at its subfolder under -o, a BVH refused, the others written', LONG, () => {
    const lib = fresh('assets');
    for (const sub of ['hero', 'villain']) {
      mkdirSync(join(lib, sub), { recursive: true });
      writeFileSync(join(lib, sub, 'body.glb'), readFileSync(rig));
    }
    writeFileSync(join(lib, 'walk.bvh'), readFileSync(WALK));
    const out = fresh('assets-out');
    const run = runCli(['compress', lib, '-o', out, '--format', 'glb']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/walk\.bvh: glTF output \(--format glb\) needs \.glb or \.gltf inputs/);
    expect(tree(out)).toEqual(['hero/body.glb', 'villain/body.glb']);
    expect(run.stdout).toContain('TOTAL (2 assets)');
    const verify = runCli(['verify', rig, join(out, 'villain', 'body.glb')]);
    expect(verify.code, verify.stderr).toBe(0);
    const flat = runCli([
      'compress',
      join(lib, 'hero'),
      join(lib, 'villain'),
      '-o',
      fresh('flat-assets'),
      '--format',
      'gltf',
    ]);
    expect(flat.code).toBe(2);
    expect(flat.stderr).toContain('is also written by');
  });

  it('library mode with --manifest, and --shard slices that together give the same tree', LONG, () => {
    const lib = library();
    const out = fresh('libout');
    const manifest = join(fresh('m'), 'manifest.json');
    const run = runCli(['compress', lib, '-o', out, '--manifest', manifest, '--jobs', '1']);
    expect(run.code, run.stderr).toBe(0);
    expect(tree(out)).toEqual(expected);
    const listed = (JSON.parse(readFileSync(manifest, 'utf8')) as { inputs: { outputs?: { path: string }[] }[] }).inputs
      .flatMap((i) => i.outputs ?? [])
      .map((o) => o.path);
    expect(
      listed
        .map((p) =>
          p
            .slice(out.length + 1)
            .split('\\')
            .join('/'),
        )
        .sort(),
    ).toEqual(expected);
    // Incremental: a second run takes everything from the cache and writes nothing.
    const again = runCli(['compress', lib, '-o', out, '--manifest', manifest, '--jobs', '1', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ compressed: 0, cached: 4, outputsWritten: 0 });

    const sharded = fresh('shards');
    for (const shard of ['1/2', '2/2']) {
      const part = runCli([
        'compress',
        lib,
        '-o',
        sharded,
        '--shard',
        shard,
        '--manifest',
        join(sharded + '-m', `${shard[0]}.json`),
        '--jobs',
        '1',
      ]);
      expect(part.code, part.stderr).toBe(0);
    }
    expect(tree(sharded)).toEqual(expected);
  });
});

describe('a file that is not what its name says: one clean line, whatever the command', () => {
  it('a PNG named .glb, and binary bytes named .gltf', LONG, () => {
    const dir = fresh('fake');
    mkdirSync(dir);
    const png = join(dir, 'fake.glb');
    writeFileSync(
      png,
      Buffer.concat([
        Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]),
        Buffer.from('IHDR\u0000\u0001\u001b[31m'.repeat(20), 'latin1'),
      ]),
    );
    const gltf = join(dir, 'fake.gltf');
    writeFileSync(
      gltf,
      Buffer.concat([
        Buffer.from('{"asset": '),
        Buffer.from([0, 1, 2, 0x1b, 0x0d, 0xff, 0xfe]),
        Buffer.from('x'.repeat(200)),
      ]),
    );
    for (const file of [png, gltf]) {
      const runs = [
        ['compress', file, '-o', join(dir, 'out')],
        ['compress', file, '-o', join(dir, 'out.glb')],
        ['info', file],
        ['sample', file, '--time', '0'],
        ['decompress', file, '-o', join(dir, 'dump.json')],
        ['verify', file, rig],
        ['verify', rig, file],
      ];
      for (const args of runs) {
        const run = runCli(args[0] === 'compress' ? [...args, '--jobs', '1'] : args);
        expect(run.code, args.join(' ')).toBe(2);
        expectOneCleanLine(run.stderr);
        expect(run.stderr).toContain(file);
      }
    }
  });
});

describe('info and verify on whole assets: every animation, a row each', () => {
  it(
    'info of an asset with several compressed animations: a row each and the total; --clip takes one, unnamed ones as animation_<i> or ""',
    LONG,
    () => {
      const out = join(fresh('info'), 'hero.bp.glb');
      expect(runCli(['compress', rig, '-o', out]).code).toBe(0);
      const run = runCli(['info', out]);
      expect(run.code, run.stderr).toBe(0);
      for (const name of ['"Idle"', '"Walk"', '"Run"', 'TOTAL (3 animations)']) expect(run.stdout).toContain(name);
      const json = JSON.parse(runCli(['info', out, '--json']).stdout) as {
        animations: { name: string; byteLength: number }[];
        total: { bytes: number };
      };
      expect(json.animations.map((a) => a.name)).toEqual(['Idle', 'Walk', 'Run']);
      expect(json.total.bytes).toBe(json.animations.reduce((n, a) => n + a.byteLength, 0));

      const plain = join(fresh('info'), 'plain.bp.glb');
      expect(runCli(['compress', unnamed, '-o', plain]).code).toBe(0);
      expect(runCli(['info', plain]).stdout).toContain('1 "animation_1"');
      expect(runCli(['info', plain, '--clip', 'animation_1']).code).toBe(0);
      expect(runCli(['info', plain, '--clip', '']).code).toBe(0);
      expect(runCli(['sample', plain, '--clip', 'animation_0', '--time', '0.5']).code).toBe(0);
    },
  );

  it(
    'verify a compressed asset with unnamed animations against its source, every animation and by --clip',
    LONG,
    () => {
      const sources = [unnamed, khronos('CesiumMan')].filter((s) => s !== undefined);
      for (const source of sources) {
        const out = join(fresh('unnamed'), 'x.bp.glb');
        expect(runCli(['compress', source, '-o', out]).code).toBe(0);
        const run = runCli(['verify', source, out, '--json']);
        expect(run.code, `${source}: ${run.stderr}`).toBe(0);
        const report = JSON.parse(run.stdout) as { clips: { clip: string; pass: boolean }[]; pass: boolean };
        expect(report.pass).toBe(true);
        expect(report.clips[0].clip).toBe('animation_0');
        expect(runCli(['verify', source, out, '--clip', 'animation_0']).code).toBe(0);
        expect(runCli(['verify', source, out, '--clip', '']).code).toBe(0);
      }
    },
  );

  it(
    'verify two keyframed assets: every animation matched by name, then by place; a rate mismatch says which --rate',
    LONG,
    async () => {
      const dir = fresh('pair');
      // The same motion, the first take renamed: matched by place, the others by name.
      const renamed = await writeRig(join(dir, 'renamed.glb'), ['Idle2', 'Walk', 'Run']);
      const run = runCli(['verify', rig, renamed, '--json']);
      expect(run.code, run.stderr).toBe(0);
      const report = JSON.parse(run.stdout) as {
        clips: { clip: string; otherClip: string; maxError: number }[];
        missing: string[];
      };
      expect(report.clips.map((c) => [c.clip, c.otherClip])).toEqual([
        ['Idle', 'Idle2'],
        ['Walk', 'Walk'],
        ['Run', 'Run'],
      ]);
      expect(report.clips.every((c) => c.maxError === 0)).toBe(true);
      // Reordered: each still meets its namesake; a take with neither name nor place left is missing (exit 1).
      const reordered = await writeRig(join(dir, 'reordered.glb'), ['Run', 'Walk', 'Other']);
      const missing = runCli(['verify', rig, reordered, '--json']);
      expect(missing.code).toBe(1);
      expect((JSON.parse(missing.stdout) as { missing: string[] }).missing).toEqual(['Idle']);
      const text = runCli(['verify', rig, renamed]);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toContain('TOTAL (3 clips)');
      for (const name of ['"Idle"', '"Walk"', '"Run"']) expect(text.stdout).toContain(name);

      // Resampled elsewhere (gltfpack writes 30 Hz): the mismatch names the --rate that fixes it.
      const at60 = await writeRig(join(dir, 'at60.glb'), ['Idle', 'Walk', 'Run'], { rate: 60 });
      const mismatch = runCli(['verify', rig, at60]);
      expect(mismatch.code).toBe(2);
      expectOneCleanLine(mismatch.stderr);
      expect(mismatch.stderr).toContain('verify with --rate 60');
      const fixed = runCli(['verify', rig, at60, '--rate', '60', '--json']);
      expect(fixed.code, fixed.stderr).toBeLessThan(2);
      expect(
        (JSON.parse(fixed.stdout) as { clips: { sampleCount: number }[] }).clips.map((c) => c.sampleCount),
      ).toEqual([61, 61, 61]);
    },
  );
});

describe('warnings are said once per file', () => {
  it(
    'the same warning about 14 animations is one line with the count, in compress, library mode and verify',
    LONG,
    () => {
      const loose = fresh('w');
      const runs = [
        runCli(['compress', morphRig, '-o', loose, '--jobs', '1']),
        runCli(['compress', morphRig, '-o', fresh('w'), '--manifest', join(fresh('wm'), 'm.json'), '--jobs', '1']),
      ];
      for (const run of runs) {
        expect(run.code, run.stderr).toBe(0);
        const lines = run.stderr.split('\n').filter((line) => line.includes('warning'));
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(/14 animations \("Take0", "Take1", "Take2", …\): 1 morph-target weight channel/);
      }
      const verify = runCli(['verify', morphRig, join(loose, 'faces_Take3.bpk')]);
      expect(verify.code, verify.stderr).toBe(0);
      expect(verify.stderr.split('\n').filter((line) => line.includes('warning'))).toHaveLength(1);
      // glTF output without extra bones: the weights stay plain channels, said once too.
      const gltf = runCli(['compress', morphRig, '-o', join(fresh('wg'), 'faces.glb'), '--no-extras']);
      expect(gltf.code, gltf.stderr).toBe(0);
      const gltfLines = gltf.stderr.split('\n').filter((line) => line.includes('warning'));
      expect(gltfLines.length).toBeGreaterThan(0);
      expect(gltfLines.length).toBeLessThan(14);
      expect(gltfLines.join('\n')).toMatch(/14 animations \("Take0", "Take1", "Take2", …\)/);
    },
  );
});

describe('help and docs agree', () => {
  it('--jobs: the help and the README say the same (worker threads, even for 1); gltfpack runs before bonepress; the library example needs no fixtures/', () => {
    const help = runCli(['compress', '--help']).stdout;
    expect(help).not.toContain('in-process');
    expect(help).toMatch(/--jobs <n>\s+parallel compression jobs \(worker threads/);
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toMatch(/\| `--jobs <n>` \| [^|]*worker thread/);
    const gltfDoc = readFileSync(join(ROOT, 'docs', 'gltf.md'), 'utf8');
    expect(gltfDoc).not.toMatch(/before or\s+after/);
    expect(gltfDoc).toMatch(/gltfpack[^.]*before\s+bonepress, never after/);
    // The README's library examples read files the package ships or the user has.
    const library = readme.slice(readme.indexOf('## Library'));
    expect(library.slice(0, library.indexOf('```', library.indexOf('```') + 3))).not.toContain("'fixtures/");
  });
});
