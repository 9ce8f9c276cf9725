/**
 * readGltf on what gltfpack-style pipelines write: animation data in EXT_meshopt_compression
 * buffer views (with and without meshopt's lossy filters) next to KHR_mesh_quantization
 * meshes, made in the test by glTF-Transform's own meshopt writer. The clips read the same as
 * from the uncompressed source (exactly without filters, within the filters' precision with
 * them), and a damaged or hostile meshopt view is a ParseError naming the view.
 */
import { NodeIO, type GLTF } from '@gltf-transform/core';
import { EXTMeshoptCompression, KHRMeshQuantization } from '@gltf-transform/extensions';
import { MeshoptDecoder } from 'meshoptimizer/decoder';
import { MeshoptEncoder } from 'meshoptimizer/encoder';
import { beforeAll, describe, expect, it } from 'vitest';

import type { RawClip } from '../../src/clip/raw-clip.js';
import { GLTF_DEFAULTS, readGltfWithWarnings } from '../../src/readers/gltf.js';
import { makeRigs, type Rig } from '../utils/gltf-rigs.js';
import { glbOf, splitGlb } from '../utils/glb.js';
import { parseError } from '../utils/errors.js';

async function meshoptIo(): Promise<NodeIO> {
  await Promise.all([MeshoptEncoder.ready, MeshoptDecoder.ready]);
  return new NodeIO()
    .registerExtensions([EXTMeshoptCompression, KHRMeshQuantization])
    .registerDependencies({ 'meshopt.encoder': MeshoptEncoder, 'meshopt.decoder': MeshoptDecoder });
}

/**
 * `glb` written again with every accessor in EXT_meshopt_compression views (required), and
 * its mesh positions as KHR_mesh_quantization SHORTs, as `gltfpack -c` (QUANTIZE) or
 * `gltfpack -cc` (FILTER: quaternion and exponential filters on animation outputs) would.
 */
async function packed(glb: Uint8Array, method: 'quantize' | 'filter'): Promise<Uint8Array> {
  const io = await meshoptIo();
  const doc = await io.readBinary(glb);
  doc.createExtension(KHRMeshQuantization).setRequired(true);
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const prim of mesh.listPrimitives()) {
      const position = prim.getAttribute('POSITION')!;
      position.setArray(Int16Array.from(position.getArray()!, (v: number) => Math.round(v * 100))).setNormalized(false);
    }
  }
  doc
    .createExtension(EXTMeshoptCompression)
    .setRequired(true)
    .setEncoderOptions({
      method:
        method === 'quantize'
          ? EXTMeshoptCompression.EncoderMethod.QUANTIZE
          : EXTMeshoptCompression.EncoderMethod.FILTER,
    });
  return io.writeBinary(doc);
}

interface MeshoptDef {
  buffer: number;
  byteOffset?: number;
  byteLength: number;
  byteStride: number;
  count: number;
  mode: string;
  filter?: string;
}

/** Index of the meshopt view holding the first animation's first sampler output, and its extension object. */
function animationView(json: GLTF.IGLTF): { v: number; def: MeshoptDef } {
  const output = json.accessors![json.animations![0].samplers[0].output];
  const v = output.bufferView!;
  return { v, def: json.bufferViews![v].extensions!.EXT_meshopt_compression as MeshoptDef };
}

/** Largest difference between the samples of two clips of the same skeleton (a quaternion and its negation are one rotation). */
function maxSampleDifference(a: RawClip, b: RawClip): number {
  let worst = 0;
  for (let q = 0; q < a.rotations.length; q += 4) {
    let same = 0,
      flipped = 0;
    for (let c = 0; c < 4; c++) {
      same = Math.max(same, Math.abs(a.rotations[q + c] - b.rotations[q + c]));
      flipped = Math.max(flipped, Math.abs(a.rotations[q + c] + b.rotations[q + c]));
    }
    worst = Math.max(worst, Math.min(same, flipped));
  }
  for (const key of ['translations', 'scales'] as const) {
    expect(a[key].length).toBe(b[key].length);
    for (let i = 0; i < a[key].length; i++) worst = Math.max(worst, Math.abs(a[key][i] - b[key][i]));
  }
  return worst;
}

