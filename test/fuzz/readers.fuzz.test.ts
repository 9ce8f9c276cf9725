/**
 * Hostile input for every reader: BVH, glTF/GLB, ACL SJSON and pose dumps (through
 * `readClips`, the entry point the CLI and the worker pool use).
 *
 * The contract under test: a reader either returns valid clips (validateRawClip passes,
 * finite default pose, parents before children, unique bone names) or throws a ParseError.
 * Never another exception (a TypeError from deep inside, a RangeError from an allocation or
 * a stack overflow), and never a clip allocation that the file's bytes do not back: a
 * declared count with no data behind it fails before the tracks are allocated.
 *
 * Allocation is watched by wrapping `createRawClip` (every reader allocates its tracks
 * there): a test sets a budget in bone samples, and a request above it fails the test at
 * once instead of allocating gigabytes.
 *
 * Every case is also held to a resource budget ({@link CASE_CPU_MS} of CPU time and
 * {@link CASE_RSS_BYTES} of growth of the process's peak resident memory): far above what
 * any case needs, so only unbounded work (a quadratic walk, a hang, a huge allocation)
 * reaches it. CPU time rather than wall time, so a loaded machine does not fail it.
 *
 * Deterministic: fast-check with a fixed seed; `FUZZ_RUNS` scales the random properties
 * (each reader property runs FUZZ_RUNS / 10 cases, at least {@link MIN_READER_RUNS}), and
 * `FUZZ_SEED` replays another seed.
 */
import { readFileSync } from 'node:fs';
import { MAX_BONES } from '../../src/runtime/format.js';

import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { validateRawClip, type RawClip } from '../../src/clip/raw-clip.js';
import { POSE_STRIDE } from '../../src/clip/skeleton.js';
import { compress } from '../../src/compress/index.js';
import { readAclSjson } from '../../src/readers/acl-sjson.js';
import { readBvh } from '../../src/readers/bvh.js';
import { ParseError, PARSE_ERROR, type ParseErrorCode } from '../../src/readers/errors.js';
import { readGltf } from '../../src/readers/gltf.js';
import { readClips } from '../../src/readers/index.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';

// ---------------------------------------------------------------------------------------
// Allocation guard.

const guard = vi.hoisted(() => ({
  /** Largest clip (bones × samples) any reader may allocate right now. */
  budget: Number.POSITIVE_INFINITY,
  /** Largest request seen since the last reset. */
  largest: 0,
}));

vi.mock('../../src/clip/raw-clip.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/clip/raw-clip.js')>();
  return {
    ...actual,
    createRawClip: (...args: Parameters<typeof actual.createRawClip>) => {
      const [, skeleton, , sampleCount] = args;
      const boneSamples = skeleton.boneNames.length * sampleCount;
      guard.largest = Math.max(guard.largest, boneSamples);
      if (boneSamples > guard.budget) {
        const error = new Error(
          `allocation guard: a reader asked for ${skeleton.boneNames.length} bones × ${sampleCount} samples (${boneSamples} bone samples, ${40 * boneSamples} bytes), over this input's budget of ${guard.budget}`,
        );
        error.name = 'AllocationGuardError';
        throw error;
      }
      return actual.createRawClip(...args);
    },
  };
});

afterEach(() => {
  guard.budget = Number.POSITIVE_INFINITY;
  guard.largest = 0;
});

/** Runs `read` with at most `budget` bone samples of clip allocation. */
async function withBudget<T>(budget: number, read: () => T | Promise<T>): Promise<T> {
  guard.budget = budget;
  guard.largest = 0;
  try {
    return await read();
  } finally {
    guard.budget = Number.POSITIVE_INFINITY;
  }
}

// ---------------------------------------------------------------------------------------
// Run counts.

const MIN_READER_RUNS = 150;
const RUNS = positiveInt(process.env.FUZZ_RUNS, 500); // `npm run fuzz` runs 200,000
const READER_RUNS = Math.max(MIN_READER_RUNS, Math.floor(RUNS / 10));
const SEED = positiveInt(process.env.FUZZ_SEED, 0x62766831); // "bvh1"
const TIMEOUT_MS = 60_000 + READER_RUNS * 20;

function positiveInt(text: string | undefined, fallback: number): number {
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`expected a whole number ≥ 1, got "${text}"`);
  return n;
}

function params(index: number, numRuns = READER_RUNS): fc.Parameters<unknown> {
  return { seed: (SEED + index * 0x9e3779b1) | 0, numRuns, endOnFailure: true };
}

// ---------------------------------------------------------------------------------------
// Resource budget per case.

/** CPU time one read may take (bound for a 100,000-joint chain). */
const CASE_CPU_MS = 2000;
/** Growth of the peak resident memory one read may cause. */
const CASE_RSS_BYTES = 300 * 2 ** 20;

/**
 * Runs `read` and fails when it used more than {@link CASE_CPU_MS} of CPU or raised the
 * process's peak RSS by more than {@link CASE_RSS_BYTES}. The peak can only grow, so a case
 * under an earlier peak is not charged: the check can miss, never accuse wrongly.
 */
async function withinResources<T>(context: string, read: () => Promise<T>): Promise<T> {
  const cpuBefore = process.cpuUsage();
  const rssBefore = process.resourceUsage().maxRSS * 1024;
  try {
    return await read();
  } finally {
    const cpu = process.cpuUsage(cpuBefore);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    const rssGrowth = process.resourceUsage().maxRSS * 1024 - rssBefore;
    // biome-ignore-start lint/correctness/noUnsafeFinally: an over-budget case fails whether the read returned or threw
    if (cpuMs > CASE_CPU_MS)
      throw new Error(`${context}: used ${cpuMs.toFixed(0)} ms of CPU, over the per-case budget of ${CASE_CPU_MS} ms`);
    if (rssGrowth > CASE_RSS_BYTES)
      throw new Error(
        `${context}: raised peak memory by ${(rssGrowth / 2 ** 20).toFixed(0)} MB, over the per-case budget of ${CASE_RSS_BYTES / 2 ** 20} MB`,
      );
    // biome-ignore-end lint/correctness/noUnsafeFinally: see above
  }
}

