import { readFileSync } from 'node:fs';

import { Document, WebIO, type Node } from '@gltf-transform/core';
import { beforeAll, describe, expect, it } from 'vitest';

import type { RawClip } from '../../src/clip/raw-clip.js';
import { measureClipError } from '../../src/metric/error-metric.js';
import { readBvh } from '../../src/readers/bvh.js';
import { readGltf, readGltfWithWarnings } from '../../src/readers/gltf.js';
import { clipToDocument } from '../utils/gltf.js';
import { glbOf } from '../utils/glb.js';
import { parseError } from '../utils/errors.js';

const FIXTURE = 'fixtures/dataset-1_dash_normal_001.bvh';
const io = new WebIO();
const utf8 = new TextEncoder();

interface TrackSpec {
  node: number;
  path: 'rotation' | 'translation' | 'scale' | 'weights';
  times: number[];
  values: number[];
  interpolation?: 'STEP' | 'LINEAR' | 'CUBICSPLINE';
}

/** A small document: nodes (name, parent) and one animation per entry of `animations`. */
function handDocument(
  bones: [string, number][],
  animations: { name?: string; tracks: TrackSpec[] }[],
): { doc: Document; nodes: Node[] } {
  const doc = new Document();
  const buffer = doc.createBuffer();
  const scene = doc.createScene();
  const nodes = bones.map(([name]) => doc.createNode(name));
  bones.forEach(([, parent], i) => (parent < 0 ? scene.addChild(nodes[i]) : nodes[parent].addChild(nodes[i])));
  for (const spec of animations) {
    const anim = doc.createAnimation(spec.name ?? '');
    for (const t of spec.tracks) {
      const type = t.path === 'rotation' ? 'VEC4' : t.path === 'weights' ? 'SCALAR' : 'VEC3';
      const input = doc.createAccessor().setType('SCALAR').setArray(Float32Array.from(t.times)).setBuffer(buffer);
      const output = doc.createAccessor().setType(type).setArray(Float32Array.from(t.values)).setBuffer(buffer);
      const sampler = doc
        .createAnimationSampler()
        .setInput(input)
        .setOutput(output)
        .setInterpolation(t.interpolation ?? 'LINEAR');
      anim
        .addSampler(sampler)
        .addChannel(
          doc.createAnimationChannel().setTargetNode(nodes[t.node]).setTargetPath(t.path).setSampler(sampler),
        );
    }
  }
  return { doc, nodes };
}

/** `.gltf` JSON bytes and the external resources of `doc`. */
async function toGltf(
  doc: Document,
  basename = 'walk',
): Promise<{ json: Record<string, any>; bytes: Uint8Array; resources: Record<string, Uint8Array> }> {
  const { json, resources } = await io.writeJSON(doc, { format: 'GLTF' as never, basename });
  return { json: json as Record<string, any>, bytes: utf8.encode(JSON.stringify(json)), resources };
}

/** Sample s of one bone's track, as a plain array. */
function sampleOf(clip: RawClip, path: 'rotation' | 'translation' | 'scale', bone: number, s: number): number[] {
  const width = path === 'rotation' ? 4 : 3;
  const src = path === 'rotation' ? clip.rotations : path === 'translation' ? clip.translations : clip.scales;
  const i = (bone * clip.sampleCount + s) * width;
  return Array.from(src.subarray(i, i + width));
}

let source: RawClip;
beforeAll(() => {
  source = readBvh(readFileSync(FIXTURE, 'utf8'), FIXTURE);
});

