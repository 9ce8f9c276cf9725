/**
 * The glTF-Transform integration: `bonepress()` compresses every skeletal animation in place;
 * everything else in the asset keeps its bytes; the output validates with the Khronos
 * validator; the extension reads back; bad extension data is refused by name.
 */
import { createRequire } from 'node:module';

import { NodeIO, type Document } from '@gltf-transform/core';
import { beforeAll, describe, expect, it } from 'vitest';

import { readGltfWithWarnings } from '../../src/readers/gltf.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { MORPH_WEIGHT_SHARE } from '../../src/runtime/morph-share.js';
import { compress } from '../../src/compress/index.js';
import {
  animationBytes,
  BONEPRESS_ANIMATION_COMPRESSION,
  bonepress,
  BonepressAnimationCompression,
  compressDocument,
  GltfExtensionError,
  type CompressedAnimation,
} from '../../src/gltf-transform/index.js';
import { makePropRig, makeRigs, makeSceneRig } from '../utils/gltf-rigs.js';

interface ValidationReport {
  issues: {
    numErrors: number;
    numWarnings: number;
    messages: { code: string; message: string; severity: number; pointer?: string }[];
  };
}
const validator = createRequire(import.meta.url)('gltf-validator') as {
  validateBytes(data: Uint8Array, options?: object): Promise<ValidationReport>;
};

const io = (): NodeIO => new NodeIO().registerExtensions([BonepressAnimationCompression]);

async function transformed(
  glb: Uint8Array,
  options: Parameters<typeof bonepress>[0] = {},
): Promise<{ doc: Document; glb: Uint8Array }> {
  const doc = await io().readBinary(glb);
  await doc.transform(bonepress({ onWarning: () => {}, keepSmallerSource: false, ...options }));
  return { doc, glb: await io().writeBinary(doc) };
}

