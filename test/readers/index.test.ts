import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { beforeEach, describe, expect, it, vi } from 'vitest';

import { PoseDumpError, writePoseDump } from '../../src/readers/pose-dump.js';
import { ParseError, readBvh, readClips, SUPPORTED_EXTENSIONS } from '../../src/readers/index.js';

// The glTF and SJSON readers are another module's business: stand-ins record the dispatch.
// vi.hoisted: vi.mock factories run before this module's own declarations.
const { gltfCalls, sjsonCalls } = vi.hoisted(() => ({
  gltfCalls: [] as { file: string; bytes: Uint8Array }[],
  sjsonCalls: [] as { file: string; text: string }[],
}));
vi.mock('../../src/readers/gltf.js', () => ({
  readGltf: async (bytes: Uint8Array, file: string) => {
    gltfCalls.push({ file, bytes });
    return [{ name: 'from-gltf' }];
  },
}));
vi.mock('../../src/readers/acl-sjson.js', () => ({
  readAclSjson: (text: string, file: string) => {
    sjsonCalls.push({ file, text });
    return { name: 'from-sjson' };
  },
}));

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bvhPath = path.join(repoRoot, 'fixtures/dataset-1_dash_normal_001.bvh');
const bvhBytes = new Uint8Array(readFileSync(bvhPath));
const encode = (text: string) => new TextEncoder().encode(text);

async function rejection(promise: Promise<unknown>): Promise<ParseError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ParseError);
  return error as ParseError;
}

describe('readClips', () => {
  beforeEach(() => {
    gltfCalls.length = 0;
    sjsonCalls.length = 0;
  });

  it('reads .bvh (any case) with the BVH reader, passing options', async () => {
    const clips = await readClips('clips/DASH.BVH', bvhBytes, { unit: 'm' });
    expect(clips).toHaveLength(1);
    expect(clips[0].name).toBe('DASH');
    expect(clips[0].unit).toBe('m');
    const direct = readBvh(new TextDecoder().decode(bvhBytes), 'x.bvh');
    expect(clips[0].rotations).toEqual(direct.rotations);
  });

  it('drops a UTF-8 BOM from text formats', async () => {
    const withBom = new Uint8Array([0xef, 0xbb, 0xbf, ...bvhBytes]);
    const [clip] = await readClips('dash.bvh', withBom);
    expect(clip.skeleton.boneNames[0]).toBe('joint_Root');
  });

  it('sends .gltf and .glb to the glTF reader', async () => {
    await readClips('scene.gltf', encode('{}'));
    await readClips('scene.GLB', new Uint8Array([1, 2, 3, 4]));
    expect(gltfCalls.map((c) => c.file)).toEqual(['scene.gltf', 'scene.GLB']);
  });

  it('sniffs GLB bytes whatever the name', async () => {
    const glb = new Uint8Array([0x67, 0x6c, 0x54, 0x46, 2, 0, 0, 0]);
    const clips = await readClips('download.bin', glb);
    expect(clips).toEqual([{ name: 'from-gltf' }]);
    expect(gltfCalls[0].bytes).toBe(glb);
    // Even a misleading name: the magic wins.
    await readClips('walk.bvh', glb);
    expect(gltfCalls).toHaveLength(2);
  });

  it('sends .acl.sjson and .sjson to the SJSON reader as text', async () => {
    await readClips('a.acl.sjson', encode('version = 5'));
    await readClips('b.sjson', encode('clip = {}'));
    expect(sjsonCalls).toEqual([
      { file: 'a.acl.sjson', text: 'version = 5' },
      { file: 'b.sjson', text: 'clip = {}' },
    ]);
  });

  it('reads .json as a pose dump', async () => {
    const source = readBvh(new TextDecoder().decode(bvhBytes), 'dash.bvh');
    const [clip] = await readClips('dash.json', encode(writePoseDump(source)));
    expect(clip.skeleton.boneNames).toEqual(source.skeleton.boneNames);
    expect(clip.rotations).toEqual(source.rotations);
    expect(clip.unit).toBe('cm');
  });

  it('reports a bad pose dump as a ParseError caused by the PoseDumpError', async () => {
    const error = await rejection(readClips('bad.json', encode('{"bones": []}')));
    expect(error.code).toBe('BAD_VALUE');
    expect(error.file).toBe('bad.json');
    expect(error.message).toBe('bad.json: "bones" must be a non-empty array of names');
    expect(error.cause).toBeInstanceOf(PoseDumpError);
  });

  it('passes BVH parse errors through', async () => {
    const error = await rejection(readClips('broken.bvh', encode('HIERARCHY\nROOT a\n{\n')));
    expect(error.code).toBe('TRUNCATED');
    expect(error.line).toBe(3);
  });

  it('rejects an unknown extension, listing the supported ones', async () => {
    const error = await rejection(readClips('walk.fbx', encode('Kaydara FBX Binary')));
    expect(error.code).toBe('UNSUPPORTED');
    expect(error.file).toBe('walk.fbx');
    for (const ext of SUPPORTED_EXTENSIONS) expect(error.message).toContain(ext);
    expect(gltfCalls).toHaveLength(0);
    expect(sjsonCalls).toHaveLength(0);
  });
});