// ---------------------------------------------------------------------------------------
// The contract.

const PARSE_CODES: ReadonlySet<string> = new Set(Object.values(PARSE_ERROR));

/** Asserts `clip` is a clip the compressor accepts, with unique bone names. */
function checkClip(clip: RawClip, context: string): void {
  try {
    validateRawClip(clip);
  } catch (error) {
    throw new Error(`${context}: the reader returned an invalid clip: ${(error as Error).message}`);
  }
  const { boneNames, parents, defaultPose, shellDistances } = clip.skeleton;
  const fail = (what: string): never => {
    throw new Error(`${context}: the reader returned an invalid clip: ${what}`);
  };
  if (new Set(boneNames).size !== boneNames.length)
    fail(
      `duplicate bone names (${boneNames
        .filter((n, i) => boneNames.indexOf(n) !== i)
        .slice(0, 3)
        .join(', ')})`,
    );
  if (parents.length !== boneNames.length) fail(`${parents.length} parents for ${boneNames.length} bones`);
  for (let b = 0; b < parents.length; b++)
    if (!(parents[b] >= -1 && parents[b] < b)) fail(`bone ${b} has parent ${parents[b]}`);
  for (let i = 0; i < defaultPose.length; i++)
    if (!Number.isFinite(defaultPose[i])) fail(`default pose value ${i} is ${defaultPose[i]}`);
  for (let b = 0; b < boneNames.length; b++) {
    const o = b * POSE_STRIDE;
    const len2 = defaultPose[o] ** 2 + defaultPose[o + 1] ** 2 + defaultPose[o + 2] ** 2 + defaultPose[o + 3] ** 2;
    if (!(len2 > 1e-12)) fail(`bone ${b} default rotation has length² ${len2}`);
  }
  for (let b = 0; b < shellDistances.length; b++)
    if (!(shellDistances[b] > 0 && Number.isFinite(shellDistances[b]))) fail(`shell distance ${shellDistances[b]}`);
}

/** What a reader did with one input. */
type ReadOutcome = { ok: true; clips: RawClip[] } | { ok: false; error: ParseError };

/**
 * Runs `read` and checks the contract: valid clips, or a ParseError with a known code, a
 * message naming `file`, and a sane line and column. Anything else throws.
 */
async function outcome(
  file: string,
  read: () => RawClip | RawClip[] | Promise<RawClip | RawClip[]>,
  context: string,
): Promise<ReadOutcome> {
  let result: RawClip | RawClip[];
  try {
    result = await withinResources(context, async () => read());
  } catch (error) {
    if (error instanceof Error && / budget of /.test(error.message)) throw error;
    if (!(error instanceof ParseError)) {
      const what = error instanceof Error ? `${error.name}: ${error.message}\n${error.stack}` : String(error);
      throw new Error(`${context}: threw something other than a ParseError: ${what}`);
    }
    if (!PARSE_CODES.has(error.code)) throw new Error(`${context}: unknown ParseError code ${error.code}`);
    if (error.file !== file || !error.message.startsWith(file))
      throw new Error(`${context}: ParseError does not name the file: ${error.message}`);
    if (!(Number.isInteger(error.line) && error.line >= 0 && Number.isInteger(error.column) && error.column >= 0)) {
      throw new Error(`${context}: ParseError at line ${error.line}, column ${error.column}`);
    }
    if (error.problem.trim().length === 0)
      throw new Error(`${context}: ParseError without a problem: "${error.message}"`);
    return { ok: false, error };
  }
  const clips = Array.isArray(result) ? result : [result];
  if (clips.length === 0) throw new Error(`${context}: the reader returned no clip and no error`);
  for (const clip of clips) checkClip(clip, context);
  return { ok: true, clips };
}

/** Expects a ParseError (with `code` when given) and returns it. */
async function expectParseError(
  file: string,
  read: () => RawClip | RawClip[] | Promise<RawClip | RawClip[]>,
  code?: ParseErrorCode,
): Promise<ParseError> {
  const result = await outcome(file, read, file);
  if (result.ok)
    throw new Error(
      `${file}: expected a ParseError${code ? ` ${code}` : ''}, but the reader returned ${result.clips.length} clip(s)`,
    );
  if (code !== undefined) expect(result.error.code, result.error.message).toBe(code);
  return result.error;
}

// ---------------------------------------------------------------------------------------
// Inputs.

const FIXTURE_BVH = readFileSync(new URL('../../fixtures/dataset-1_dash_normal_001.bvh', import.meta.url), 'utf8');

/** A small BVH: `depth` nested joints, `frames` frames of simple values. */
function bvhText(
  options: {
    depth?: number;
    frames?: number;
    names?: (i: number) => string;
    value?: (f: number, c: number) => string;
  } = {},
): string {
  const depth = options.depth ?? 3,
    frames = options.frames ?? 4;
  const name = options.names ?? ((i: number) => `j${i}`);
  const lines = ['HIERARCHY'];
  for (let i = 0; i < depth; i++) {
    lines.push(
      `${i === 0 ? 'ROOT' : 'JOINT'} ${name(i)}`,
      '{',
      `OFFSET 0 ${i === 0 ? 0 : 10} 0`,
      i === 0
        ? 'CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation'
        : 'CHANNELS 3 Zrotation Xrotation Yrotation',
    );
  }
  lines.push('End Site', '{', 'OFFSET 0 5 0', '}');
  for (let i = 0; i < depth; i++) lines.push('}');
  const channels = 6 + 3 * (depth - 1);
  lines.push('MOTION', `Frames: ${frames}`, 'Frame Time: 0.0333333');
  const value = options.value ?? ((f: number, c: number) => String(((f * 7 + c * 3) % 23) - 11));
  for (let f = 0; f < frames; f++) lines.push(Array.from({ length: channels }, (_, c) => value(f, c)).join(' '));
  return lines.join('\n') + '\n';
}

