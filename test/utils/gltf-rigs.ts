/**
 * Small glTF characters made in code, shaped like what real exporters write, for the
 * three.js playback tests: a Mixamo-style rig (`mixamorig:` names, keys starting after 0),
 * a Blender rig (`.L`/`.R` names under a scaled "Armature" node), unnamed joints,
 * CUBICSPLINE and STEP channels, a fast 120°-per-key rotation, and a 37.5 Hz grid whose
 * key times carry float32 noise. Deterministic (seeded), metres.
 */
import { Document, Format, GLB_BUFFER, NodeIO, type Node } from '@gltf-transform/core';
import {
  KHRLightsPunctual,
  KHRMaterialsClearcoat,
  KHRMaterialsEmissiveStrength,
  KHRONOS_EXTENSIONS,
  KHRTextureTransform,
} from '@gltf-transform/extensions';

import { mulberry32 } from './synthetic.js';
import { glbOf } from './glb.js';

/** A rig: the GLB bytes and a few facts the tests check against. */
export interface Rig {
  name: string;
  glb: Uint8Array;
  /** Key rate the animations were authored at (Hz). */
  keyRate: number;
}

interface BoneSpec {
  name?: string;
  parent: number; // -1: under the armature (or the scene)
  translation: [number, number, number];
}

interface RigSpec {
  name: string;
  bones: BoneSpec[];
  /** A non-joint parent of the root joints, as Blender exports it. */
  armatureScale?: number;
  keyRate: number;
  startTime: number;
  duration: number;
  animations: string[];
  interpolation: 'LINEAR' | 'STEP' | 'CUBICSPLINE';
  /** Largest rotation between neighbouring keys, degrees. */
  maxDegreesPerKey: number;
  /** Store key times as float32 sums of the interval (drifting in their last digits). */
  accumulateTimes?: boolean;
  seed: number;
}

const CHAIN = (names: (string | undefined)[]): BoneSpec[] =>
  names.map((name, i) => ({
    name,
    parent: i - 1,
    translation: [0, i === 0 ? 1 : 0.25, 0.02 * i] as [number, number, number],
  }));

/** The rigs, small enough for unit tests (a few bones, a few seconds). */
export async function makeRigs(): Promise<Rig[]> {
  const specs: RigSpec[] = [
    {
      name: 'mixamo',
      keyRate: 30,
      startTime: 0.1,
      duration: 2,
      interpolation: 'LINEAR',
      maxDegreesPerKey: 8,
      seed: 1,
      animations: ['Run', 'Idle'],
      bones: CHAIN([
        'mixamorig:Hips',
        'mixamorig:Spine',
        'mixamorig:LeftArm',
        'mixamorig:LeftForeArm',
        'mixamorig:LeftHand',
      ]),
    },
    {
      name: 'blender',
      keyRate: 24,
      startTime: 0,
      duration: 2,
      interpolation: 'LINEAR',
      maxDegreesPerKey: 6,
      seed: 2,
      armatureScale: 0.01,
      animations: ['Walk', 'Wave'],
      bones: [
        { name: 'Hips', parent: -1, translation: [0, 100, 0] },
        { name: 'Thigh.L', parent: 0, translation: [10, -5, 0] },
        { name: 'Shin.L', parent: 1, translation: [0, -45, 0] },
        { name: 'Thigh.R', parent: 0, translation: [-10, -5, 0] },
        { name: 'Shin.R', parent: 3, translation: [0, -45, 0] },
      ],
    },
    {
      name: 'unnamed',
      keyRate: 25,
      startTime: 0,
      duration: 1.5,
      interpolation: 'LINEAR',
      maxDegreesPerKey: 5,
      seed: 3,
      animations: ['Take'],
      bones: CHAIN([undefined, undefined, 'named', undefined]),
    },
    {
      name: 'cubic',
      keyRate: 4,
      startTime: 0,
      duration: 2,
      interpolation: 'CUBICSPLINE',
      maxDegreesPerKey: 30,
      seed: 4,
      animations: ['Curve'],
      bones: CHAIN(['a', 'b', 'c', 'd']),
    },
    {
      name: 'step',
      keyRate: 10,
      startTime: 0.2,
      duration: 2,
      interpolation: 'STEP',
      maxDegreesPerKey: 20,
      seed: 5,
      animations: ['Steps'],
      bones: CHAIN(['root', 'mid', 'tip']),
    },
    {
      name: 'fast',
      keyRate: 30,
      startTime: 0,
      duration: 1,
      interpolation: 'LINEAR',
      maxDegreesPerKey: 120,
      seed: 6,
      animations: ['Punch'],
      bones: CHAIN(['shoulder', 'elbow', 'wrist']),
    },
    {
      name: 'noisy',
      keyRate: 37.5,
      startTime: 0,
      duration: 12,
      interpolation: 'LINEAR',
      maxDegreesPerKey: 4,
      seed: 7,
      accumulateTimes: true,
      animations: ['Long'],
      bones: CHAIN(['pelvis', 'spine', 'head']),
    },
  ];
  return Promise.all(
    specs.map(async (spec) => ({ name: spec.name, glb: await buildRig(spec), keyRate: spec.keyRate })),
  );
}