/** Every accessor's elements and every image's bytes that no animation uses, by the property's name or position. */
async function nonAnimationData(glb: Uint8Array): Promise<Map<string, number[]>> {
  const doc = await io().readBinary(glb);
  const root = doc.getRoot();
  const animationAccessors = new Set(
    root.listAnimations().flatMap((a) => a.listSamplers().flatMap((s) => [s.getInput(), s.getOutput()])),
  );
  const out = new Map<string, number[]>();
  for (const mesh of root.listMeshes()) {
    mesh.listPrimitives().forEach((prim, p) => {
      for (const semantic of prim.listSemantics())
        out.set(`${mesh.getName()}/${p}/${semantic}`, Array.from(prim.getAttribute(semantic)!.getArray()!));
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
  const nonAnimation = root.listAccessors().filter((a) => !animationAccessors.has(a));
  expect(nonAnimation.length).toBeGreaterThan(0);
  return out;
}

describe('bonepress() on a glTF-Transform Document', () => {
  let scene: Uint8Array;
  let rigs: Awaited<ReturnType<typeof makeRigs>>;
  beforeAll(async () => {
    scene = await makeSceneRig();
    rigs = await makeRigs();
  }, 60_000);

  it('keeps every non-animation accessor, image, node, camera, material and extra as it was', async () => {
    const { doc, glb } = await transformed(scene);
    expect(await nonAnimationData(glb)).toEqual(await nonAnimationData(scene));
    const before = (await io().readBinary(scene)).getRoot(),
      after = doc.getRoot();
    expect(
      after.listNodes().map((n) => [n.getName(), n.getTranslation(), n.getRotation(), n.getScale(), n.getExtras()]),
    ).toEqual(
      before.listNodes().map((n) => [n.getName(), n.getTranslation(), n.getRotation(), n.getScale(), n.getExtras()]),
    );
    expect(after.listSkins().map((s) => s.listJoints().map((j) => j.getName()))).toEqual(
      before.listSkins().map((s) => s.listJoints().map((j) => j.getName())),
    );
    expect(after.listCameras().map((c) => [c.getYFov(), c.getZNear(), c.getZFar(), c.getAspectRatio()])).toEqual([
      [0.8, 0.1, 100, 1.5],
    ]);
    expect(after.listMaterials().map((m) => m.getBaseColorTexture()?.getName())).toEqual(['albedo']);
    expect(after.listMeshes().map((m) => m.getWeights())).toEqual(before.listMeshes().map((m) => m.getWeights()));
    expect(after.listAnimations().map((a) => [a.getName(), a.getExtras()])).toEqual(
      before.listAnimations().map((a) => [a.getName(), a.getExtras()]),
    );
  });

  it('compresses the skeletal animations, the morph weight and the camera animation (extra bones), and validates with no errors', async () => {
    const { doc, glb } = await transformed(scene);
    const anims = doc.getRoot().listAnimations();
    const exts = anims.map((a) => a.getExtension<CompressedAnimation>(BONEPRESS_ANIMATION_COMPRESSION));
    expect(exts.map((e) => e !== null)).toEqual([true, true, true, true]);
    // Every animation keeps only the node-less stub.
    for (const a of anims)
      expect(a.listChannels().map((c) => [c.getTargetNode(), c.getTargetPath()])).toEqual([[null, 'rotation']]);
    // One bone table per set of skins a clip moves: A, B, and both for "Both".
    expect(
      exts.slice(0, 3).map((e) =>
        e!
          .getSkeleton()!
          .listJoints()
          .map((n) => n.getName()),
      ),
    ).toEqual([
      ['A0', 'A1', 'A2'],
      ['B0', 'B1', 'B2'],
      ['A0', 'A1', 'A2', 'B0', 'B1', 'B2'],
    ]);
    // WalkA's clip holds Face's weight after the skeleton, scaled by its target's largest
    // displacement (0.2 m) and the weights' share of the bound the skeleton shares.
    expect(exts[0]!.listWeightNodes().map((n) => n.getName())).toEqual(['Face']);
    expect(exts[0]!.getWeightScales()[0][0]).toBeCloseTo((0.2 * (1 - MORPH_WEIGHT_SHARE)) / MORPH_WEIGHT_SHARE, 6);
    expect(CompressedClip.open(exts[0]!.getData()!).boneCount).toBe(exts[0]!.getSkeleton()!.listJoints().length + 1);
    // CameraFly moves no skeleton node: its clip is the camera alone, with no bone table.
    expect(exts[3]!.getSkeleton()).toBeNull();
    expect(exts[3]!.listNodes().map((n) => n.getName())).toEqual(['Camera']);
    expect(CompressedClip.open(exts[3]!.getData()!).boneCount).toBe(1);
    const { json } = await io().binaryToJSON(glb);
    expect(json.extensionsRequired).toEqual([BONEPRESS_ANIMATION_COMPRESSION]);
    expect((json.extensions![BONEPRESS_ANIMATION_COMPRESSION] as { skeletons: unknown[] }).skeletons).toHaveLength(3);
    expect(json.animations![3].extensions![BONEPRESS_ANIMATION_COMPRESSION]).toEqual({
      bufferView: expect.any(Number),
      nodes: [
        doc
          .getRoot()
          .listNodes()
          .findIndex((n) => n.getName() === 'Camera'),
      ],
    });

    const report = await validator.validateBytes(glb);
    const errors = report.issues.messages.filter((m) => m.severity === 0);
    expect(errors, JSON.stringify(errors)).toEqual([]);
    expect((await validator.validateBytes(scene)).issues.numErrors).toBe(0);
  });

  it('with fallback: keeps the original channels, the extension optional, and validates', async () => {
    const { doc, glb } = await transformed(scene, { fallback: true });
    const before = (await io().readBinary(scene)).getRoot().listAnimations();
    expect(
      doc
        .getRoot()
        .listAnimations()
        .map((a) => a.listChannels().length),
    ).toEqual(before.map((a) => a.listChannels().length));
    const { json } = await io().binaryToJSON(glb);
    expect(json.extensionsUsed).toContain(BONEPRESS_ANIMATION_COMPRESSION);
    expect(json.extensionsRequired ?? []).not.toContain(BONEPRESS_ANIMATION_COMPRESSION);
    expect((await validator.validateBytes(glb)).issues.numErrors).toBe(0);
  });

  it("with fallback 'quantized': the clip decoded at its rate as SHORT rotations, smaller than the original channels, and validates", async () => {
    const quantized = await transformed(scene, { fallback: 'quantized' });
    const original = await transformed(scene, { fallback: true });
    const walk = quantized.doc.getRoot().listAnimations()[0];
    const rotations = walk.listChannels().filter((c) => c.getTargetPath() === 'rotation');
    expect(rotations.map((c) => c.getTargetNode()!.getName())).toEqual(['A0', 'A1', 'A2']);
    for (const c of rotations) {
      const output = c.getSampler()!.getOutput()!;
      expect(output.getArray()).toBeInstanceOf(Int16Array);
      expect(output.getNormalized()).toBe(true);
    }
    // The morph channel stays as it was; no stub where real channels are.
    expect(walk.listChannels().filter((c) => c.getTargetPath() === 'weights')).toHaveLength(1);
    expect(
      quantized.doc
        .getRoot()
        .listAnimations()
        .flatMap((a) => a.listChannels())
        .every((c) => c.getTargetNode() !== null),
    ).toBe(true);
    const q = animationBytes((await io().binaryToJSON(quantized.glb)).json),
      o = animationBytes((await io().binaryToJSON(original.glb)).json);
    expect(q.total).toBeLessThan(o.total);
    const { json } = await io().binaryToJSON(quantized.glb);
    expect(json.extensionsRequired ?? []).not.toContain(BONEPRESS_ANIMATION_COMPRESSION);
    const report = await validator.validateBytes(quantized.glb);
    expect(
      report.issues.messages.filter((m) => m.severity <= 1),
      JSON.stringify(report.issues.messages),
    ).toEqual([]);
  });

  it('stores each clip within the error bound, as the .bpk of the same clip (names and node indices aside), and deterministically', async () => {
    for (const rig of rigs.slice(0, 4)) {
      const { glb } = await transformed(rig.glb);
      expect(await (await transformed(rig.glb)).glb, rig.name).toEqual(glb);
      const doc = await io().readBinary(glb);
      const { clips } = await readGltfWithWarnings(rig.glb, `${rig.name}.glb`);
      const anims = doc.getRoot().listAnimations();
      expect(anims.map((a) => a.getName())).toEqual(clips.map((c) => c.name));
      clips.forEach((source, i) => {
        const ext = anims[i].getExtension<CompressedAnimation>(BONEPRESS_ANIMATION_COMPRESSION)!;
        const clip = CompressedClip.open(ext.getData()!);
        expect(clip.boneNames).toBeUndefined();
        expect(clip.nodeIndices).toBeUndefined();
        expect(clip.startTime).toBe(source.startTime);
        expect(clip.duration).toBe(source.duration);
        const table = ext.getSkeleton()!;
        const nodes = doc.getRoot().listNodes();
        expect(table.listJoints().map((n) => nodes.indexOf(n))).toEqual(Array.from(source.skeleton.nodeIndices!));
        expect(table.getParents()).toEqual(Array.from(clip.parents));
        // The same bytes as compress() makes of the clip without names and node indices, held to 0.01 cm.
        const loose = compress(
          { ...source, skeleton: { ...source.skeleton, nodeIndices: undefined } },
          { stripNames: true },
        );
        expect(ext.getData(), `${rig.name} ${source.name}`).toEqual(loose.bytes);
        expect(loose.stats.maxError).toBeLessThanOrEqual(1e-4);
      });
    }
  }, 120_000);

  it('writes one bone table per skin, once per file, however many clips use it (two skins, twelve clips)', async () => {
    const doc = await io().readBinary(scene);
    const root = doc.getRoot();
    // Five more copies of WalkA and WaveB: clips of one character each.
    for (let copy = 0; copy < 5; copy++) {
      for (const source of root.listAnimations().slice(0, 2)) {
        const animation = doc.createAnimation(`${source.getName()}${copy}`);
        for (const channel of source.listChannels()) {
          const sampler = doc
            .createAnimationSampler()
            .setInput(channel.getSampler()!.getInput())
            .setOutput(channel.getSampler()!.getOutput())
            .setInterpolation('LINEAR');
          animation
            .addSampler(sampler)
            .addChannel(
              doc
                .createAnimationChannel()
                .setTargetNode(channel.getTargetNode())
                .setTargetPath(channel.getTargetPath()!)
                .setSampler(sampler),
            );
        }
      }
    }
    const { animations } = await compressDocument(doc, { keepSmallerSource: false });
    expect(animations).toHaveLength(14);
    const glb = await io().writeBinary(doc);
    const { json } = await io().binaryToJSON(glb);
    const nodeNames = json.nodes!.map((n) => n.name);
    const skeletons = (json.extensions![BONEPRESS_ANIMATION_COMPRESSION] as { skeletons: { joints: number[] }[] })
      .skeletons;
    expect(skeletons.map((s) => s.joints.map((j) => nodeNames[j]))).toEqual([
      ['A0', 'A1', 'A2'],
      ['B0', 'B1', 'B2'],
      ['A0', 'A1', 'A2', 'B0', 'B1', 'B2'],
    ]);
    const used = json.animations!.map(
      (a) => (a.extensions![BONEPRESS_ANIMATION_COMPRESSION] as { skeleton?: number }).skeleton,
    );
    expect(used).toEqual([0, 1, 2, undefined, ...Array.from({ length: 5 }, () => [0, 1]).flat()]);
    // A clip of one character holds that character's bones only (plus Face's weight for the walks).
    for (const a of doc.getRoot().listAnimations()) {
      const ext = a.getExtension<CompressedAnimation>(BONEPRESS_ANIMATION_COMPRESSION)!;
      expect(CompressedClip.open(ext.getData()!).boneCount, a.getName()).toBe(ext.getBoneCount());
    }
    expect((await validator.validateBytes(glb)).issues.numErrors).toBe(0);
  }, 60_000);

  it('reports what it compressed, and leaves already compressed animations alone', async () => {
    const doc = await io().readBinary(rigs[0].glb);
    const first = await compressDocument(doc, { keepSmallerSource: false });
    expect(first.animations.map((a) => [a.animation, a.index])).toEqual([
      ['Run', 0],
      ['Idle', 1],
    ]);
    for (const a of first.animations) expect(a.stats.maxError).toBeLessThanOrEqual(a.stats.threshold);
    const data = doc
      .getRoot()
      .listAnimations()
      .map((a) => a.getExtension<CompressedAnimation>(BONEPRESS_ANIMATION_COMPRESSION)!.getData());
    expect((await compressDocument(doc, { keepSmallerSource: false })).animations).toEqual([]);
    // With extras off, what the clips leave out stays in the asset, and the warnings say so.
    const sceneResult = await compressDocument(await io().readBinary(scene), {
      extras: false,
      keepSmallerSource: false,
    });
    expect(sceneResult.warnings).toContain(
      'animation 3 "CameraFly" has no translation, rotation or scale channel on the skeleton; kept uncompressed',
    );
    expect(
      sceneResult.warnings.some((w) =>
        /animation 0 "WalkA": 1 morph-target weight channel \(Face\) .*; kept uncompressed/.test(w),
      ),
    ).toBe(true);
    expect(
      doc
        .getRoot()
        .listAnimations()
        .map((a) => a.getExtension<CompressedAnimation>(BONEPRESS_ANIMATION_COMPRESSION)!.getData()),
    ).toEqual(data);
  });

  it('with extras off, leaves a document whose animations move no skeleton (a morph weight only) as it was, and says why; with them, compresses the weight alone', async () => {
    const doc = await io().readBinary(scene);
    doc
      .getRoot()
      .listAnimations()
      .slice(1)
      .forEach((a) => a.dispose());
    for (const c of doc.getRoot().listAnimations()[0].listChannels()) if (c.getTargetPath() !== 'weights') c.dispose();
    const before = await io().writeBinary(doc);
    const result = await compressDocument(doc, { extras: false, keepSmallerSource: false });
    expect(result.animations).toEqual([]);
    expect(result.warnings.join('\n')).toMatch(/no skeletal animation/);
    expect(await io().writeBinary(doc)).toEqual(before);
    const withExtras = await compressDocument(doc, { keepSmallerSource: false });
    expect(withExtras.animations.map((a) => [a.animation, a.stats.boneCount])).toEqual([['WalkA', 1]]);
    const ext = doc.getRoot().listAnimations()[0].getExtension<CompressedAnimation>(BONEPRESS_ANIMATION_COMPRESSION)!;
    expect([ext.getSkeleton(), ext.listNodes(), ext.listWeightNodes().map((n) => n.getName())]).toEqual([
      null,
      [],
      ['Face'],
    ]);
    expect((await validator.validateBytes(await io().writeBinary(doc))).issues.numErrors).toBe(0);
  });

  it('refuses a malformed extension by its JSON path', async () => {
    const { glb } = await transformed(rigs[0].glb);
    const { json, resources } = await io().binaryToJSON(glb);
    const animations = json.animations!;
    const bad = (edit: (j: typeof json) => void) => {
      const copy = structuredClone(json);
      edit(copy);
      return io().readJSON({ json: copy, resources });
    };
    await expect(
      bad((j) => {
        (j.animations![1].extensions![BONEPRESS_ANIMATION_COMPRESSION] as { bufferView: number }).bufferView = 999;
      }),
    ).rejects.toThrow(
      new GltfExtensionError(
        '999 is not a buffer view index (the file has ' + json.bufferViews!.length + ')',
        `animations[1].extensions.${BONEPRESS_ANIMATION_COMPRESSION}.bufferView`,
      ),
    );
    await expect(
      bad((j) => {
        (
          j.extensions![BONEPRESS_ANIMATION_COMPRESSION] as { skeletons: { parents: number[] }[] }
        ).skeletons[0].parents[0] = 3;
      }),
    ).rejects.toThrow(/skeletons\[0\]\.parents\[0\]: 3 \(a parent must be −1 or an earlier bone\)/);
    await expect(
      bad((j) => {
        (
          j.extensions![BONEPRESS_ANIMATION_COMPRESSION] as { skeletons: { joints: number[] }[] }
        ).skeletons[0].joints[1] = 77;
      }),
    ).rejects.toThrow(/skeletons\[0\]\.joints\[1\]: 77 is not a node index/);
    expect(animations).toHaveLength(2);
  });

  it('refuses malformed extra-bone lists (nodes, weights) by their JSON path, and reads good ones back', async () => {
    const { glb } = await transformed(await makePropRig());
    const { json, resources } = await io().binaryToJSON(glb);
    const ext = (j: typeof json) =>
      j.animations![0].extensions![BONEPRESS_ANIMATION_COMPRESSION] as {
        skeleton?: number;
        nodes?: unknown;
        weights?: { node: unknown; scales: unknown }[];
      };
    const bad = (edit: (j: typeof json) => void) => {
      const copy = structuredClone(json);
      edit(copy);
      return io().readJSON({ json: copy, resources });
    };
    const at = `animations[0].extensions.${BONEPRESS_ANIMATION_COMPRESSION}`;
    await expect(
      bad((j) => {
        ext(j).nodes = [999];
      }),
    ).rejects.toThrow(`${at}.nodes[0]: 999 is not a node index`);
    await expect(
      bad((j) => {
        ext(j).nodes = [];
      }),
    ).rejects.toThrow(`${at}.nodes: is not a non-empty array`);
    await expect(
      bad((j) => {
        ext(j).weights![0].scales = [0];
      }),
    ).rejects.toThrow(`${at}.weights[0].scales: must be a non-empty array of positive numbers`);
    await expect(
      bad((j) => {
        ext(j).weights![0].node = -1;
      }),
    ).rejects.toThrow(`${at}.weights[0].node: -1 is not a node index`);
    await expect(
      bad((j) => {
        const e = ext(j);
        delete e.skeleton;
        delete e.nodes;
        delete e.weights;
      }),
    ).rejects.toThrow(`${at}: names no skeleton, nodes or weights`);
    // Deterministic: the same input and options give the same bytes.
    expect((await transformed(await makePropRig())).glb).toEqual(glb);
    // Read back and written again: the same JSON.
    const again = await io().writeBinary(await io().readBinary(glb));
    expect((await io().binaryToJSON(again)).json.animations!.map((a) => a.extensions)).toEqual(
      json.animations!.map((a) => a.extensions),
    );
  });
});
