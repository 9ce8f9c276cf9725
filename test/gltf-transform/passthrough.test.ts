/**
 * glTF out through `compressGltfFile` (the CLI's path): everything that is not skeletal
 * animation passes through — meshes, two skins, morph targets, a camera animation, a texture,
 * KHR_materials_* / KHR_texture_transform / KHR_lights_punctual, KHR_animation_pointer
 * channels, and meshopt- or Draco-compressed meshes (re-encoded with their codecs) — and the
 * output validates. Unknown extensions are named: dropped with a warning when optional,
 * refused when required.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { NodeIO, type GLTF } from '@gltf-transform/core';
import {
  ALL_EXTENSIONS,
  EXTMeshoptCompression,
  KHRDracoMeshCompression,
  type Clearcoat,
} from '@gltf-transform/extensions';
import { MeshoptDecoder } from 'meshoptimizer/decoder';
import { MeshoptEncoder } from 'meshoptimizer/encoder';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  BONEPRESS_ANIMATION_COMPRESSION,
  BonepressAnimationCompression,
  KHRAnimationPointerPassThrough,
} from '../../src/gltf-transform/index.js';
import { compressGltfFile } from '../../src/node/gltf-files.js';
import { ParseError } from '../../src/readers/errors.js';
import { makeExtendedSceneRig, makeSceneRig } from '../utils/gltf-rigs.js';

interface ValidationReport {
  issues: { numErrors: number; messages: { code: string; message: string; severity: number; pointer?: string }[] };
}
const validator = createRequire(import.meta.url)('gltf-validator') as {
  validateBytes(data: Uint8Array): Promise<ValidationReport>;
};
const draco = createRequire(import.meta.url)('draco3dgltf') as {
  createDecoderModule(): Promise<unknown>;
  createEncoderModule(): Promise<unknown>;
};

async function fullIo(): Promise<NodeIO> {
  await Promise.all([MeshoptDecoder.ready, MeshoptEncoder.ready]);
  return new NodeIO()
    .registerExtensions([...ALL_EXTENSIONS, BonepressAnimationCompression, KHRAnimationPointerPassThrough])
    .registerDependencies({
      'meshopt.decoder': MeshoptDecoder,
      'meshopt.encoder': MeshoptEncoder,
      'draco3d.decoder': await draco.createDecoderModule(),
      'draco3d.encoder': await draco.createEncoderModule(),
    });
}

/** Every non-animation accessor's elements and every image's bytes, keyed by where they are used. */
async function nonAnimationData(glb: Uint8Array): Promise<Map<string, number[]>> {
  const root = (await (await fullIo()).readBinary(glb)).getRoot();
  const out = new Map<string, number[]>();
  for (const mesh of root.listMeshes()) {
    mesh.listPrimitives().forEach((prim, p) => {
      for (const semantic of prim.listSemantics())
        out.set(`${mesh.getName()}/${p}/${semantic}`, Array.from(prim.getAttribute(semantic)!.getArray()!));
      const indices = prim.getIndices();
      if (indices) out.set(`${mesh.getName()}/${p}/indices`, Array.from(indices.getArray()!));
      prim.listTargets().forEach((target, t) => {
        for (const semantic of target.listSemantics())
          out.set(
            `${mesh.getName()}/${p}/target${t}/${semantic}`,
            Array.from(target.getAttribute(semantic)!.getArray()!),
          );
      });
    });
  }
  for (const skin of root.listSkins())
    out.set(`${skin.getName()}/ibm`, Array.from(skin.getInverseBindMatrices()!.getArray()!));
  for (const texture of root.listTextures()) out.set(`texture ${texture.getName()}`, Array.from(texture.getImage()!));
  expect(out.size).toBeGreaterThan(8);
  return out;
}

function splitJson(glb: Uint8Array): GLTF.IGLTF {
  const length = new DataView(glb.buffer, glb.byteOffset).getUint32(12, true);
  return JSON.parse(new TextDecoder().decode(glb.subarray(20, 20 + length))) as GLTF.IGLTF;
}

async function errorsOf(glb: Uint8Array): Promise<ValidationReport['issues']['messages']> {
  return (await validator.validateBytes(glb)).issues.messages.filter((m) => m.severity === 0);
}