describe('readGltf: round trips of a BVH fixture', () => {
  it('reads a GLB written by glTF-Transform back within 1e-5 cm of the source', async () => {
    const { doc } = clipToDocument(source, ['dash']);
    const glb = await io.writeBinary(doc);
    const clips = await readGltf(glb, 'dash.glb', { unit: 'cm' });
    expect(clips).toHaveLength(1);
    const clip = clips[0];
    expect(clip.name).toBe('dash');
    expect(clip.sampleRate).toBe(30);
    expect(clip.sampleCount).toBe(source.sampleCount);
    expect(clip.unit).toBe('cm');
    expect(clip.skeleton.boneNames).toEqual(source.skeleton.boneNames);
    expect(Array.from(clip.skeleton.parents)).toEqual(Array.from(source.skeleton.parents));
    expect(Array.from(clip.skeleton.defaultPose)).toEqual(Array.from(source.skeleton.defaultPose));
    expect(measureClipError(source, clip).maxError).toBeLessThan(1e-5);
  });

  it('reads a .gltf with an external .bin from `resources`, from `loadResource`, and as a data: URI', async () => {
    const { doc } = clipToDocument(source);
    const { json, bytes, resources } = await toGltf(doc, 'dash');
    expect(Object.keys(resources)).toEqual(['dash.bin']);

    const a = await readGltf(bytes, 'dash.gltf', { unit: 'cm', resources });
    expect(measureClipError(source, a[0]).maxError).toBeLessThan(1e-5);

    const asked: string[] = [];
    const b = await readGltf(bytes, 'dash.gltf', {
      unit: 'cm',
      loadResource: (uri) => {
        asked.push(uri);
        return resources[uri];
      },
    });
    expect(asked).toEqual(['dash.bin']);
    expect(measureClipError(source, b[0]).maxError).toBeLessThan(1e-5);

    json.buffers[0].uri = `data:application/octet-stream;base64,${Buffer.from(resources['dash.bin']).toString('base64')}`;
    const c = await readGltf(utf8.encode(JSON.stringify(json)), 'dash.gltf', { unit: 'cm' });
    expect(measureClipError(source, c[0]).maxError).toBeLessThan(1e-5);
  });

  it('reads metres by default and two animations as two clips, naming unnamed ones by index', async () => {
    const { doc } = clipToDocument(source, ['dash', '']);
    const clips = await readGltf(await io.writeBinary(doc), 'two.glb');
    expect(clips.map((c) => c.name)).toEqual(['dash', 'animation_1']);
    expect(clips[0].unit).toBe('m');
    expect(clips[0].skeleton).toBe(clips[1].skeleton);
  });
});