/** A small ACL SJSON clip: a chain of `bones` bones, `samples` samples. */
function sjsonText(
  options: {
    bones?: number;
    samples?: number;
    declaredSamples?: string;
    names?: (i: number) => string;
    rotation?: string;
  } = {},
): string {
  const bones = options.bones ?? 3,
    samples = options.samples ?? 4;
  const name = options.names ?? ((i: number) => `b${i}`);
  const boneList = Array.from(
    { length: bones },
    (_, i) =>
      `  { name = "${name(i)}" parent = "${i === 0 ? '' : name(i - 1)}" vertex_distance = 3.0 bind_rotation = [ 0, 0, 0, 1 ] bind_translation = [ 0, ${i === 0 ? 0 : 0.1}, 0 ] bind_scale = [ 1, 1, 1 ] }`,
  );
  const rot = (s: number) => options.rotation ?? `[ 0, ${(0.01 * s).toFixed(3)}, 0, 1 ]`;
  const trackList = Array.from(
    { length: bones },
    (_, i) =>
      `  { name = "${name(i)}" rotations = [ ${Array.from({ length: samples }, (_, s) => rot(s)).join(', ')} ] translations = [ ${Array.from({ length: samples }, (_, s) => `[ ${0.001 * s}, ${i === 0 ? 0 : 0.1}, 0 ]`).join(', ')} ] }`,
  );
  return [
    'version = 5',
    `clip = { name = "fuzz" num_samples = ${options.declaredSamples ?? samples} sample_rate = 30 is_binary_exact = false additive_format = "none" }`,
    'settings = { level = "medium" }',
    'bones = [',
    ...boneList,
    ']',
    'tracks = [',
    ...trackList,
    ']',
    '',
  ].join('\n');
}

/** A small glTF document (JSON object) with one buffer (a data: URI unless `glb`). */
interface GltfParts {
  json: Record<string, unknown>;
  bin: Uint8Array;
}

/** Two nodes (a root and a child), one animation moving the child: `times` and VEC3 `values`. */
function gltfParts(
  options: {
    times?: number[];
    values?: number[];
    path?: 'translation' | 'scale';
    nodes?: Record<string, unknown>[];
    animatedNode?: number;
  } = {},
): GltfParts {
  const times = options.times ?? [0, 1 / 30, 2 / 30, 3 / 30];
  const values = options.values ?? times.flatMap((t, k) => [k, 1 + t, 0]);
  const bin = new Uint8Array(4 * (times.length + values.length));
  const view = new DataView(bin.buffer);
  times.forEach((t, i) => view.setFloat32(4 * i, t, true));
  values.forEach((v, i) => view.setFloat32(4 * (times.length + i), v, true));
  const nodes = options.nodes ?? [
    { name: 'root', children: [1] },
    { name: 'child', translation: [0, 1, 0] },
  ];
  return {
    json: {
      asset: { version: '2.0' },
      nodes,
      buffers: [{ byteLength: bin.byteLength }],
      bufferViews: [
        { buffer: 0, byteOffset: 0, byteLength: 4 * times.length },
        { buffer: 0, byteOffset: 4 * times.length, byteLength: 4 * values.length },
      ],
      accessors: [
        { bufferView: 0, componentType: 5126, type: 'SCALAR', count: times.length },
        { bufferView: 1, componentType: 5126, type: 'VEC3', count: values.length / 3 },
      ],
      animations: [
        {
          name: 'move',
          channels: [{ sampler: 0, target: { node: options.animatedNode ?? 1, path: options.path ?? 'translation' } }],
          samplers: [{ input: 0, output: 1, interpolation: 'LINEAR' }],
        },
      ],
    },
    bin,
  };
}

/** `.gltf` bytes with the buffer inlined as a base64 data: URI. */
function gltfBytes(parts: GltfParts): Uint8Array {
  const json = structuredClone(parts.json) as { buffers: { uri?: string }[] };
  json.buffers[0].uri = `data:application/octet-stream;base64,${Buffer.from(parts.bin).toString('base64')}`;
  return new TextEncoder().encode(JSON.stringify(json));
}

/** `.glb` bytes: header, JSON chunk, BIN chunk. */
function glbBytes(parts: GltfParts): Uint8Array {
  const jsonBytes = new TextEncoder().encode(JSON.stringify(parts.json));
  const jsonLength = (jsonBytes.byteLength + 3) & ~3;
  const binLength = (parts.bin.byteLength + 3) & ~3;
  const out = new Uint8Array(12 + 8 + jsonLength + 8 + binLength);
  const view = new DataView(out.buffer);
  view.setUint32(0, 0x46546c67, true);
  view.setUint32(4, 2, true);
  view.setUint32(8, out.byteLength, true);
  view.setUint32(12, jsonLength, true);
  view.setUint32(16, 0x4e4f534a, true);
  out.fill(0x20, 20, 20 + jsonLength);
  out.set(jsonBytes, 20);
  view.setUint32(20 + jsonLength, binLength, true);
  view.setUint32(24 + jsonLength, 0x004e4942, true);
  out.set(parts.bin, 28 + jsonLength);
  return out;
}

/** A pose dump (the `decompress` output) of a 2-bone, 3-sample clip. */
function poseDumpText(overrides: Record<string, unknown> = {}): string {
  const n = 3,
    bones = 2;
  return JSON.stringify({
    bones: ['root', 'child'],
    parents: [-1, 0],
    sampleRate: 30,
    numSamples: n,
    unit: 'cm',
    rotations: Array.from({ length: n * bones }, () => [0, 0, 0, 1]).flat(),
    translations: Array.from({ length: n * bones }, (_, i) => [i, 1, 0]).flat(),
    scales: Array.from({ length: n * bones }, () => [1, 1, 1]).flat(),
    ...overrides,
  });
}

const utf8 = new TextEncoder();

// ---------------------------------------------------------------------------------------

describe('readers fuzz: the valid inputs', () => {
  it('every generator makes a file its reader accepts, through readClips as well', async () => {
    const cases: [string, Uint8Array][] = [
      ['fixture.bvh', utf8.encode(FIXTURE_BVH)],
      ['small.bvh', utf8.encode(bvhText())],
      ['small.acl.sjson', utf8.encode(sjsonText())],
      ['small.gltf', gltfBytes(gltfParts())],
      ['small.glb', glbBytes(gltfParts())],
      ['dump.json', utf8.encode(poseDumpText())],
    ];
    for (const [file, bytes] of cases) {
      const result = await outcome(file, () => readClips(file, bytes), file);
      expect(result.ok, file).toBe(true);
    }
  });
});

