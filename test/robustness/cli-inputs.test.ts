/**
 * Bounded work on every input, through the built CLI (`npm test` builds first):
 * endless and special files (`/dev/zero`, devices behind a `.bvh` symlink, FIFOs, glTF
 * buffers naming them) and 100,000-joint chains end with exit 2 and one line per input;
 * SIGTERM or SIGINT while a large clip compresses ends the run with 130; a file name that is
 * not UTF-8 is found; a huge token is not echoed.
 *
 * Each run reports its CPU time and peak memory (resource-run.ts), checked against the
 * bounds below (2 s, 300 MB). CPU time, not wall time, so a loaded machine does not fail
 * a test; a hang is caught by the run's deadline instead (the process is killed and the
 * test fails on `timedOut`).
 */
import { copyFileSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MAX_BONES } from '../../src/runtime/format.js';
import { CLI, FIXTURES, ROOT, makeTempDir } from '../cli/run-cli.js';
import { bvhChain, gltfChain, sjsonChain } from './chains.js';
import { cpuMsOf, runMeasured, type MeasuredRun } from './resource-run.js';

/** The bounds for one of these runs. */
const MAX_CPU_MS = 2000;
const MAX_RSS_BYTES = 300 * 2 ** 20;
/** Only a hang reaches this (the run is then killed). */
const DEADLINE_MS = 30_000;
const TEST_MS = 120_000;

const temp = makeTempDir('bonepress-robust-');
afterAll(() => temp.remove());
const dir = temp.dir;
const FIXTURE = join(FIXTURES, 'dataset-1_dash_normal_001.bvh');

/** Asserts a clean, bounded failure: exit 2, every stderr line `bonepress: <file>: …`, within the CPU and memory bounds. */
function expectBoundedFailure(run: MeasuredRun, files: readonly string[], what: string): string[] {
  expect(run.timedOut, `${what}: still running after ${DEADLINE_MS} ms (hung); stderr ${run.stderr}`).toBe(false);
  expect(run.code, `${what}: stderr ${run.stderr}`).toBe(2);
  const lines = run.stderr.split('\n').filter((line) => line !== '');
  expect(
    lines.map((line) => files.find((f) => line.startsWith(`bonepress: ${f}: `))),
    `${what}: ${run.stderr}`,
  ).toEqual(lines.map(() => expect.any(String)));
  expect(new Set(lines.map((line) => files.find((f) => line.startsWith(`bonepress: ${f}: `)))).size, what).toBe(
    files.length,
  );
  expect(run.stderr, what).not.toMatch(/^\s+at /m);
  expect(run.cpuMs, `${what}: CPU time`).toBeLessThanOrEqual(MAX_CPU_MS);
  expect(run.maxRssBytes, `${what}: peak memory`).toBeLessThanOrEqual(MAX_RSS_BYTES);
  return lines;
}