describe('readGltf on EXT_meshopt_compression and KHR_mesh_quantization (gltfpack-style) assets', () => {
  let rigs: Rig[];
  beforeAll(async () => {
    rigs = (await makeRigs()).filter((r) => ['mixamo', 'cubic', 'step'].includes(r.name));
  }, 60_000);

  it('reads the animations of a meshopt-compressed asset (no filters) exactly as from the source', async () => {
    for (const rig of rigs) {
      const glb = await packed(rig.glb, 'quantize');
      const { json } = splitGlb<GLTF.IGLTF>(glb);
      expect(json.extensionsRequired).toEqual(
        expect.arrayContaining(['EXT_meshopt_compression', 'KHR_mesh_quantization']),
      );
      // The animation data itself is in meshopt views, and the views' own buffer is a fallback with no bytes.
      const { v, def } = animationView(json);
      expect(def.mode).toBe('ATTRIBUTES');
      const fallback = json.buffers![json.bufferViews![v].buffer];
      expect(fallback.uri).toBeUndefined();
      expect(fallback.extensions).toEqual({ EXT_meshopt_compression: { fallback: true } });

      const expected = await readGltfWithWarnings(rig.glb, `${rig.name}.glb`);
      const actual = await readGltfWithWarnings(glb, `${rig.name}.packed.glb`);
      expect(actual.warnings).toEqual(
        expected.warnings.map((w) => w.replace(`${rig.name}.glb`, `${rig.name}.packed.glb`)),
      );
      expect(actual.clips.map((c) => c.name)).toEqual(expected.clips.map((c) => c.name));
      actual.clips.forEach((clip, i) => {
        const source = expected.clips[i];
        expect(clip.sampleRate, rig.name).toBe(source.sampleRate);
        expect(clip.sampleCount).toBe(source.sampleCount);
        expect(clip.skeleton.boneNames).toEqual(source.skeleton.boneNames);
        expect(Array.from(clip.skeleton.nodeIndices!)).toEqual(Array.from(source.skeleton.nodeIndices!));
        expect(clip.rotations).toEqual(source.rotations);
        expect(clip.translations).toEqual(source.translations);
        expect(clip.keyframes).toEqual(source.keyframes);
      });
    }
  }, 60_000);

  it('reads rotations through the QUATERNION filter and translations through the EXPONENTIAL filter within their precision', async () => {
    // Not the CUBICSPLINE rig: the QUATERNION filter normalises its tangents as if they were rotations (a writer's loss, not the reader's).
    for (const rig of rigs.filter((r) => r.name !== 'cubic')) {
      const glb = await packed(rig.glb, 'filter');
      const { json } = splitGlb<GLTF.IGLTF>(glb);
      const filters = new Set(
        json.animations!.flatMap((a) =>
          a.samplers.map((s) => {
            const view = json.bufferViews![json.accessors![s.output].bufferView!];
            return (view.extensions!.EXT_meshopt_compression as MeshoptDef).filter;
          }),
        ),
      );
      expect([...filters].sort()).toEqual(['EXPONENTIAL', 'QUATERNION']);
      const expected = await readGltfWithWarnings(rig.glb, 'a.glb');
      const actual = await readGltfWithWarnings(glb, 'a.glb');
      actual.clips.forEach((clip, i) => {
        // 16-bit quaternion components and 12-bit mantissas on ~1 m translations.
        const difference = maxSampleDifference(clip, expected.clips[i]);
        expect(difference, `${rig.name} ${clip.name}`).toBeLessThan(2e-3);
        expect(difference).toBeGreaterThan(0); // the filters are lossy: the data did go through them
      });
    }
  }, 60_000);

  it('refuses damaged or hostile meshopt views with a ParseError naming the view', async () => {
    const glb = await packed(rigs[0].glb, 'quantize');
    const { json, bin } = splitGlb<GLTF.IGLTF>(glb);
    const { v } = animationView(json);
    const edit = (change: (def: MeshoptDef, json: GLTF.IGLTF, bin: Uint8Array) => void): Uint8Array => {
      const copy = structuredClone(json),
        data = bin.slice();
      change(copy.bufferViews![v].extensions!.EXT_meshopt_compression as MeshoptDef, copy, data);
      return glbOf(copy, data);
    };
    const at = `bufferViews\\[${v}\\]\\.extensions\\.EXT_meshopt_compression`;

    const garbage = await parseError(
      readGltfWithWarnings(
        edit((def, _, data) => data.fill(0xff, def.byteOffset ?? 0, (def.byteOffset ?? 0) + def.byteLength)),
        'bad.glb',
      ),
    );
    expect(garbage.code).toBe('BAD_VALUE');
    expect(garbage.message).toMatch(
      new RegExp(
        `^bad\\.glb: bufferViews\\[${v}\\]: cannot decode its EXT_meshopt_compression data \\(Malformed buffer data`,
      ),
    );

    const mode = await parseError(
      readGltfWithWarnings(
        edit((def) => {
          def.mode = 'VERTICES';
        }),
        'bad.glb',
      ),
    );
    expect(mode.message).toMatch(
      new RegExp(`${at}\\.mode is "VERTICES" \\(expected ATTRIBUTES, TRIANGLES or INDICES\\)`),
    );

    const filter = await parseError(
      readGltfWithWarnings(
        edit((def) => {
          def.filter = 'WAVELET';
        }),
        'bad.glb',
      ),
    );
    expect(filter.code).toBe('UNSUPPORTED');

    const stride = await parseError(
      readGltfWithWarnings(
        edit((def) => {
          def.byteStride = 6;
        }),
        'bad.glb',
      ),
    );
    expect(stride.message).toMatch(new RegExp(`${at}\\.byteStride 6 is not allowed in mode ATTRIBUTES`));

    const past = await parseError(
      readGltfWithWarnings(
        edit((def) => {
          def.byteOffset = bin.length;
        }),
        'bad.glb',
      ),
    );
    expect(past.code).toBe('TRUNCATED');
    expect(past.message).toMatch(new RegExp(`${at} ends at byte \\d+ but buffer 0 holds ${bin.length}`));

    const short = await parseError(
      readGltfWithWarnings(
        edit((def) => {
          def.count = 1;
        }),
        'bad.glb',
      ),
    );
    expect(short.message).toMatch(/decodes to 16 bytes \(count × byteStride\), fewer than the view's byteLength/);

    // A few bytes declaring a gigabyte are refused before anything is allocated.
    const huge = await parseError(
      readGltfWithWarnings(
        edit((def, j) => {
          def.count = 2 ** 26;
          j.bufferViews![v].byteLength = def.count * def.byteStride;
        }),
        'bad.glb',
      ),
    );
    expect(huge.code).toBe('LIMIT');
    expect(huge.message).toContain(`limit of ${GLTF_DEFAULTS.maxMeshoptBytes} bytes`);
  }, 60_000);
});