describe('readers fuzz: huge declared counts with no data behind them fail fast, before allocating', () => {
  const BUDGET = 1_000_000; // bone samples (40 MB): far above what these few bytes can back

  it('BVH: Frames: 2,000,000,000 / 60,000,000 / 2^53 + 1 over two frame lines', async () => {
    for (const frames of ['2000000000', '60000000', '9007199254740993', '99999999999999999999999']) {
      const text = bvhText({ frames: 2 }).replace('Frames: 2', `Frames: ${frames}`);
      const error = await withBudget(BUDGET, () => expectParseError('huge.bvh', () => readBvh(text, 'huge.bvh')));
      expect([PARSE_ERROR.TRUNCATED, PARSE_ERROR.BAD_VALUE, PARSE_ERROR.LIMIT], error.message).toContain(error.code);
      expect(guard.largest, `Frames: ${frames}`).toBe(0);
    }
  });

  it('BVH: a CHANNELS count of 4294967295, and 10,000 channels on one line', async () => {
    for (const channels of ['4294967295', '10000']) {
      const text = bvhText({ depth: 1 }).replace(/CHANNELS 6/, `CHANNELS ${channels}`);
      await withBudget(BUDGET, () =>
        expectParseError('channels.bvh', () => readBvh(text, 'channels.bvh'), PARSE_ERROR.SYNTAX),
      );
    }
  });

  it('ACL SJSON: num_samples = 1e9 (over the reader limit) with one sample of data is a LIMIT ParseError', async () => {
    await withBudget(BUDGET, () =>
      expectParseError(
        'huge.acl.sjson',
        () => readAclSjson(sjsonText({ samples: 1, bones: 1, declaredSamples: '1000000000' }), 'huge.acl.sjson'),
        PARSE_ERROR.LIMIT,
      ),
    );
  });

  it('ACL SJSON: num_samples = 40,000,000 (under the limit) with one sample of data fails before allocating the clip', async () => {
    // The tracks hold one sample each, which the reader can see before it allocates 1.6 GB.
    await withBudget(BUDGET, () =>
      expectParseError('huge.acl.sjson', () =>
        readAclSjson(sjsonText({ samples: 1, bones: 1, declaredSamples: '40000000' }), 'huge.acl.sjson'),
      ),
    );
  });

  it('ACL SJSON: num_samples 1e300, -1, 0, 2.5 and a bone count × samples over the limit', async () => {
    for (const declared of ['1e300', '-1', '0', '2.5', '1e999']) {
      await withBudget(BUDGET, () =>
        expectParseError('count.acl.sjson', () =>
          readAclSjson(sjsonText({ samples: 1, bones: 1, declaredSamples: declared }), 'count.acl.sjson'),
        ),
      );
    }
    await withBudget(BUDGET, () =>
      expectParseError('wide.acl.sjson', () =>
        readAclSjson(sjsonText({ samples: 1, bones: 100, declaredSamples: '1000000' }), 'wide.acl.sjson'),
      ),
    );
  });

  it('glTF: accessor counts of 0xFFFFFFFF and 2^31 over a 16-byte buffer view', async () => {
    for (const count of [0xffffffff, 2 ** 31, 1e9]) {
      const parts = gltfParts();
      (parts.json.accessors as Record<string, unknown>[])[0].count = count;
      (parts.json.accessors as Record<string, unknown>[])[1].count = count;
      await withBudget(BUDGET, () => expectParseError('count.gltf', () => readGltf(gltfBytes(parts), 'count.gltf')));
      await withBudget(BUDGET, () => expectParseError('count.glb', () => readGltf(glbBytes(parts), 'count.glb')));
    }
  });

  it('glTF: sampler accessors with a huge count and no buffer view at all (no data behind them)', async () => {
    // An accessor without bufferView reads as zeros: 10 million key times (all 0) and values
    // declared by a few hundred bytes. A reader must not decode what no byte backs.
    for (const count of [2 ** 31, 10_000_000]) {
      const parts = gltfParts();
      for (const accessor of parts.json.accessors as Record<string, unknown>[]) {
        delete accessor.bufferView;
        accessor.count = count;
      }
      await withBudget(BUDGET, () =>
        expectParseError('nobuffer.gltf', () => readGltf(gltfBytes(parts), 'nobuffer.gltf')),
      );
    }
  });

  it('glTF: a declared buffer byteLength of 1e12, a buffer view at byte 2^53', async () => {
    const big = gltfParts();
    (big.json.buffers as Record<string, unknown>[])[0].byteLength = 1e12;
    await withBudget(BUDGET, () =>
      expectParseError('buffer.gltf', () => readGltf(gltfBytes(big), 'buffer.gltf'), PARSE_ERROR.TRUNCATED),
    );
    const far = gltfParts();
    (far.json.bufferViews as Record<string, unknown>[])[1].byteOffset = 2 ** 53;
    await withBudget(BUDGET, () => expectParseError('view.gltf', () => readGltf(gltfBytes(far), 'view.gltf')));
  });

  it('glTF: two keys 300 s apart read as a clip sampled at 20 Hz or more', async () => {
    // Sparse keys are sampled at ≥ 30 Hz (readers/resample.ts); a key interval over 200 s must not make the rate 0 or NaN.
    const slow = await withBudget(BUDGET, () =>
      outcome(
        'slow.gltf',
        () => readGltf(gltfBytes(gltfParts({ times: [0, 300], values: [0, 0, 0, 1, 1, 1] })), 'slow.gltf'),
        'slow.gltf',
      ),
    );
    if (!slow.ok) throw new Error(`slow.gltf: ${slow.error.message}`);
    expect(slow.clips[0].sampleRate).toBeGreaterThanOrEqual(20);
  });

  it('glTF: two keys 1e30 s apart are a LIMIT ParseError', async () => {
    const long = gltfParts({ times: [0, 1e30], values: [0, 0, 0, 1, 1, 1] });
    const error = await withBudget(BUDGET, () =>
      expectParseError('long.gltf', () => readGltf(gltfBytes(long), 'long.gltf')),
    );
    expect(error.code, error.message).toBe(PARSE_ERROR.LIMIT);
  });

  it('GLB: a header length past the end, chunk lengths of 0xFFFFFFFF, a first chunk that is not JSON', async () => {
    const glb = glbBytes(gltfParts());
    const patch = (edit: (view: DataView) => void): Uint8Array => {
      const out = glb.slice();
      edit(new DataView(out.buffer));
      return out;
    };
    const jsonLength = new DataView(glb.buffer).getUint32(12, true);
    const cases: [string, Uint8Array][] = [
      ['header length 0xFFFFFFFF', patch((v) => v.setUint32(8, 0xffffffff, true))],
      ['header length 12', patch((v) => v.setUint32(8, 12, true))],
      ['JSON chunk length 0xFFFFFFFF', patch((v) => v.setUint32(12, 0xffffffff, true))],
      ['JSON chunk length 0xFFFFFFF8', patch((v) => v.setUint32(12, 0xfffffff8, true))],
      ['BIN chunk length 0xFFFFFFFF', patch((v) => v.setUint32(20 + jsonLength, 0xffffffff, true))],
      ['first chunk typed BIN', patch((v) => v.setUint32(16, 0x004e4942, true))],
      ['container version 3', patch((v) => v.setUint32(4, 3, true))],
      ['11 bytes', glb.slice(0, 11)],
      ['only the magic', glb.slice(0, 4)],
    ];
    for (const [what, bytes] of cases) {
      await withBudget(BUDGET, () => expectParseError(`${what}.glb`, () => readGltf(bytes, `${what}.glb`)));
    }
  });

  it('pose dump: numSamples 1e9 with three samples of data', async () => {
    await withBudget(BUDGET, () =>
      expectParseError('dump.json', () => readClips('dump.json', utf8.encode(poseDumpText({ numSamples: 1e9 })))),
    );
  });
});