describe('special and endless inputs exit 2 at once', () => {
  beforeAll(() => {
    symlinkSync('/dev/zero', join(dir, 'zero.bvh'));
    symlinkSync('/dev/urandom', join(dir, 'random.bvh'));
    execFileSync('mkfifo', [join(dir, 'pipe.bvh')]);
    execFileSync('mkfifo', [join(dir, 'pipe.bpk')]);
    mkdirSync(join(dir, 'asset'));
    execFileSync('mkfifo', [join(dir, 'asset', 'pipe.bin')]);
    const gltf = (uri: string) =>
      JSON.stringify({
        asset: { version: '2.0' },
        nodes: [{ name: 'root' }],
        buffers: [{ byteLength: 40, uri }],
        bufferViews: [
          { buffer: 0, byteLength: 8 },
          { buffer: 0, byteOffset: 8, byteLength: 32 },
        ],
        accessors: [
          { bufferView: 0, componentType: 5126, type: 'SCALAR', count: 2 },
          { bufferView: 1, componentType: 5126, type: 'VEC4', count: 2 },
        ],
        animations: [
          { channels: [{ sampler: 0, target: { node: 0, path: 'rotation' } }], samplers: [{ input: 0, output: 1 }] },
        ],
      });
    writeFileSync(join(dir, 'asset', 'fifo.gltf'), gltf('pipe.bin'));
    writeFileSync(join(dir, 'asset', 'zero.gltf'), gltf('/dev/zero'));
    writeFileSync(join(dir, 'asset', 'outside.gltf'), gltf('../secret.bin'));
  });

  const cases: { what: string; args: (d: string) => string[]; files: (d: string) => string[]; problem: RegExp }[] = [
    {
      what: 'compress /dev/zero',
      args: (d) => ['compress', '/dev/zero', '-o', join(d, 'out')],
      files: () => ['/dev/zero'],
      problem: /is a character device, not a regular file/,
    },
    {
      what: 'compress a .bvh symlink to /dev/zero',
      args: (d) => ['compress', join(d, 'zero.bvh'), '-o', join(d, 'out')],
      files: (d) => [join(d, 'zero.bvh')],
      problem: /is a character device/,
    },
    {
      what: 'compress a .bvh symlink to /dev/urandom',
      args: (d) => ['compress', join(d, 'random.bvh'), '-o', join(d, 'out')],
      files: (d) => [join(d, 'random.bvh')],
      problem: /is a character device/,
    },
    {
      what: 'compress a FIFO',
      args: (d) => ['compress', join(d, 'pipe.bvh'), '-o', join(d, 'out')],
      files: (d) => [join(d, 'pipe.bvh')],
      problem: /is a FIFO \(named pipe\)/,
    },
    {
      what: 'compress a FIFO and /dev/zero with --jobs 2',
      args: (d) => ['compress', join(d, 'pipe.bvh'), join(d, 'zero.bvh'), '--jobs', '2', '-o', join(d, 'out')],
      files: (d) => [join(d, 'pipe.bvh'), join(d, 'zero.bvh')],
      problem: /not a regular file/,
    },
    {
      what: 'info /dev/zero',
      args: () => ['info', '/dev/zero'],
      files: () => ['/dev/zero'],
      problem: /is a character device/,
    },
    {
      what: 'info a FIFO',
      args: (d) => ['info', join(d, 'pipe.bpk')],
      files: (d) => [join(d, 'pipe.bpk')],
      problem: /is a FIFO/,
    },
    {
      what: 'verify x.bvh /dev/urandom',
      args: () => ['verify', FIXTURE, '/dev/urandom'],
      files: () => ['/dev/urandom'],
      problem: /is a character device/,
    },
    {
      what: 'a glTF buffer URI naming a FIFO',
      args: (d) => ['compress', join(d, 'asset', 'fifo.gltf'), '-o', join(d, 'out')],
      files: (d) => [join(d, 'asset', 'fifo.gltf')],
      problem: /cannot load buffer "pipe\.bin" \(buffer 0\): is a FIFO/,
    },
    {
      what: 'a glTF buffer URI naming /dev/zero',
      args: (d) => ['compress', join(d, 'asset', 'zero.gltf'), '-o', join(d, 'out')],
      files: (d) => [join(d, 'asset', 'zero.gltf')],
      problem: /cannot load buffer "\/dev\/zero" \(buffer 0\): the file is outside the asset's folder/,
    },
    {
      what: 'a glTF buffer URI reaching outside the folder',
      args: (d) => ['compress', join(d, 'asset', 'outside.gltf'), '-o', join(d, 'out')],
      files: (d) => [join(d, 'asset', 'outside.gltf')],
      problem: /cannot load buffer "\.\.\/secret\.bin" \(buffer 0\): the file is outside the asset's folder/,
    },
  ];

  it.each(cases)('$what', { timeout: TEST_MS }, async ({ what, args, files, problem }) => {
    const run = await runMeasured(args(dir), dir, { deadlineMs: DEADLINE_MS });
    const lines = expectBoundedFailure(run, files(dir), what);
    for (const line of lines) expect(line, what).toMatch(problem);
    expect(
      readdirSync(dir).includes('out') ? readdirSync(join(dir, 'out')).filter((f) => f.endsWith('.bpk')) : [],
      what,
    ).toEqual([]);
  });
});