describe('compressGltfFile passes everything but skeletal animation through', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'bonepress-passthrough-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const run = async (name: string, glb: Uint8Array) => {
    const input = join(dir, `${name}.glb`),
      output = join(dir, `${name}.bp.glb`);
    writeFileSync(input, glb);
    const result = await compressGltfFile(input, output);
    return { result, glb: new Uint8Array(readFileSync(output)) };
  };

  it('keeps meshes, skins, morph targets, the texture and material, light and texture-transform extensions; passes the pointer channel; names the unknown extension; validates', async () => {
    const source = await makeExtendedSceneRig();
    expect(await errorsOf(source)).toEqual([]);
    const { result, glb } = await run('extended', source);
    expect(result.animations.map((a) => a.animation)).toEqual(['WalkA', 'WaveB', 'Both', 'CameraFly']);
    expect(await nonAnimationData(glb)).toEqual(await nonAnimationData(source));

    const doc = await (await fullIo()).readBinary(glb);
    const material = doc.getRoot().listMaterials()[0];
    const clearcoat = material.getExtension<Clearcoat>('KHR_materials_clearcoat')!;
    expect([clearcoat.getClearcoatFactor(), clearcoat.getClearcoatRoughnessFactor()]).toEqual([0.75, 0.125]);
    const json = splitJson(glb),
      before = splitJson(source);
    expect(json.materials).toEqual(before.materials);
    expect(json.extensions!.KHR_lights_punctual).toEqual(before.extensions!.KHR_lights_punctual);
    expect(json.cameras).toEqual(before.cameras);
    expect(json.extensionsUsed).toEqual(
      expect.arrayContaining([
        BONEPRESS_ANIMATION_COMPRESSION,
        'KHR_animation_pointer',
        'KHR_lights_punctual',
        'KHR_materials_clearcoat',
        'KHR_materials_emissive_strength',
        'KHR_texture_transform',
      ]),
    );

    // The pointer channel is still there, pointing at the same camera, and the warning says it passed through.
    const fly = json.animations!.find((a) => a.name === 'CameraFly')!;
    const pointer = fly.channels.find((c) => (c.target.path as string) === 'pointer')!;
    expect(pointer.target).toEqual({
      path: 'pointer',
      extensions: { KHR_animation_pointer: { pointer: '/cameras/0/perspective/yfov' } },
    });
    const values = json.accessors![fly.samplers[pointer.sampler].output];
    expect([values.count, values.type, values.componentType]).toEqual([31, 'SCALAR', 5126]);
    expect(result.warnings).toContain(
      'animation 3 "CameraFly": 1 KHR_animation_pointer channel (/cameras/0/perspective/yfov) passes through uncompressed',
    );

    // glTF-Transform drops an optional extension it does not know; the result says which.
    expect(result.droppedExtensions).toEqual(['VENDOR_unknown_thing']);
    expect(json.extensionsUsed).not.toContain('VENDOR_unknown_thing');
    expect(await errorsOf(glb)).toEqual([]);
  }, 60_000);

  it('refuses an asset that requires an extension glTF-Transform does not know, naming it and what to do', async () => {
    const input = join(dir, 'required.glb');
    writeFileSync(input, await makeExtendedSceneRig({ requireUnknown: true }));
    const error = await compressGltfFile(input, join(dir, 'required.bp.glb')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ParseError);
    expect((error as ParseError).code).toBe('UNSUPPORTED');
    expect((error as ParseError).message).toMatch(
      /required\.glb: requires VENDOR_unknown_thing, which glTF-Transform I\/O cannot read or write.*write the asset without it/,
    );
  });

  it('reads a meshopt-compressed asset (gltfpack-style) and writes it meshopt-compressed again, every non-animation value kept', async () => {
    const io = await fullIo();
    const doc = await io.readBinary(await makeSceneRig());
    doc.createExtension(EXTMeshoptCompression).setRequired(true);
    const source = await io.writeBinary(doc);
    const { result, glb } = await run('meshopt', source);
    expect(result.animations).toHaveLength(4);
    const json = splitJson(glb);
    expect(json.extensionsRequired).toEqual(
      expect.arrayContaining(['EXT_meshopt_compression', BONEPRESS_ANIMATION_COMPRESSION]),
    );
    expect(json.bufferViews!.some((v) => v.extensions?.EXT_meshopt_compression !== undefined)).toBe(true);
    expect(await nonAnimationData(glb)).toEqual(await nonAnimationData(source));
    expect(await errorsOf(glb)).toEqual([]);
    expect(result.outputFileBytes).toBeLessThan(result.sourceFileBytes);
  }, 60_000);

  it("reads a Draco-compressed asset and writes it Draco-compressed again, the mesh within Draco's quantisation", async () => {
    const io = await fullIo();
    const doc = await io.readBinary(await makeSceneRig());
    // glTF-Transform's Draco encoder wants indexed triangles.
    const buffer = doc.getRoot().listBuffers()[0];
    for (const mesh of doc.getRoot().listMeshes()) {
      for (const prim of mesh.listPrimitives())
        prim.setIndices(
          doc
            .createAccessor()
            .setType('SCALAR')
            .setBuffer(buffer)
            .setArray(new Uint16Array([0, 1, 2])),
        );
    }
    doc.createExtension(KHRDracoMeshCompression).setRequired(true);
    const source = await io.writeBinary(doc);
    expect(splitJson(source).extensionsRequired).toContain('KHR_draco_mesh_compression');
    const { result, glb } = await run('draco', source);
    expect(result.animations).toHaveLength(4);
    expect(splitJson(glb).extensionsRequired).toEqual(
      expect.arrayContaining(['KHR_draco_mesh_compression', BONEPRESS_ANIMATION_COMPRESSION]),
    );
    const before = await nonAnimationData(source),
      after = await nonAnimationData(glb);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [key, values] of before) {
      expect(after.get(key)!.length, key).toBe(values.length);
      const worst = Math.max(...values.map((v, i) => Math.abs(v - after.get(key)![i])));
      expect(worst, key).toBeLessThan(1e-3);
    }
    expect(await errorsOf(glb)).toEqual([]);
  }, 60_000);
});