describe('readers fuzz: deep nesting does not blow the stack', () => {
  const DEPTH = 10_000;

  it('BVH: a hierarchy 10,000 joints deep reads as 10,000 bones', async () => {
    const result = await outcome(
      'deep.bvh',
      () => readBvh(bvhText({ depth: DEPTH, frames: 2 }), 'deep.bvh'),
      'deep.bvh',
    );
    expect(result.ok && result.clips[0].skeleton.boneNames.length).toBe(DEPTH);
  });

  it('BVH: the 10,000-bone chain also compresses, and the .bpk opens (no recursion downstream either)', {
    timeout: 120_000,
  }, async () => {
    const result = await outcome(
      'deep.bvh',
      () => readBvh(bvhText({ depth: DEPTH, frames: 3 }), 'deep.bvh'),
      'deep.bvh',
    );
    if (!result.ok) throw new Error(result.error.message);
    const clip = CompressedClip.open(compress(result.clips[0]).bytes);
    expect(clip.boneCount).toBe(DEPTH);
    expect(clip.parents[DEPTH - 1]).toBe(DEPTH - 2);
  });

  it('BVH: 10,000 unclosed joints, and 10,000 nested End Sites, are ParseErrors', async () => {
    const open = ['HIERARCHY', 'ROOT r', '{', 'OFFSET 0 0 0', 'CHANNELS 3 Xrotation Yrotation Zrotation'];
    for (let i = 0; i < DEPTH; i++) open.push(`JOINT j${i}`, '{', 'OFFSET 0 1 0', 'CHANNELS 1 Xrotation');
    await expectParseError('unclosed.bvh', () => readBvh(open.join('\n'), 'unclosed.bvh'), PARSE_ERROR.TRUNCATED);
    const sites = ['HIERARCHY', 'ROOT r', '{', 'OFFSET 0 0 0', 'CHANNELS 3 Xrotation Yrotation Zrotation'];
    for (let i = 0; i < DEPTH; i++) sites.push('End Site', '{');
    await expectParseError('sites.bvh', () => readBvh(sites.join('\n'), 'sites.bvh'));
  });

  it('glTF: a node chain 10,000 deep reads as a 10,000-bone skeleton; a cycle is a ParseError', async () => {
    const nodes = Array.from({ length: DEPTH }, (_, i) => ({
      name: `n${i}`,
      ...(i + 1 < DEPTH ? { children: [i + 1] } : {}),
      translation: [0, 1, 0],
    }));
    const parts = gltfParts({ nodes, animatedNode: DEPTH - 1 });
    const result = await outcome('deep.gltf', () => readGltf(gltfBytes(parts), 'deep.gltf'), 'deep.gltf');
    expect(result.ok && result.clips[0].skeleton.boneNames.length).toBe(DEPTH);
    const cyclic = structuredClone(nodes) as Record<string, unknown>[];
    cyclic[DEPTH - 1].children = [0];
    await expectParseError('cycle.gltf', () =>
      readGltf(gltfBytes(gltfParts({ nodes: cyclic, animatedNode: DEPTH - 1 })), 'cycle.gltf'),
    );
  });

  it('glTF: JSON nested 100,000 deep in extras', async () => {
    const parts = gltfParts();
    const text = new TextDecoder()
      .decode(gltfBytes(parts))
      .replace('"asset":{', `"extras":${'['.repeat(100_000)}${']'.repeat(100_000)},"asset":{`);
    await outcome('nested.gltf', () => readGltf(utf8.encode(text), 'nested.gltf'), 'nested.gltf');
  });

  it('ACL SJSON: values nested 10,000 deep are a ParseError; a bone chain 10,000 deep reads', async () => {
    for (const [open, close] of [
      ['[', ']'],
      ['{ a = ', '}'],
    ]) {
      const text = sjsonText().replace(
        'settings = { level = "medium" }',
        `settings = { deep = ${open.repeat(DEPTH)}1${close.repeat(DEPTH)} }`,
      );
      await expectParseError('nested.acl.sjson', () => readAclSjson(text, 'nested.acl.sjson'), PARSE_ERROR.LIMIT);
    }
    const result = await outcome(
      'chain.acl.sjson',
      () => readAclSjson(sjsonText({ bones: DEPTH, samples: 1 }), 'chain.acl.sjson'),
      'chain.acl.sjson',
    );
    expect(result.ok && result.clips[0].skeleton.boneNames.length).toBe(DEPTH);
  });

  it('pose dump: JSON nested 100,000 deep', async () => {
    const text = poseDumpText().replace('{', `{"extra":${'['.repeat(100_000)}${']'.repeat(100_000)},`);
    await outcome('nested.json', () => readClips('nested.json', utf8.encode(text)), 'nested.json');
  });
});