describe('100,000-joint chains are refused at the bone limit within 2 s and 300 MB', () => {
  const CHAIN = 100_000;
  const files = { bvh: join(dir, 'chain.bvh'), gltf: join(dir, 'chain.gltf'), sjson: join(dir, 'chain.acl.sjson') };
  beforeAll(() => {
    writeFileSync(files.bvh, bvhChain(CHAIN, 2));
    writeFileSync(files.gltf, gltfChain(CHAIN));
    writeFileSync(files.sjson, sjsonChain(CHAIN, 2));
  });
  const limit = `more than ${MAX_BONES} bones (a .bpk clip holds at most ${MAX_BONES})`;

  it.each([
    // bvhChain: HIERARCHY on line 1, four lines per joint; sjsonChain: bone i on line 4 + i.
    ['BVH', 'bvh', `line ${2 + 4 * MAX_BONES}: ${limit}`],
    ['glTF', 'gltf', limit],
    ['ACL SJSON', 'sjson', `line ${4 + MAX_BONES}, column 1: ${limit}`],
  ] as const)('%s', { timeout: TEST_MS }, async (what, key, problem) => {
    const run = await runMeasured(['compress', files[key], '-o', join(dir, 'chain-out')], dir, {
      deadlineMs: DEADLINE_MS,
    });
    const [line] = expectBoundedFailure(run, [files[key]], what);
    expect(line).toBe(`bonepress: ${files[key]}: ${problem}`);
  });
});