async function buildRig(spec: RigSpec): Promise<Uint8Array> {
  const random = mulberry32(spec.seed);
  const doc = new Document();
  const buffer = doc.createBuffer('data');
  const scene = doc.createScene('Scene');
  const skin = doc.createSkin('skin');
  let parentOfRoots: Node | undefined;
  if (spec.armatureScale !== undefined) {
    parentOfRoots = doc.createNode('Armature').setScale([spec.armatureScale, spec.armatureScale, spec.armatureScale]);
    scene.addChild(parentOfRoots);
  }
  const nodes = spec.bones.map((bone) => {
    const node = doc.createNode(bone.name ?? '').setTranslation(bone.translation);
    skin.addJoint(node);
    return node;
  });
  nodes.forEach((node, i) => {
    const p = spec.bones[i].parent;
    if (p >= 0) nodes[p].addChild(node);
    else if (parentOfRoots) parentOfRoots.addChild(node);
    else scene.addChild(node);
  });
  // A skinned triangle, so loaders see the skin in use (GLTFLoader makes its joints Bones).
  const mesh = doc.createMesh('body').addPrimitive(
    doc
      .createPrimitive()
      .setAttribute(
        'POSITION',
        doc
          .createAccessor()
          .setType('VEC3')
          .setBuffer(buffer)
          .setArray(new Float32Array([0, 0, 0, 1, 0, 0, 0, 1, 0])),
      )
      .setAttribute(
        'JOINTS_0',
        doc
          .createAccessor()
          .setType('VEC4')
          .setBuffer(buffer)
          .setArray(new Uint16Array([0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0])),
      )
      .setAttribute(
        'WEIGHTS_0',
        doc
          .createAccessor()
          .setType('VEC4')
          .setBuffer(buffer)
          .setArray(new Float32Array([1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0])),
      ),
  );
  skin.setInverseBindMatrices(
    doc
      .createAccessor()
      .setType('MAT4')
      .setBuffer(buffer)
      .setArray(new Float32Array(nodes.length * 16).map((_, i) => ((i % 16) % 5 === 0 ? 1 : 0))),
  );
  scene.addChild(doc.createNode('Body').setMesh(mesh).setSkin(skin));

  const keyCount = Math.round(spec.duration * spec.keyRate) + 1;
  const times = new Float32Array(keyCount);
  let t = spec.startTime;
  for (let k = 0; k < keyCount; k++) {
    times[k] = spec.accumulateTimes ? t : spec.startTime + k / spec.keyRate;
    t = Math.fround(t + Math.fround(1 / spec.keyRate));
  }
  const input = doc.createAccessor('times').setType('SCALAR').setBuffer(buffer).setArray(times);
  const cubic = spec.interpolation === 'CUBICSPLINE';
  for (const animName of spec.animations) {
    const anim = doc.createAnimation(animName);
    nodes.forEach((node, b) => {
      // A random walk of rotations, each step at most maxDegreesPerKey about a random axis.
      const rotations: number[] = [];
      let q = [0, 0, 0, 1];
      for (let k = 0; k < keyCount; k++) {
        const axis = normalize([random() - 0.5, random() - 0.5, random() - 0.5]);
        const angle = ((spec.maxDegreesPerKey * Math.PI) / 180) * (0.5 + 0.5 * random());
        q = normalize(
          multiply(q, [
            axis[0] * Math.sin(angle / 2),
            axis[1] * Math.sin(angle / 2),
            axis[2] * Math.sin(angle / 2),
            Math.cos(angle / 2),
          ]),
        );
        if (cubic) rotations.push(...scaled(randomVec(random, 4), 0.5), ...q, ...scaled(randomVec(random, 4), 0.5));
        else rotations.push(...q);
      }
      const output = doc.createAccessor().setType('VEC4').setBuffer(buffer).setArray(new Float32Array(rotations));
      const sampler = doc
        .createAnimationSampler()
        .setInput(input)
        .setOutput(output)
        .setInterpolation(spec.interpolation);
      anim
        .addSampler(sampler)
        .addChannel(doc.createAnimationChannel().setTargetNode(node).setTargetPath('rotation').setSampler(sampler));
      if (b !== 0) return;
      // The root also moves.
      const base = spec.bones[0].translation;
      const translations: number[] = [];
      for (let k = 0; k < keyCount; k++) {
        const p = [
          base[0] + 0.3 * Math.sin(k * 0.3),
          base[1] + 0.05 * Math.cos(k * 0.7),
          base[2] + (0.1 * k) / keyCount,
        ];
        if (cubic) translations.push(...scaled(randomVec(random, 3), 0.2), ...p, ...scaled(randomVec(random, 3), 0.2));
        else translations.push(...p);
      }
      const tOut = doc.createAccessor().setType('VEC3').setBuffer(buffer).setArray(new Float32Array(translations));
      const tSampler = doc
        .createAnimationSampler()
        .setInput(input)
        .setOutput(tOut)
        .setInterpolation(spec.interpolation);
      anim
        .addSampler(tSampler)
        .addChannel(doc.createAnimationChannel().setTargetNode(node).setTargetPath('translation').setSampler(tSampler));
    });
  }
  return new NodeIO().writeBinary(doc);
}