describe('readers fuzz: 100,000-joint chains stop at the .bpk bone limit, within the case budget', () => {
  const CHAIN = 100_000;

  it('BVH: a LIMIT ParseError at the line of joint 32,768; a chain of exactly 32,767 reads', {
    timeout: 60_000,
  }, async () => {
    const e = await expectParseError(
      'chain.bvh',
      () => readBvh(bvhText({ depth: CHAIN, frames: 2 }), 'chain.bvh'),
      PARSE_ERROR.LIMIT,
    );
    // HIERARCHY is line 1 and each joint takes four lines (name, "{", OFFSET, CHANNELS).
    expect(e.line).toBe(2 + 4 * MAX_BONES);
    expect(e.problem).toBe(`more than ${MAX_BONES} bones (a .bpk clip holds at most ${MAX_BONES})`);
    const atLimit = await outcome(
      'limit.bvh',
      () => readBvh(bvhText({ depth: MAX_BONES, frames: 2 }), 'limit.bvh'),
      'limit.bvh',
    );
    expect(atLimit.ok && atLimit.clips[0].skeleton.boneNames.length).toBe(MAX_BONES);
  });

  it('glTF: a LIMIT ParseError for a 100,000-node chain; a 100,000-node chain moving only its root reads; a cycle is found', {
    timeout: 60_000,
  }, async () => {
    const nodes = Array.from({ length: CHAIN }, (_, i) => ({
      name: `n${i}`,
      ...(i + 1 < CHAIN ? { children: [i + 1] } : {}),
      translation: [0, 1, 0],
    }));
    const e = await expectParseError(
      'chain.gltf',
      () => readGltf(gltfBytes(gltfParts({ nodes, animatedNode: CHAIN - 1 })), 'chain.gltf'),
      PARSE_ERROR.LIMIT,
    );
    expect(e.problem).toBe(`more than ${MAX_BONES} bones (a .bpk clip holds at most ${MAX_BONES})`);
    // Only the skeleton's nodes reach glTF-Transform: the other 99,999 cost nothing there.
    const root = await outcome(
      'root.gltf',
      () => readGltf(gltfBytes(gltfParts({ nodes, animatedNode: 0 })), 'root.gltf'),
      'root.gltf',
    );
    expect(root.ok && root.clips[0].skeleton.boneNames).toEqual(['n0']);
    const cyclic = nodes.map((n) => ({ ...n }));
    cyclic[CHAIN - 1] = { ...cyclic[CHAIN - 1], children: [0] };
    const cycle = await expectParseError('cycle.gltf', () =>
      readGltf(gltfBytes(gltfParts({ nodes: cyclic, animatedNode: 1 })), 'cycle.gltf'),
    );
    expect(cycle.problem).toMatch(/is its own ancestor \(the node hierarchy has a cycle\)$/);
  });

  it('ACL SJSON: a LIMIT ParseError at the line and column of bone 32,768, before the tracks are parsed', {
    timeout: 60_000,
  }, async () => {
    const e = await expectParseError(
      'chain.acl.sjson',
      () => readAclSjson(sjsonText({ bones: CHAIN, samples: 2 }), 'chain.acl.sjson'),
      PARSE_ERROR.LIMIT,
    );
    // Bone i is on line 5 + i, indented by two spaces.
    expect([e.line, e.column]).toEqual([5 + MAX_BONES, 3]);
  });
});

describe('readers fuzz: duplicate bone names', () => {
  it('BVH: a repeated joint name is a ParseError naming both lines', async () => {
    const error = await expectParseError(
      'dup.bvh',
      () => readBvh(bvhText({ names: (i) => (i === 2 ? 'j0' : `j${i}`) }), 'dup.bvh'),
      PARSE_ERROR.SYNTAX,
    );
    expect(error.problem).toMatch(/duplicate bone name "j0"/);
  });

  it('ACL SJSON: a repeated bone name is a ParseError', async () => {
    await expectParseError('dup.acl.sjson', () =>
      readAclSjson(sjsonText({ names: (i) => (i === 2 ? 'b0' : `b${i}`) }), 'dup.acl.sjson'),
    );
  });

  it('glTF: repeated node names become unique bone names', async () => {
    const nodes = [
      { name: 'same', children: [1] },
      { name: 'same', children: [2] },
      { name: 'same', translation: [0, 1, 0] },
    ];
    const result = await outcome(
      'dup.gltf',
      () => readGltf(gltfBytes(gltfParts({ nodes, animatedNode: 2 })), 'dup.gltf'),
      'dup.gltf',
    );
    expect(result.ok && result.clips[0].skeleton.boneNames.length).toBe(3);
  });

  it('pose dump: repeated bone names are a ParseError or unique in the clip', async () => {
    await outcome(
      'dup.json',
      () => readClips('dup.json', utf8.encode(poseDumpText({ bones: ['same', 'same'] }))),
      'dup.json',
    );
  });
});