describe('readGltf: interpolation and timing', () => {
  it('resamples STEP keys to the held values', async () => {
    const { doc } = handDocument(
      [['root', -1]],
      [
        {
          name: 'step',
          tracks: [
            {
              node: 0,
              path: 'translation',
              interpolation: 'STEP',
              times: [0, 0.5, 1],
              values: [0, 0, 0, 1, 10, 0, 2, 20, 0],
            },
          ],
        },
      ],
    );
    const [clip] = await readGltf(await io.writeBinary(doc), 'step.glb', { sampleRate: 4 });
    expect(clip.sampleCount).toBe(5);
    expect([0, 1, 2, 3, 4].map((s) => sampleOf(clip, 'translation', 0, s))).toEqual([
      [0, 0, 0],
      [0, 0, 0],
      [1, 10, 0],
      [1, 10, 0],
      [2, 20, 0],
    ]);
  });

  it('resamples CUBICSPLINE keys along the Hermite curve, at ≥ 30 Hz when keys are sparse', async () => {
    // x: keys at 0 and 2 s, (in, value, out) = (0, 0, 3) and (0, 2, 0); y and z stay 0.
    const values = [0, 0, 0, 0, 0, 0, 3, 0, 0, /**/ 0, 0, 0, 2, 0, 0, 0, 0, 0];
    const { doc } = handDocument(
      [['root', -1]],
      [
        {
          name: 'curve',
          tracks: [{ node: 0, path: 'translation', interpolation: 'CUBICSPLINE', times: [0, 2], values }],
        },
      ],
    );
    const glb = await io.writeBinary(doc);
    const [clip] = await readGltf(glb, 'curve.glb', { sampleRate: 2 });
    // Hand-computed: alpha 0.25 → 0.28125·3 + 0.15625·2; alpha 0.5 → 0.25·3 + 0.5·2.
    expect(clip.sampleCount).toBe(5);
    expect(sampleOf(clip, 'translation', 0, 1)[0]).toBeCloseTo(1.15625, 5);
    expect(sampleOf(clip, 'translation', 0, 2)[0]).toBeCloseTo(1.75, 5);
    expect(sampleOf(clip, 'translation', 0, 4)[0]).toBe(2);
    const [detected] = await readGltf(glb, 'curve.glb');
    expect(detected.sampleRate).toBe(30); // 0.5 Hz keys → multiplied up to 30 Hz
    expect(detected.sampleCount).toBe(61);
    expect(sampleOf(detected, 'translation', 0, 30)[0]).toBeCloseTo(1.75, 5);
  });

  it('normalises CUBICSPLINE rotations', async () => {
    const s = Math.SQRT1_2;
    const values = [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, /**/ 0, 0, 1, 0, 0, 0, s, s, 0, 0, 0, 0];
    const { doc } = handDocument(
      [['root', -1]],
      [{ name: 'spin', tracks: [{ node: 0, path: 'rotation', interpolation: 'CUBICSPLINE', times: [0, 1], values }] }],
    );
    const [clip] = await readGltf(await io.writeBinary(doc), 'spin.glb', { sampleRate: 10 });
    for (let i = 0; i < clip.sampleCount; i++)
      expect(Math.hypot(...sampleOf(clip, 'rotation', 0, i))).toBeCloseTo(1, 6);
  });

  it('resamples non-uniform key times and says that keys fall between samples', async () => {
    const { doc } = handDocument(
      [['root', -1]],
      [
        {
          name: 'uneven',
          tracks: [
            { node: 0, path: 'translation', times: [0, 0.1, 0.37, 1], values: [0, 0, 0, 1, 0, 0, 6, 0, 0, 6, 13, 0] },
          ],
        },
      ],
    );
    const { clips, warnings } = await readGltfWithWarnings(await io.writeBinary(doc), 'uneven.glb', { sampleRate: 20 });
    const [clip] = clips;
    expect(clip.sampleCount).toBe(21);
    expect(sampleOf(clip, 'translation', 0, 2)[0]).toBe(1); // t = 0.1, a key
    expect(sampleOf(clip, 'translation', 0, 4)[0]).toBeCloseTo(1 + (5 * 0.1) / 0.27, 5); // t = 0.2, between keys 1 and 2
    expect(sampleOf(clip, 'translation', 0, 10)[1]).toBeCloseTo((13 * 0.13) / 0.63, 5); // t = 0.5, between keys 2 and 3
    expect(warnings.some((w) => /1 of 4 keys fall between samples at 20 Hz/.test(w))).toBe(true);
    // Intervals 0.1, 0.27, 0.63 s lie on no grid: without a rate the keys keep their own times.
    const [detected] = await readGltf(await io.writeBinary(doc), 'uneven.glb');
    expect(Array.from(detected.sampleTimes!)).toEqual([0, 0.1, 0.37, 1].map(Math.fround));
    expect([0, 1, 2, 3].map((s) => sampleOf(detected, 'translation', 0, s))).toEqual([
      [0, 0, 0],
      [1, 0, 0],
      [6, 0, 0],
      [6, 13, 0],
    ]);
  });

  it('starts the clip at the earliest key and keeps rest values of bones without channels', async () => {
    const { doc, nodes } = handDocument(
      [
        ['root', -1],
        ['arm', 0],
      ],
      [
        {
          name: 'late',
          tracks: [{ node: 0, path: 'translation', times: [1, 2], values: [0, 0, 0, 3, 0, 0] }],
        },
      ],
    );
    nodes[1].setTranslation([0, 5, 0]).setRotation([0, 0, Math.SQRT1_2, Math.SQRT1_2]);
    const [clip] = await readGltf(await io.writeBinary(doc), 'late.glb', { sampleRate: 3 });
    expect(clip.sampleCount).toBe(4);
    expect(sampleOf(clip, 'translation', 0, 3)).toEqual([3, 0, 0]);
    // Without skins, the skeleton is the animated node and its ancestors, and of the nodes
    // it carries those with a mesh or camera below them (arm has none).
    expect(clip.skeleton.boneNames).toEqual(['root']);
  });
});