function normalize(v: number[]): number[] {
  const len = Math.hypot(...v) || 1;
  return v.map((x) => x / len);
}

function multiply(a: number[], b: number[]): number[] {
  const [ax, ay, az, aw] = a,
    [bx, by, bz, bw] = b;
  return [
    aw * bx + ax * bw + ay * bz - az * by,
    aw * by - ax * bz + ay * bw + az * bx,
    aw * bz + ax * by - ay * bx + az * bw,
    aw * bw - ax * bx - ay * by - az * bz,
  ];
}

function randomVec(random: () => number, n: number): number[] {
  return Array.from({ length: n }, () => random() - 0.5);
}

function scaled(v: number[], k: number): number[] {
  return v.map((x) => x * k);
}

/**
 * A scene for pass-through checks: two skinned characters (two skins, one animation each
 * plus one that moves both), a mesh with a morph target whose weight is animated in the same
 * animation as a skeleton, an animated camera node, a material with a PNG texture, and node
 * and animation extras. Metres, deterministic. `texture: false` leaves the texture out (three's
 * GLTFLoader cannot decode images in Node).
 */
export async function makeSceneRig(options: { texture?: boolean } = {}): Promise<Uint8Array> {
  const random = mulberry32(11);
  const doc = new Document();
  const buffer = doc.createBuffer('data');
  const scene = doc.createScene('Scene');
  const times = new Float32Array(Array.from({ length: 31 }, (_, k) => k / 30));
  const input = doc.createAccessor('times').setType('SCALAR').setBuffer(buffer).setArray(times);
  const vec = (type: 'VEC3' | 'VEC4', values: number[]) =>
    doc.createAccessor().setType(type).setBuffer(buffer).setArray(new Float32Array(values));
  const channel = (
    anim: ReturnType<Document['createAnimation']>,
    node: Node,
    path: 'rotation' | 'translation' | 'weights',
    output: ReturnType<Document['createAccessor']>,
  ) => {
    const sampler = doc.createAnimationSampler().setInput(input).setOutput(output).setInterpolation('LINEAR');
    anim
      .addSampler(sampler)
      .addChannel(doc.createAnimationChannel().setTargetNode(node).setTargetPath(path).setSampler(sampler));
  };
  const wiggle = (): number[] => {
    const out: number[] = [];
    for (let k = 0; k < times.length; k++) {
      const a = 0.4 * Math.sin(k * 0.2 + random() * 0.1);
      out.push(Math.sin(a / 2), 0, 0, Math.cos(a / 2));
    }
    return out;
  };
  const characters = ['A', 'B'].map((tag, c) => {
    const skin = doc.createSkin(`skin${tag}`);
    const joints = [0, 1, 2].map((i) => doc.createNode(`${tag}${i}`).setTranslation([c, i === 0 ? 1 : 0.3, 0]));
    joints.forEach((j) => skin.addJoint(j));
    joints[0].addChild(joints[1]);
    joints[1].addChild(joints[2]);
    scene.addChild(joints[0]);
    skin.setInverseBindMatrices(
      doc
        .createAccessor()
        .setType('MAT4')
        .setBuffer(buffer)
        .setArray(new Float32Array(48).map((_, i) => ((i % 16) % 5 === 0 ? 1 : 0))),
    );
    const mesh = doc.createMesh(`body${tag}`).addPrimitive(
      doc
        .createPrimitive()
        .setAttribute('POSITION', vec('VEC3', [0, 0, 0, 1, 0, 0, 0, 1, 0]))
        .setAttribute(
          'JOINTS_0',
          doc
            .createAccessor()
            .setType('VEC4')
            .setBuffer(buffer)
            .setArray(new Uint16Array([0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0])),
        )
        .setAttribute('WEIGHTS_0', vec('VEC4', [1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0])),
    );
    scene.addChild(doc.createNode(`Body${tag}`).setMesh(mesh).setSkin(skin));
    return joints;
  });
  const png = Uint8Array.from([
    137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 31, 21, 196,
    137, 0, 0, 0, 13, 73, 68, 65, 84, 120, 218, 99, 248, 207, 192, 240, 31, 0, 5, 0, 1, 255, 137, 153, 61, 29, 0, 0, 0,
    0, 73, 69, 78, 68, 174, 66, 96, 130,
  ]);
  const material = doc.createMaterial('skin');
  if (options.texture !== false)
    material.setBaseColorTexture(doc.createTexture('albedo').setImage(png).setMimeType('image/png'));
  const face = doc
    .createMesh('face')
    .setWeights([0])
    .addPrimitive(
      doc
        .createPrimitive()
        .setMaterial(material)
        .setAttribute('POSITION', vec('VEC3', [0, 0, 0, 1, 0, 0, 0, 1, 0]))
        .setAttribute(
          'TEXCOORD_0',
          doc
            .createAccessor()
            .setType('VEC2')
            .setBuffer(buffer)
            .setArray(new Float32Array([0, 0, 1, 0, 0, 1])),
        )
        .addTarget(
          doc.createPrimitiveTarget('smile').setAttribute('POSITION', vec('VEC3', [0, 0.1, 0, 0, 0.2, 0, 0, 0, 0])),
        ),
    );
  const faceNode = doc.createNode('Face').setMesh(face).setExtras({ note: 'kept' });
  characters[0][2].addChild(faceNode);
  const camera = doc
    .createNode('Camera')
    .setCamera(
      doc.createCamera('cam').setType('perspective').setYFov(0.8).setZNear(0.1).setZFar(100).setAspectRatio(1.5),
    );
  scene.addChild(camera);

  const walkA = doc.createAnimation('WalkA').setExtras({ loop: true });
  characters[0].forEach((j) => channel(walkA, j, 'rotation', vec('VEC4', wiggle())));
  channel(walkA, characters[0][0], 'translation', vec('VEC3', Array.from(times, (t) => [0, 1 + 0.1 * t, 0]).flat()));
  channel(
    walkA,
    faceNode,
    'weights',
    doc
      .createAccessor()
      .setType('SCALAR')
      .setBuffer(buffer)
      .setArray(new Float32Array(Array.from(times, (t) => t))),
  );
  const waveB = doc.createAnimation('WaveB');
  characters[1].forEach((j) => channel(waveB, j, 'rotation', vec('VEC4', wiggle())));
  const both = doc.createAnimation('Both');
  [...characters[0], ...characters[1]].forEach((j) => channel(both, j, 'rotation', vec('VEC4', wiggle())));
  const fly = doc.createAnimation('CameraFly');
  channel(fly, camera, 'translation', vec('VEC3', Array.from(times, (t) => [t, 2, 5]).flat()));
  return new NodeIO().writeBinary(doc);
}