describe('readers fuzz: NaN and Infinity in any track', () => {
  const HOSTILE_NUMBERS = [
    'nan',
    'NaN',
    '-nan',
    'inf',
    'Infinity',
    '-Infinity',
    '1e999',
    '-1e999',
    '1e309',
    '0x7ff80000',
  ];

  it('BVH: in every channel of a frame, in an OFFSET and in the Frame Time', async () => {
    const depth = 2,
      channels = 6 + 3 * (depth - 1);
    for (const bad of HOSTILE_NUMBERS) {
      for (let c = 0; c < channels; c++) {
        const text = bvhText({ depth, frames: 3, value: (f, ch) => (f === 1 && ch === c ? bad : '1') });
        await expectParseError('nan.bvh', () => readBvh(text, 'nan.bvh'), PARSE_ERROR.BAD_VALUE);
      }
      await expectParseError(
        'nan.bvh',
        () => readBvh(bvhText({ depth }).replace('OFFSET 0 10 0', `OFFSET 0 ${bad} 0`), 'nan.bvh'),
        PARSE_ERROR.BAD_VALUE,
      );
      await expectParseError(
        'nan.bvh',
        () => readBvh(bvhText({ depth }).replace('Frame Time: 0.0333333', `Frame Time: ${bad}`), 'nan.bvh'),
        PARSE_ERROR.BAD_VALUE,
      );
    }
    // Finite in float64 but not in float32.
    await expectParseError(
      'f32.bvh',
      () => readBvh(bvhText({ value: (f, c) => (f === 0 && c === 1 ? '1e39' : '0') }), 'f32.bvh'),
      PARSE_ERROR.BAD_VALUE,
    );
  });

  it('ACL SJSON: as numbers, bare words and binary-exact hex, in every track kind and bind value', async () => {
    const nanHex = '7ff8000000000000',
      infHex = '7ff0000000000000';
    for (const bad of [...HOSTILE_NUMBERS, '"nan"']) {
      await expectParseError('nan.acl.sjson', () =>
        readAclSjson(sjsonText({ rotation: `[ 0, ${bad}, 0, 1 ]` }), 'nan.acl.sjson'),
      );
      await expectParseError('nan.acl.sjson', () =>
        readAclSjson(sjsonText().replace('bind_scale = [ 1, 1, 1 ]', `bind_scale = [ 1, ${bad}, 1 ]`), 'nan.acl.sjson'),
      );
      await expectParseError('nan.acl.sjson', () =>
        readAclSjson(sjsonText().replace('[ 0.001, 0, 0 ]', `[ ${bad}, 0, 0 ]`), 'nan.acl.sjson'),
      );
    }
    for (const hex of [nanHex, infHex, 'fff0000000000000']) {
      const text = sjsonText({ rotation: `[ "0", "${hex}", "0", "3ff0000000000000" ]` }).replace(
        'is_binary_exact = false',
        'is_binary_exact = true',
      );
      await expectParseError('hex.acl.sjson', () => readAclSjson(text, 'hex.acl.sjson'));
    }
    await expectParseError('zero.acl.sjson', () =>
      readAclSjson(sjsonText({ rotation: '[ 0, 0, 0, 0 ]' }), 'zero.acl.sjson'),
    );
  });

  it('glTF: NaN and ±Infinity in key times and in translation/rotation/scale values; 1e400 in a rest transform', async () => {
    for (const bad of [Number.NaN, Infinity, -Infinity]) {
      for (let i = 0; i < 4; i++) {
        const times = [0, 1 / 30, 2 / 30, 3 / 30];
        times[i] = bad;
        await expectParseError('nan.gltf', () => readGltf(gltfBytes(gltfParts({ times })), 'nan.gltf'));
      }
      for (const path of ['translation', 'scale'] as const) {
        for (let i = 0; i < 12; i += 5) {
          const values = Array.from({ length: 12 }, (_, k) => (k % 3) + 1);
          values[i] = bad;
          await expectParseError('nan.glb', () => readGltf(glbBytes(gltfParts({ values, path })), 'nan.glb'));
        }
      }
    }
    const text = new TextDecoder()
      .decode(gltfBytes(gltfParts()))
      .replace('"translation":[0,1,0]', '"translation":[0,1e400,0]');
    await expectParseError('rest.gltf', () => readGltf(utf8.encode(text), 'rest.gltf'));
    // Rotations: a NaN in a VEC4 output.
    const rotation = gltfParts();
    const bin = new Uint8Array(4 * (4 + 16));
    const view = new DataView(bin.buffer);
    [0, 1 / 30, 2 / 30, 3 / 30].forEach((t, i) => view.setFloat32(4 * i, t, true));
    for (let k = 0; k < 4; k++) view.setFloat32(16 + 16 * k + 12, k === 2 ? Number.NaN : 1, true);
    rotation.bin = bin;
    (rotation.json.buffers as Record<string, unknown>[])[0].byteLength = bin.byteLength;
    (rotation.json.bufferViews as Record<string, unknown>[])[1].byteLength = 64;
    (rotation.json.accessors as Record<string, unknown>[])[1].type = 'VEC4';
    (rotation.json.accessors as Record<string, unknown>[])[1].count = 4;
    (rotation.json.animations as { channels: { target: { path: string } }[] }[])[0].channels[0].target.path =
      'rotation';
    await expectParseError('nanrot.glb', () => readGltf(glbBytes(rotation), 'nanrot.glb'));
  });

  it('pose dump: 1e999 (Infinity once parsed) is a ParseError', async () => {
    const text = poseDumpText().replace('"translations":[0,', '"translations":[1e999,');
    await expectParseError('inf.json', () => readClips('inf.json', utf8.encode(text)));
  });

  it('pose dump: zero quaternions are a ParseError, not a clip that validateRawClip rejects', async () => {
    await expectParseError('zero.json', () =>
      readClips('zero.json', utf8.encode(poseDumpText({ rotations: new Array(24).fill(0) }))),
    );
  });
});

// ---------------------------------------------------------------------------------------
// Random mutations.

/** Splits text into tokens and the separators between them (kept, so joining restores the text). */
function tokenize(text: string, separators: RegExp): string[] {
  return text.split(separators).filter((t) => t !== '');
}

const HOSTILE_TOKENS = [
  '',
  ' ',
  '\n',
  '{',
  '}',
  '[',
  ']',
  '=',
  ':',
  ',',
  '"',
  'ROOT',
  'JOINT',
  'End',
  'Site',
  'OFFSET',
  'CHANNELS',
  'MOTION',
  'HIERARCHY',
  'Frames:',
  'Frame',
  'Time:',
  '0',
  '-0',
  '1',
  '-1',
  '3',
  '6',
  '9',
  '10',
  '0.0333333',
  '1e999',
  '-1e999',
  'nan',
  'inf',
  '1e-320',
  '4294967295',
  '18446744073709551616',
  '9'.repeat(400),
  'Xrotation',
  'Zposition',
  '\u0000',
  '\ufeff',
  'é',
  '//',
  '/*',
  'true',
  'null',
  'version',
  'num_samples',
  'parent',
  '"b0"',
  '0x10',
  '+5',
  '.',
  'e5',
  '5e',
  '--1',
];