describe('readGltf: skeleton and warnings', () => {
  it('uses skin joints plus their ancestors, and reports channels outside the skeleton and morph weights', async () => {
    const { doc, nodes } = clipToDocument(source, ['dash']);
    const armature = doc.createNode('Armature').setScale([0.01, 0.01, 0.01]);
    const scene = doc.getRoot().listScenes()[0];
    scene.removeChild(nodes[0]);
    armature.addChild(nodes[0]);
    scene.addChild(armature);
    const prop = doc.createNode('Prop');
    scene.addChild(prop);
    const anim = doc.getRoot().listAnimations()[0];
    const buffer = doc.getRoot().listBuffers()[0];
    const times = doc
      .createAccessor()
      .setType('SCALAR')
      .setArray(Float32Array.from([0, 1]))
      .setBuffer(buffer);
    const out = doc.createAccessor().setType('VEC3').setArray(new Float32Array(6)).setBuffer(buffer);
    const sampler = doc.createAnimationSampler().setInput(times).setOutput(out);
    anim
      .addSampler(sampler)
      .addChannel(doc.createAnimationChannel().setTargetNode(prop).setTargetPath('translation').setSampler(sampler));
    const weights = doc
      .createAccessor()
      .setType('SCALAR')
      .setArray(Float32Array.from([0, 1]))
      .setBuffer(buffer);
    const morph = doc.createAnimationSampler().setInput(times).setOutput(weights);
    anim
      .addSampler(morph)
      .addChannel(doc.createAnimationChannel().setTargetNode(prop).setTargetPath('weights').setSampler(morph));

    const { clips, warnings } = await readGltfWithWarnings(await io.writeBinary(doc), 'rig.glb', { unit: 'cm' });
    const clip = clips[0];
    expect(clip.skeleton.boneNames[0]).toBe('Armature');
    expect(clip.skeleton.boneNames.slice(1)).toEqual(source.skeleton.boneNames);
    expect(clip.skeleton.parents[1]).toBe(0);
    expect(Array.from(clip.skeleton.defaultPose.subarray(7, 10))).toEqual([0.01, 0.01, 0.01].map(Math.fround));
    expect(warnings.some((w) => /1 channel animates nodes outside the skeleton \(Prop\)/.test(w))).toBe(true);
    expect(warnings.some((w) => /morph-target weight channel \(Prop\) not supported/.test(w))).toBe(true);

    const forwarded: string[] = [];
    await readGltf(await io.writeBinary(doc), 'rig.glb', { onWarning: (w) => forwarded.push(w) });
    expect(forwarded).toEqual(warnings);
  });

  it('names unnamed nodes node_<index> and makes repeated names unique', async () => {
    const { doc } = handDocument(
      [
        ['', -1],
        ['bone', 0],
        ['bone', 1],
      ],
      [
        {
          name: 'a',
          tracks: [{ node: 2, path: 'scale', times: [0, 1], values: [1, 1, 1, 2, 2, 2] }],
        },
      ],
    );
    const { clips, warnings } = await readGltfWithWarnings(await io.writeBinary(doc), 'names.glb');
    expect(clips[0].skeleton.boneNames).toEqual(['node_0', 'bone', 'bone_2']);
    expect(warnings.some((w) => w.includes('"bone_2"'))).toBe(true);
  });
});