/**
 * {@link makeSceneRig} with what real pipelines add around the animation: a material with
 * `KHR_materials_clearcoat` and `KHR_materials_emissive_strength`, a `KHR_texture_transform`
 * on its texture, a `KHR_lights_punctual` light, a `KHR_animation_pointer` channel on the
 * camera's field of view in "CameraFly", and an optional extension no tool knows
 * (`VENDOR_unknown_thing`, on the scene) — or, with `requireUnknown`, a required one.
 */
export async function makeExtendedSceneRig(options: { requireUnknown?: boolean } = {}): Promise<Uint8Array> {
  const io = new NodeIO().registerExtensions(KHRONOS_EXTENSIONS);
  const doc = await io.readBinary(await makeSceneRig());
  const material = doc.getRoot().listMaterials()[0].setEmissiveFactor([1, 0.5, 0.25]);
  material.setExtension(
    'KHR_materials_clearcoat',
    doc
      .createExtension(KHRMaterialsClearcoat)
      .createClearcoat()
      .setClearcoatFactor(0.75)
      .setClearcoatRoughnessFactor(0.125),
  );
  material.setExtension(
    'KHR_materials_emissive_strength',
    doc.createExtension(KHRMaterialsEmissiveStrength).createEmissiveStrength().setEmissiveStrength(4),
  );
  material
    .getBaseColorTextureInfo()!
    .setExtension(
      'KHR_texture_transform',
      doc.createExtension(KHRTextureTransform).createTransform().setScale([2, 2]).setOffset([0.25, 0]),
    );
  const light = doc.createExtension(KHRLightsPunctual).createLight('sun').setType('directional').setIntensity(3);
  doc.getRoot().listScenes()[0].addChild(doc.createNode('Sun').setExtension('KHR_lights_punctual', light));
  // GLB layout: one buffer without a uri (the BIN chunk), images inside it.
  const { json, resources } = await io.writeJSON(doc, { format: Format.GLB });
  // Edited as JSON: glTF-Transform knows neither of these extensions.
  const fly = json.animations!.find((a) => a.name === 'CameraFly')!;
  const times = fly.samplers[0].input;
  const buffer = json.buffers![0];
  const data = resources[GLB_BUFFER];
  const fov = new Float32Array(json.accessors![times].count).map((_, k) => 0.8 + 0.01 * k);
  const grown = new Uint8Array(data.byteLength + fov.byteLength);
  grown.set(data);
  grown.set(new Uint8Array(fov.buffer), data.byteLength);
  buffer.byteLength = grown.byteLength;
  json.bufferViews!.push({ buffer: 0, byteOffset: data.byteLength, byteLength: fov.byteLength });
  json.accessors!.push({
    bufferView: json.bufferViews!.length - 1,
    componentType: 5126,
    count: fov.length,
    type: 'SCALAR',
  });
  fly.samplers.push({ input: times, output: json.accessors!.length - 1, interpolation: 'LINEAR' });
  fly.channels.push({
    sampler: fly.samplers.length - 1,
    target: {
      path: 'pointer' as never,
      extensions: { KHR_animation_pointer: { pointer: '/cameras/0/perspective/yfov' } },
    },
  });
  const unknown = 'VENDOR_unknown_thing';
  json.extensionsUsed = [...(json.extensionsUsed ?? []), 'KHR_animation_pointer', unknown];
  if (options.requireUnknown) json.extensionsRequired = [...(json.extensionsRequired ?? []), unknown];
  json.scenes![0].extensions = { [unknown]: { level: 3 } };
  return glbOf(json, grown);
}