/** 1–4 edits on a token list: delete, duplicate, replace with a hostile or another token, swap, or cut the text. */
const tokenEdits = fc.array(
  fc.record({
    how: fc.constantFrom('delete', 'duplicate', 'replace', 'hostile', 'swap', 'cut'),
    at: fc.nat(),
    other: fc.nat(),
    token: fc.constantFrom(...HOSTILE_TOKENS),
  }),
  { minLength: 1, maxLength: 4 },
);

function mutateTokens(
  tokens: readonly string[],
  edits: { how: string; at: number; other: number; token: string }[],
): string {
  const out = [...tokens];
  for (const e of edits) {
    if (out.length === 0) break;
    const i = e.at % out.length,
      j = e.other % out.length;
    switch (e.how) {
      case 'delete':
        out.splice(i, 1);
        break;
      case 'duplicate':
        out.splice(i, 0, out[i]);
        break;
      case 'replace':
        out[i] = out[j];
        break;
      case 'hostile':
        out[i] = e.token;
        break;
      case 'swap':
        [out[i], out[j]] = [out[j], out[i]];
        break;
      default:
        out.length = i;
        break;
    }
  }
  return out.join('');
}

describe('readers fuzz: random mutations', () => {
  const bvhTokens = tokenize(FIXTURE_BVH, /(\s+|[{}])/);
  const smallBvhTokens = tokenize(bvhText({ depth: 3, frames: 5 }), /(\s+|[{}])/);
  const sjsonTokens = tokenize(sjsonText(), /(\s+|[{}[\]=:,"])/);
  const gltfTokens = tokenize(new TextDecoder().decode(gltfBytes(gltfParts())), /([{}[\]:,"])/);
  const dumpTokens = tokenize(poseDumpText(), /([{}[\]:,"])/);
  const glb = glbBytes(gltfParts());

  it('a fixture BVH with tokens deleted, duplicated, replaced, swapped or cut: a ParseError or a valid clip', {
    timeout: TIMEOUT_MS,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(tokenEdits, async (edits) => {
        const text = mutateTokens(bvhTokens, edits);
        await outcome(
          'fixture.bvh',
          () => readClips('fixture.bvh', utf8.encode(text)),
          `fixture.bvh edits ${JSON.stringify(edits)}`,
        );
      }),
      params(1),
    );
  });

  it('a small BVH mutated, then compressed and reopened: only typed errors, every written clip opens', {
    timeout: TIMEOUT_MS,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(tokenEdits, async (edits) => {
        const text = mutateTokens(smallBvhTokens, edits);
        const context = `small.bvh edits ${JSON.stringify(edits)}`;
        const result = await outcome('small.bvh', () => readBvh(text, 'small.bvh'), context);
        if (!result.ok || result.clips[0].sampleCount * result.clips[0].skeleton.boneNames.length > 5000) return;
        let bytes: Uint8Array;
        try {
          bytes = compress(result.clips[0], { error: '0.1cm' }).bytes;
        } catch (error) {
          throw new Error(`${context}: compress() of a clip the reader accepted threw ${(error as Error).stack}`);
        }
        const clip = CompressedClip.open(bytes);
        expect(clip.boneCount).toBe(result.clips[0].skeleton.boneNames.length);
      }),
      params(2, Math.max(50, Math.floor(READER_RUNS / 3))),
    );
  });

  it('an ACL SJSON clip mutated: a ParseError or a valid clip', { timeout: TIMEOUT_MS }, async () => {
    await fc.assert(
      fc.asyncProperty(tokenEdits, async (edits) => {
        const text = mutateTokens(sjsonTokens, edits);
        await outcome(
          'm.acl.sjson',
          () => readClips('m.acl.sjson', utf8.encode(text)),
          `m.acl.sjson edits ${JSON.stringify(edits)}`,
        );
      }),
      params(3),
    );
  });

  it('a glTF JSON mutated: a ParseError or valid clips', { timeout: TIMEOUT_MS }, async () => {
    await fc.assert(
      fc.asyncProperty(tokenEdits, async (edits) => {
        const text = mutateTokens(gltfTokens, edits);
        await outcome('m.gltf', () => readClips('m.gltf', utf8.encode(text)), `m.gltf edits ${JSON.stringify(edits)}`);
      }),
      params(4),
    );
  });

  it('a GLB with random bytes set (header, JSON and BIN chunks): a ParseError or valid clips', {
    timeout: TIMEOUT_MS,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 6 }),
        fc.option(fc.nat(), { nil: undefined }),
        async (edits, cut) => {
          let bytes = glb.slice();
          for (const e of edits) bytes[e.at % bytes.byteLength] = e.value;
          if (cut !== undefined) bytes = bytes.slice(0, cut % bytes.byteLength);
          await outcome('m.glb', () => readClips('m.glb', bytes), `m.glb edits ${JSON.stringify(edits)} cut ${cut}`);
        },
      ),
      params(5),
    );
  });

  it('a pose dump mutated: a ParseError or a valid clip', { timeout: TIMEOUT_MS }, async () => {
    await fc.assert(
      fc.asyncProperty(tokenEdits, async (edits) => {
        const text = mutateTokens(dumpTokens, edits);
        await outcome('m.json', () => readClips('m.json', utf8.encode(text)), `m.json edits ${JSON.stringify(edits)}`);
      }),
      params(6),
    );
  });

  it('random bytes under every supported name: a ParseError or valid clips', { timeout: TIMEOUT_MS }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('r.bvh', 'r.gltf', 'r.glb', 'r.acl.sjson', 'r.sjson', 'r.json', 'r.txt'),
        fc.oneof(
          fc.uint8Array({ maxLength: 512 }),
          fc.string({ maxLength: 256 }).map((s) => utf8.encode(s)),
        ),
        async (file, bytes) => {
          await outcome(file, () => readClips(file, bytes), `${file}: ${bytes.byteLength} random bytes`);
        },
      ),
      params(7),
    );
  });
});