describe('readGltf: rejected input', () => {
  let glb: Uint8Array;
  let gltf: Awaited<ReturnType<typeof toGltf>>;
  beforeAll(async () => {
    const { doc } = handDocument(
      [['root', -1]],
      [
        {
          name: 'a',
          tracks: [{ node: 0, path: 'translation', times: [0, 0.5, 1], values: [0, 0, 0, 1, 1, 1, 2, 2, 2] }],
        },
      ],
    );
    glb = await io.writeBinary(doc);
    gltf = await toGltf(doc, 'a');
  });
  const edited = (edit: (json: Record<string, any>) => void): Uint8Array => {
    const json = structuredClone(gltf.json);
    edit(json);
    return glbOf({ ...json, buffers: [{ byteLength: json.buffers[0].byteLength }] }, gltf.resources['a.bin']);
  };

  it('a missing external buffer', async () => {
    const e = await parseError(readGltf(gltf.bytes, 'a.gltf'));
    expect(e.file).toBe('a.gltf');
    expect(e.message).toMatch(/^a\.gltf: missing buffer "a\.bin"/);
  });

  it('a corrupt or truncated GLB header', async () => {
    const bad = glb.slice();
    bad[0] = 0x78;
    expect((await parseError(readGltf(bad, 'a.glb'))).message).toMatch(/^a\.glb: corrupt GLB: bad magic/);
    expect((await parseError(readGltf(glb.subarray(0, glb.length - 8), 'a.glb'))).message).toMatch(
      /^a\.glb: corrupt GLB: header says \d+ bytes but the file holds/,
    );
    expect((await parseError(readGltf(glb.subarray(0, 6), 'a.glb'))).message).toMatch(
      /shorter than the 12-byte header/,
    );
    const v1 = glb.slice();
    v1[4] = 1;
    expect((await parseError(readGltf(v1, 'a.glb'))).code).toBe('UNSUPPORTED');
  });

  it('the edited-GLB helper itself produces a readable file', async () => {
    await expect(
      readGltf(
        edited(() => {}),
        'ok.glb',
      ),
    ).resolves.toHaveLength(1);
  });

  it('(not rejected) a rest matrix, meshes with required extensions it cannot decode, and pointer channels', async () => {
    const { clips, warnings } = await readGltfWithWarnings(
      edited((json) => {
        json.nodes[0].matrix = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 4, 5, 6, 1];
        json.nodes[0].mesh = 0;
        json.meshes = [
          {
            primitives: [
              { attributes: { POSITION: 99 }, extensions: { KHR_draco_mesh_compression: { bufferView: 42 } } },
            ],
          },
        ];
        json.extensionsUsed = json.extensionsRequired = ['KHR_draco_mesh_compression'];
        json.animations[0].channels.push({
          sampler: 0,
          target: { path: 'pointer', extensions: { KHR_animation_pointer: { pointer: '/cameras/0/yfov' } } },
        });
      }),
      'draco.glb',
    );
    expect(Array.from(clips[0].skeleton.defaultPose.subarray(4, 7))).toEqual([4, 5, 6]);
    expect(warnings.some((w) => /channel 1 \(pointer, no target node\)/.test(w))).toBe(true);
  });

  it('an animation buffer view whose EXT_meshopt_compression stream is not meshopt data (test/readers/gltf-meshopt.test.ts has the rest)', async () => {
    const bytes = edited((json) => {
      json.bufferViews[0].extensions = {
        EXT_meshopt_compression: {
          buffer: 0,
          byteLength: 4,
          count: json.bufferViews[0].byteLength / 4,
          byteStride: 4,
          mode: 'ATTRIBUTES',
        },
      };
    });
    const e = await parseError(readGltf(bytes, 'packed.glb'));
    expect(e.code).toBe('BAD_VALUE');
    expect(e.message).toMatch(
      /^packed\.glb: bufferViews\[0\]: cannot decode its EXT_meshopt_compression data \(Malformed buffer data/,
    );
  });

  it('input and output accessor counts that disagree', async () => {
    const bytes = edited((json) => {
      json.accessors[json.animations[0].samplers[0].output].count = 2;
    });
    expect((await parseError(readGltf(bytes, 'a.glb'))).message).toMatch(
      /^a\.glb: animation "a" channel 0: 3 key times but 2 output values \(LINEAR needs 3\)/,
    );
  });

  it('a sampler with zero keys', async () => {
    const bytes = edited((json) => {
      const s = json.animations[0].samplers[0];
      json.accessors[s.input].count = 0;
      json.accessors[s.output].count = 0;
    });
    expect((await parseError(readGltf(bytes, 'a.glb'))).message).toMatch(/^a\.glb: animation "a" channel 0: zero keys/);
  });

  it('an accessor running past its buffer view', async () => {
    const bytes = edited((json) => {
      json.accessors[json.animations[0].samplers[0].output].count = 300;
      json.accessors[json.animations[0].samplers[0].input].count = 300;
    });
    expect((await parseError(readGltf(bytes, 'a.glb'))).message).toMatch(
      /needs \d+ bytes of bufferViews\[\d\], which holds/,
    );
  });

  it('(regression R2) sampler accessors without a bufferView or sparse values, naming the accessor', async () => {
    for (const which of ['input', 'output'] as const) {
      const bytes = edited((json) => {
        const accessor = json.accessors[json.animations[0].samplers[0][which]];
        accessor.count = 100_000_000;
        delete accessor.bufferView;
      });
      const e = await parseError(readGltf(bytes, 'a.glb'));
      expect(e.message).toMatch(
        new RegExp(
          `^a\\.glb: accessors\\[${which === 'input' ? 0 : 1}\\] \\(animation "a" channel 0 .*\\) has no bufferView and no sparse values`,
        ),
      );
    }
  });

  it('(regression R2) sparse key times over zeros with more keys than sparse entries + 1', async () => {
    const sparse = (count: number) =>
      edited((json) => {
        const s = json.animations[0].samplers[0];
        const input = json.accessors[s.input];
        delete input.bufferView;
        delete input.byteOffset;
        // One sparse entry: index 0 (the uint32 bytes of the float 0 key time at byte 0) takes the time 0.5 s stored at byte 4.
        input.count = count;
        input.sparse = {
          count: 1,
          indices: { bufferView: 0, byteOffset: 0, componentType: 5125 },
          values: { bufferView: 0, byteOffset: 4 },
        };
        json.accessors[s.output].count = Math.min(count, 3);
      });
    const e = await parseError(readGltf(sparse(10_000_000), 'sparse.glb'));
    expect(e.message).toMatch(
      /declares 10000000 key times but stores 1 \(sparse, no bufferView\); key times must increase/,
    );
    // Within sparse entries + 1 the count passes; the times [0.5, 0] then decrease.
    expect((await parseError(readGltf(sparse(2), 'sparse.glb'))).message).toMatch(/key times must not decrease/);
  });

  it('(regression R2) a sparse output accessor over zeros still reads', async () => {
    const bytes = edited((json) => {
      const output = json.accessors[json.animations[0].samplers[0].output];
      delete output.bufferView;
      delete output.byteOffset;
      // Sparse index 0 (the uint32 bytes of the float 0 key time) takes the 12 bytes after it: [0.5, 1, 0].
      output.sparse = {
        count: 1,
        indices: { bufferView: 0, byteOffset: 0, componentType: 5125 },
        values: { bufferView: 0, byteOffset: 4 },
      };
    });
    const [clip] = await readGltf(bytes, 'sparse.glb');
    expect(sampleOf(clip, 'translation', 0, 0)).toEqual([0.5, 1, 0]);
    expect(sampleOf(clip, 'translation', 0, clip.sampleCount - 1)).toEqual([0, 0, 0]);
  });

  it('(regression R2) a buffer view stride shorter than an element (0 would fit any count)', async () => {
    const bytes = edited((json) => {
      json.bufferViews[0].byteStride = 0;
      const s = json.animations[0].samplers[0];
      for (const a of [s.input, s.output]) json.accessors[a].count = 100_000_000;
    });
    expect((await parseError(readGltf(bytes, 'stride.glb'))).message).toMatch(
      /byteStride is 0, shorter than the \d+-byte elements/,
    );
  });

  it('(regression R3) two keys 300 s apart read at 30 Hz; keys 1e30 s apart are a LIMIT error, not NaN samples', async () => {
    const slow = handDocument(
      [['root', -1]],
      [{ name: 'slow', tracks: [{ node: 0, path: 'translation', times: [0, 300], values: [0, 0, 0, 1, 1, 1] }] }],
    );
    const [clip] = await readGltf(await io.writeBinary(slow.doc), 'slow.glb');
    expect(clip.sampleRate).toBe(30);
    expect(clip.sampleCount).toBe(9001);
    expect(sampleOf(clip, 'translation', 0, 9000)).toEqual([1, 1, 1]);
    const long = handDocument(
      [['root', -1]],
      [{ name: 'long', tracks: [{ node: 0, path: 'translation', times: [0, 1e30], values: [0, 0, 0, 1, 1, 1] }] }],
    );
    const e = await parseError(readGltf(await io.writeBinary(long.doc), 'long.glb'));
    expect(e.code).toBe('LIMIT');
    expect(e.message).toMatch(
      /^long\.glb: animation "long": keys from 0 s to 1\.0\d*e\+30 s at 30 Hz: 1 bones × .* samples is over the reader's limit of 67108864 bone samples$/,
    );
  });

  it('non-finite values and decreasing key times', async () => {
    const { doc } = handDocument(
      [['root', -1]],
      [{ name: 'nan', tracks: [{ node: 0, path: 'translation', times: [0, 1], values: [0, 0, 0, NaN, 0, 0] }] }],
    );
    expect((await parseError(readGltf(await io.writeBinary(doc), 'nan.glb'))).message).toMatch(
      /^nan\.glb: animation "nan" channel 0 \(root\.translation\): output value 3 is NaN/,
    );
    const { doc: back } = handDocument(
      [['root', -1]],
      [{ name: 'back', tracks: [{ node: 0, path: 'translation', times: [0, 1, 0.5], values: new Array(9).fill(0) }] }],
    );
    expect((await parseError(readGltf(await io.writeBinary(back), 'back.glb'))).message).toMatch(
      /key times must not decrease/,
    );
  });

  it('a file without animations, and malformed JSON with its line and column', async () => {
    const doc = new Document();
    doc.createScene().addChild(doc.createNode('lonely'));
    expect((await parseError(readGltf(await io.writeBinary(doc), 'still.glb'))).message).toBe(
      'still.glb: no animations in the file',
    );
    const e = await parseError(
      readGltf(utf8.encode('{\n  "asset": {"version": "2.0"}\n  "nodes": []\n}\n'), 'broken.gltf'),
    );
    expect(e.code).toBe('SYNTAX');
    expect(e.line).toBe(3);
    expect(e.column).toBe(3);
    const cut = await parseError(readGltf(utf8.encode('{\n  "asset": {"version": "2.0"},\n  "nodes": ['), 'cut.gltf'));
    expect(cut.line).toBe(3);
  });

  it('an animation that only moves nodes outside the skeleton is skipped; with nothing left it is an error', async () => {
    const { doc } = handDocument(
      [
        ['root', -1],
        ['face', -1],
      ],
      [{ name: 'blink', tracks: [{ node: 1, path: 'weights', times: [0, 1], values: [0, 1] }] }],
    );
    const e = await parseError(readGltf(await io.writeBinary(doc), 'blink.glb'));
    expect(e.message).toMatch(/no skeletal animation/);
  });
});