/**
 * A scene for the extra bones of `BONEPRESS_animation_compression`: a skinned character
 * (so the file has a bone table), a "Crate" prop outside any skin (a 1 m box with a child
 * lid, turning and moving), a "Blob" mesh with two morph targets (largest displacements
 * 0.5 m and 0.05 m) whose weights are animated LINEAR and a "Blink" mesh with one
 * CUBICSPLINE-animated target, and a camera that pans. All in one animation "Scene" plus a
 * second, "Props", that moves only the crate. Metres, deterministic.
 */
export async function makePropRig(): Promise<Uint8Array> {
  const doc = new Document();
  const buffer = doc.createBuffer('data');
  const scene = doc.createScene('Scene');
  const f32 = (type: 'SCALAR' | 'VEC3' | 'VEC4', values: number[]) =>
    doc.createAccessor().setType(type).setBuffer(buffer).setArray(new Float32Array(values));
  const box = (half: number) =>
    doc
      .createMesh()
      .addPrimitive(
        doc
          .createPrimitive()
          .setAttribute('POSITION', f32('VEC3', [-half, -half, -half, half, -half, -half, -half, half, half])),
      );
  const keyCount = 61;
  const times = f32(
    'SCALAR',
    Array.from({ length: keyCount }, (_, k) => k / 30),
  );
  const anim = doc.createAnimation('Scene');
  const props = doc.createAnimation('Props');
  const channel = (
    a: typeof anim,
    node: Node,
    path: 'rotation' | 'translation' | 'weights',
    output: ReturnType<typeof f32>,
    interpolation: 'LINEAR' | 'CUBICSPLINE' = 'LINEAR',
    input = times,
  ) => {
    const sampler = doc.createAnimationSampler().setInput(input).setOutput(output).setInterpolation(interpolation);
    a.addSampler(sampler).addChannel(
      doc.createAnimationChannel().setTargetNode(node).setTargetPath(path).setSampler(sampler),
    );
  };
  const spin = (k: number, speed: number): number[] => [0, Math.sin((k * speed) / 2), 0, Math.cos((k * speed) / 2)];

  const skin = doc.createSkin('skin');
  const joints = [0, 1].map((i) => doc.createNode(`J${i}`).setTranslation([0, i === 0 ? 1 : 0.5, 0]));
  joints.forEach((j) => skin.addJoint(j));
  joints[0].addChild(joints[1]);
  scene.addChild(joints[0]);
  skin.setInverseBindMatrices(
    f32('SCALAR', [])
      .setType('MAT4')
      .setArray(new Float32Array(32).map((_, i) => ((i % 16) % 5 === 0 ? 1 : 0))),
  );
  scene.addChild(
    doc
      .createNode('Body')
      .setSkin(skin)
      .setMesh(
        doc.createMesh().addPrimitive(
          doc
            .createPrimitive()
            .setAttribute('POSITION', f32('VEC3', [0, 0, 0, 1, 0, 0, 0, 1, 0]))
            .setAttribute(
              'JOINTS_0',
              doc
                .createAccessor()
                .setType('VEC4')
                .setBuffer(buffer)
                .setArray(new Uint16Array([0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0])),
            )
            .setAttribute('WEIGHTS_0', f32('VEC4', [1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0])),
        ),
      ),
  );
  channel(anim, joints[1], 'rotation', f32('VEC4', Array.from({ length: keyCount }, (_, k) => spin(k, 0.05)).flat()));

  const crate = doc.createNode('Crate').setMesh(box(0.5)).setTranslation([2, 0, 0]);
  crate.addChild(doc.createNode('Lid').setMesh(box(0.25)).setTranslation([0, 0.6, 0]));
  scene.addChild(crate);
  const crateTurn = f32('VEC4', Array.from({ length: keyCount }, (_, k) => spin(k, 0.08)).flat());
  const crateMove = f32(
    'VEC3',
    Array.from({ length: keyCount }, (_, k) => [2 + 0.3 * Math.sin(k / 9), (0.1 * k) / keyCount, 0]).flat(),
  );
  for (const a of [anim, props]) {
    channel(a, crate, 'rotation', crateTurn);
    channel(a, crate, 'translation', crateMove);
  }

  const blobMesh = doc
    .createMesh('blob')
    .setWeights([0.25, 0])
    .addPrimitive(
      doc
        .createPrimitive()
        .setAttribute('POSITION', f32('VEC3', [0, 0, 0, 1, 0, 0, 0, 1, 0]))
        .addTarget(
          doc.createPrimitiveTarget('big').setAttribute('POSITION', f32('VEC3', [0, 0.3, 0.4, 0, 0, 0, 0, 0, 0])),
        )
        .addTarget(
          doc.createPrimitiveTarget('small').setAttribute('POSITION', f32('VEC3', [0, 0, 0, 0.05, 0, 0, 0, 0, 0])),
        ),
    );
  const blob = doc.createNode('Blob').setMesh(blobMesh).setTranslation([-2, 0, 0]);
  scene.addChild(blob);
  channel(
    anim,
    blob,
    'weights',
    f32(
      'SCALAR',
      Array.from({ length: keyCount }, (_, k) => [0.5 + 0.5 * Math.sin(k / 7), 0.5 - 0.5 * Math.cos(k / 5)]).flat(),
    ),
  );

  const blinkMesh = doc
    .createMesh('blink')
    .setWeights([0])
    .addPrimitive(
      doc
        .createPrimitive()
        .setAttribute('POSITION', f32('VEC3', [0, 0, 0, 0.1, 0, 0, 0, 0.1, 0]))
        .addTarget(
          doc.createPrimitiveTarget('shut').setAttribute('POSITION', f32('VEC3', [0, -0.02, 0, 0, -0.02, 0, 0, 0, 0])),
        ),
    );
  const blink = doc.createNode('Blink').setMesh(blinkMesh);
  joints[1].addChild(blink);
  const blinkTimes = f32('SCALAR', [0, 0.5, 1, 1.5, 2]);
  // CUBICSPLINE: in-tangent, value, out-tangent per key.
  channel(
    anim,
    blink,
    'weights',
    f32('SCALAR', [0, 0, 1, -1, 1, 0, 0, 0, 0.5, 1, 0.2, -1, 0, 0, 0]),
    'CUBICSPLINE',
    blinkTimes,
  );

  const camera = doc
    .createNode('Camera')
    .setTranslation([0, 1.5, 5])
    .setCamera(
      doc.createCamera('cam').setType('perspective').setYFov(0.8).setZNear(0.1).setZFar(100).setAspectRatio(1.5),
    );
  scene.addChild(camera);
  channel(anim, camera, 'rotation', f32('VEC4', Array.from({ length: keyCount }, (_, k) => spin(k, 0.01)).flat()));
  return new NodeIO().writeBinary(doc);
}