describe('signals', () => {
  let big: string;
  beforeAll(() => {
    // Long enough to compress (tens of seconds) that the signal always comes first.
    big = join(dir, 'big.bvh');
    writeFileSync(big, bvhChain(20_000, 40));
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s while a large clip compresses ends the run with 130, writing nothing',
    { timeout: TEST_MS },
    async (signal) => {
      const out = join(dir, `signal-${signal}`);
      let sentAtMs = 0;
      const run = await runMeasured(['compress', big, '-o', out], dir, {
        deadlineMs: DEADLINE_MS,
        onStart: (pid) => {
          // Past start-up and the read: 1.5 s of CPU is well into compression.
          const poll = setInterval(() => {
            if (cpuMsOf(pid) < 1500) return;
            clearInterval(poll);
            sentAtMs = Date.now();
            process.kill(pid, signal);
          }, 20);
        },
      });
      expect(sentAtMs, 'the signal was sent').toBeGreaterThan(0);
      expect(run.timedOut, `did not end after ${signal}; stderr ${run.stderr}`).toBe(false);
      expect(run.code, run.stderr).toBe(130);
      expect(run.stderr).toMatch(/interrupted/);
      expect(readdirSync(out).filter((f) => !f.startsWith('.'))).toEqual([]);
    },
  );
});

describe('per-input caps', () => {
  it.each([
    [
      '--max-samples',
      ['--max-samples', '10'],
      /: line \d+: Frames: 20: 20 samples is over the limit of 10 \(maxSamples\)$/,
    ],
    [
      '--max-bytes',
      ['--max-bytes', '10000'],
      /: line \d+: Frames: 20: 22 bones × 20 samples need 17\.2 KiB of tracks, over the limit of 9\.8 KiB \(maxBytes\)$/,
    ],
    [
      '--max-input-bytes',
      ['--max-input-bytes', '1000'],
      /: is \d+(\.\d)? KiB, over the input limit of 1000 bytes \(maxInputBytes\)$/,
    ],
  ] as const)(
    '%s refuses a valid clip over it with exit 2, before reading its tracks',
    { timeout: TEST_MS },
    async (what, flags, problem) => {
      const run = await runMeasured(['compress', FIXTURE, '-o', join(dir, 'caps-out'), ...flags], dir, {
        deadlineMs: DEADLINE_MS,
      });
      const [line] = expectBoundedFailure(run, [FIXTURE], what);
      expect(line).toMatch(problem);
    },
  );

  it('--allow-external-resources lets a glTF buffer outside the folder be read', { timeout: TEST_MS }, async () => {
    const asset = join(dir, 'external', 'asset');
    mkdirSync(asset, { recursive: true });
    writeFileSync(
      join(dir, 'external', 'shared.bin'),
      Buffer.from(new Float32Array([0, 1 / 30, 0, 0, 0, 1, 0, 0.1, 0, 0.995]).buffer),
    );
    writeFileSync(
      join(asset, 'a.gltf'),
      JSON.stringify({
        asset: { version: '2.0' },
        nodes: [{ name: 'root' }],
        buffers: [{ byteLength: 40, uri: '../shared.bin' }],
        bufferViews: [
          { buffer: 0, byteLength: 8 },
          { buffer: 0, byteOffset: 8, byteLength: 32 },
        ],
        accessors: [
          { bufferView: 0, componentType: 5126, type: 'SCALAR', count: 2 },
          { bufferView: 1, componentType: 5126, type: 'VEC4', count: 2 },
        ],
        animations: [
          { channels: [{ sampler: 0, target: { node: 0, path: 'rotation' } }], samplers: [{ input: 0, output: 1 }] },
        ],
      }),
    );
    const refused = await runMeasured(['compress', join(asset, 'a.gltf'), '-o', join(dir, 'external', 'out')], dir, {
      deadlineMs: DEADLINE_MS,
    });
    expect(refused.code, refused.stderr).toBe(2);
    const allowed = await runMeasured(
      ['compress', join(asset, 'a.gltf'), '-o', join(dir, 'external', 'out'), '--allow-external-resources'],
      dir,
      { deadlineMs: DEADLINE_MS },
    );
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(readdirSync(join(dir, 'external', 'out'))).toEqual(['a.bpk']);
  });
});

describe('names and messages', () => {
  it('a file name that is not UTF-8 is compressed under the name Node shows for it', { timeout: TEST_MS }, () => {
    const named = join(dir, 'latin');
    mkdirSync(named);
    copyFileSync(
      FIXTURE,
      Buffer.concat([Buffer.from(`${named}/`), Buffer.from([0x63, 0x61, 0x66, 0xe9]), Buffer.from('.bvh')]),
    );
    // argv bytes that are not UTF-8 can only be passed through a shell.
    const run = spawnSync(
      'sh',
      [
        '-c',
        `exec "${process.execPath}" "${CLI}" compress "$(printf '${named}/caf\\351.bvh')" -o "${named}/out" --json`,
      ],
      { cwd: ROOT, encoding: 'utf8', timeout: DEADLINE_MS },
    );
    expect(run.status, run.stderr).toBe(0);
    expect(readdirSync(join(named, 'out'))).toEqual(['caf\uFFFD.bpk']);
  });

  it('a 20 MB token is cut to a readable length in the message', { timeout: TEST_MS }, async () => {
    const file = join(dir, 'token.bvh');
    writeFileSync(file, `HIERARCHY\nROOT ${'x'.repeat(20_000_000)}\n{\n}\n`);
    const run = await runMeasured(['compress', file, '-o', join(dir, 'token-out')], dir, { deadlineMs: DEADLINE_MS });
    const [line] = expectBoundedFailure(run, [file], 'a 20 MB token');
    expect(line.length).toBeLessThan(file.length + 200);
    expect(line).toContain('…" (20000000 characters)');
  });
});
