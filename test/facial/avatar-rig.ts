/**
 * A web-avatar-shaped face-capture asset made in code: a 67-bone humanoid skin (Mixamo /
 * Ready Player Me bone names, metres, facing +z) and a skinned head mesh about 20 cm across
 * carrying the 52 ARKit blendshapes as morph targets (displacements from a few mm to 2 cm,
 * each on its region of the face), with one animation keyed at 60 Hz for 30 s the way a
 * face-capture recording is baked: every bone's rotation, the hips' translation, and the 52
 * weights (slow expression drift, blinks, bursts of speech, and sensor jitter, clamped to
 * 0…1). Deterministic (seeded).
 */
import { Document, NodeIO, type Node } from '@gltf-transform/core';

import { mulberry32 } from '../utils/synthetic.js';

/** The 52 ARKit blendshape names, in ARKit's order. */
export const ARKIT_BLENDSHAPES = [
  'eyeBlinkLeft',
  'eyeLookDownLeft',
  'eyeLookInLeft',
  'eyeLookOutLeft',
  'eyeLookUpLeft',
  'eyeSquintLeft',
  'eyeWideLeft',
  'eyeBlinkRight',
  'eyeLookDownRight',
  'eyeLookInRight',
  'eyeLookOutRight',
  'eyeLookUpRight',
  'eyeSquintRight',
  'eyeWideRight',
  'jawForward',
  'jawLeft',
  'jawRight',
  'jawOpen',
  'mouthClose',
  'mouthFunnel',
  'mouthPucker',
  'mouthLeft',
  'mouthRight',
  'mouthSmileLeft',
  'mouthSmileRight',
  'mouthFrownLeft',
  'mouthFrownRight',
  'mouthDimpleLeft',
  'mouthDimpleRight',
  'mouthStretchLeft',
  'mouthStretchRight',
  'mouthRollLower',
  'mouthRollUpper',
  'mouthShrugLower',
  'mouthShrugUpper',
  'mouthPressLeft',
  'mouthPressRight',
  'mouthLowerDownLeft',
  'mouthLowerDownRight',
  'mouthUpperUpLeft',
  'mouthUpperUpRight',
  'browDownLeft',
  'browDownRight',
  'browInnerUp',
  'browOuterUpLeft',
  'browOuterUpRight',
  'cheekPuff',
  'cheekSquintLeft',
  'cheekSquintRight',
  'noseSneerLeft',
  'noseSneerRight',
  'tongueOut',
] as const;

/** Names the generated asset uses (the tests and scripts/facial-sizes.mjs look them up). */
export const AVATAR = {
  animation: 'FaceCapture',
  headMesh: 'Wolf3D_Head',
  keyRate: 60,
  duration: 30,
} as const;

type Vec3 = [number, number, number];

interface Bone {
  name: string;
  parent: number;
  offset: Vec3;
}

/** The skeleton: 9 spine/head bones, 24 per arm (shoulder to finger tips), 5 per leg. */
function humanoid(): Bone[] {
  const bones: Bone[] = [];
  const add = (name: string, parent: string | null, offset: Vec3): void => {
    bones.push({ name, parent: parent === null ? -1 : bones.findIndex((b) => b.name === parent), offset });
  };
  add('Hips', null, [0, 1.0, 0]);
  add('Spine', 'Hips', [0, 0.1, 0]);
  add('Spine1', 'Spine', [0, 0.12, 0]);
  add('Spine2', 'Spine1', [0, 0.12, 0]);
  add('Neck', 'Spine2', [0, 0.15, 0]);
  add('Head', 'Neck', [0, 0.1, 0.01]);
  add('HeadTop_End', 'Head', [0, 0.21, 0]);
  for (const [side, s] of [
    ['Left', 1],
    ['Right', -1],
  ] as const) {
    add(`${side}Eye`, 'Head', [0.032 * s, 0.1, 0.07]);
  }
  for (const [side, s] of [
    ['Left', 1],
    ['Right', -1],
  ] as const) {
    add(`${side}Shoulder`, 'Spine2', [0.06 * s, 0.1, 0]);
    add(`${side}Arm`, `${side}Shoulder`, [0.1 * s, 0, 0]);
    add(`${side}ForeArm`, `${side}Arm`, [0.27 * s, 0, 0]);
    add(`${side}Hand`, `${side}ForeArm`, [0.25 * s, 0, 0]);
    ['Thumb', 'Index', 'Middle', 'Ring', 'Pinky'].forEach((finger, f) => {
      const base: Vec3 = finger === 'Thumb' ? [0.03 * s, -0.01, 0.03] : [0.09 * s, 0, 0.03 - 0.015 * f];
      add(`${side}Hand${finger}1`, `${side}Hand`, base);
      for (let j = 2; j <= 4; j++) add(`${side}Hand${finger}${j}`, `${side}Hand${finger}${j - 1}`, [0.03 * s, 0, 0]);
    });
  }
  for (const [side, s] of [
    ['Left', 1],
    ['Right', -1],
  ] as const) {
    add(`${side}UpLeg`, 'Hips', [0.09 * s, -0.05, 0]);
    add(`${side}Leg`, `${side}UpLeg`, [0, -0.42, 0]);
    add(`${side}Foot`, `${side}Leg`, [0, -0.42, 0]);
    add(`${side}ToeBase`, `${side}Foot`, [0, -0.05, 0.12]);
    add(`${side}Toe_End`, `${side}ToeBase`, [0, 0, 0.05]);
  }
  return bones;
}

/** Where a blendshape moves the face: a region (centre and radius, head space) and its largest displacement. */
interface Region {
  centre: Vec3;
  radius: number;
  move: Vec3;
}

/** Head space: the ellipsoid's centre; the face looks down +z, the character's left is +x. */
const EYE: Vec3 = [0.032, 0.03, 0.078];
const LIPS_UPPER: Vec3 = [0, -0.035, 0.088];
const LIPS_LOWER: Vec3 = [0, -0.055, 0.085];

/**
 * The region and displacement of each ARKit blendshape, for the left side (x > 0) where it
 * is sided; the right one mirrors it. Magnitudes follow what such heads carry: a few mm for
 * eyelids and lips, about 1 cm for the smile and brows, 2 cm for the open jaw.
 */
function regionsOf(name: string): Region[] {
  const side = name.endsWith('Right') ? -1 : 1;
  const m = (v: Vec3): Vec3 => [v[0] * side, v[1], v[2]];
  const at = (centre: Vec3, radius: number, move: Vec3): Region[] => [{ centre: m(centre), radius, move: m(move) }];
  const base = name.replace(/Left$|Right$/, '');
  switch (base) {
    case 'eyeBlink':
      return at([EYE[0], EYE[1] + 0.006, EYE[2]], 0.022, [0, -0.009, 0.002]);
    case 'eyeLookDown':
      return at(EYE, 0.014, [0, -0.003, 0]);
    case 'eyeLookUp':
      return at(EYE, 0.014, [0, 0.003, 0]);
    case 'eyeLookIn':
      return at(EYE, 0.014, [-0.003, 0, 0]);
    case 'eyeLookOut':
      return at(EYE, 0.014, [0.003, 0, 0]);
    case 'eyeSquint':
      return at([EYE[0], EYE[1] - 0.01, EYE[2]], 0.02, [0, 0.004, 0]);
    case 'eyeWide':
      return at([EYE[0], EYE[1] + 0.01, EYE[2]], 0.02, [0, 0.004, 0.001]);
    case 'jawForward':
      return at([0, -0.075, 0.06], 0.07, [0, 0, 0.008]);
    case 'jaw':
      return at([0, -0.075, 0.06], 0.07, [name === 'jawLeft' ? 0.008 : -0.008, 0, 0]);
    case 'jawOpen':
      return at([0, -0.085, 0.06], 0.075, [0, -0.02, -0.004]);
    case 'mouthClose':
      return at([0, -0.05, 0.087], 0.022, [0, 0.006, 0]);
    case 'mouthFunnel':
      return at([0, -0.045, 0.088], 0.025, [0, 0, 0.008]);
    case 'mouthPucker':
      return at([0, -0.045, 0.088], 0.02, [0, 0, 0.01]);
    case 'mouth':
      return at([0, -0.045, 0.087], 0.03, [name === 'mouthLeft' ? 0.01 : -0.01, 0, 0]);
    case 'mouthSmile':
      return at([0.026, -0.045, 0.08], 0.025, [0.006, 0.009, -0.003]);
    case 'mouthFrown':
      return at([0.026, -0.05, 0.08], 0.022, [0.002, -0.007, 0]);
    case 'mouthDimple':
      return at([0.028, -0.045, 0.078], 0.018, [0.004, 0, -0.004]);
    case 'mouthStretch':
      return at([0.026, -0.048, 0.08], 0.022, [0.008, -0.003, 0]);
    case 'mouthRollLower':
      return at(LIPS_LOWER, 0.015, [0, 0.003, -0.005]);
    case 'mouthRollUpper':
      return at(LIPS_UPPER, 0.015, [0, -0.003, -0.005]);
    case 'mouthShrugLower':
      return at(LIPS_LOWER, 0.02, [0, 0.004, 0.002]);
    case 'mouthShrugUpper':
      return at(LIPS_UPPER, 0.02, [0, 0.003, 0.002]);
    case 'mouthPress':
      return at([0.012, -0.045, 0.086], 0.015, [0, 0, -0.003]);
    case 'mouthLowerDown':
      return at([0.01, -0.055, 0.085], 0.018, [0, -0.006, 0]);
    case 'mouthUpperUp':
      return at([0.01, -0.035, 0.088], 0.018, [0, 0.005, 0]);
    case 'browDown':
      return at([0.035, 0.055, 0.08], 0.03, [-0.002, -0.006, 0]);
    case 'browInnerUp':
      return at([0, 0.055, 0.088], 0.03, [0, 0.008, 0]);
    case 'browOuterUp':
      return at([0.05, 0.055, 0.07], 0.03, [0, 0.008, 0]);
    case 'cheekPuff':
      return [
        ...at([0.05, -0.035, 0.06], 0.035, [0.008, 0, 0.004]),
        { centre: [-0.05, -0.035, 0.06], radius: 0.035, move: [-0.008, 0, 0.004] },
      ];
    case 'cheekSquint':
      return at([0.045, 0.005, 0.075], 0.025, [0, 0.005, 0]);
    case 'noseSneer':
      return at([0.012, 0.01, 0.095], 0.02, [0, 0.004, -0.001]);
    case 'tongueOut':
      return at([0, -0.05, 0.088], 0.015, [0, -0.002, 0.015]);
    default:
      throw new Error(`no region for blendshape ${name}`);
  }
}

/** Smooth falloff: 1 at the centre, 0 from `radius` on. */
function falloff(d: number, radius: number): number {
  const s = d / radius;
  return s >= 1 ? 0 : (1 - s * s) ** 2;
}

/** The head: a UV ellipsoid (radii in x, y, z) about `centre`, in model space. */
const HEAD_RADII: Vec3 = [0.08, 0.11, 0.095];

interface HeadGeometry {
  positions: Float32Array;
  indices: Uint16Array;
  targets: Float32Array[];
}

function headGeometry(centre: Vec3, segments = 48, rings = 32): HeadGeometry {
  const positions: number[] = [],
    local: Vec3[] = [],
    indices: number[] = [];
  for (let r = 0; r <= rings; r++) {
    const phi = (Math.PI * r) / rings;
    for (let s = 0; s <= segments; s++) {
      const theta = (2 * Math.PI * s) / segments;
      const p: Vec3 = [
        HEAD_RADII[0] * Math.sin(phi) * Math.sin(theta),
        HEAD_RADII[1] * Math.cos(phi),
        HEAD_RADII[2] * Math.sin(phi) * Math.cos(theta),
      ];
      local.push(p);
      positions.push(p[0] + centre[0], p[1] + centre[1], p[2] + centre[2]);
    }
  }
  for (let r = 0; r < rings; r++) {
    for (let s = 0; s < segments; s++) {
      const a = r * (segments + 1) + s,
        b = a + segments + 1;
      indices.push(a, b, a + 1, b, b + 1, a + 1);
    }
  }
  const targets = ARKIT_BLENDSHAPES.map((name) => {
    const out = new Float32Array(local.length * 3);
    for (const { centre: c, radius, move } of regionsOf(name)) {
      local.forEach((p, v) => {
        const w = falloff(Math.hypot(p[0] - c[0], p[1] - c[1], p[2] - c[2]), radius);
        for (let i = 0; i < 3; i++) out[v * 3 + i] += w * move[i];
      });
    }
    return out;
  });
  return { positions: new Float32Array(positions), indices: new Uint16Array(indices), targets };
}

/** Face-capture-like weight curves: `keyCount` keys of each of the 52 blendshapes, key-major (glTF's layout). */
function weightCurves(random: () => number, keyCount: number, rate: number): Float32Array {
  const count = ARKIT_BLENDSHAPES.length;
  const out = new Float32Array(keyCount * count);
  const gauss = (): number => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  // Blinks (both eyes together), every 2–6 s, 0.1–0.25 s long.
  const blinks: { at: number; width: number }[] = [];
  for (let t = 1 + 2 * random(); t < keyCount / rate; t += 2 + 4 * random())
    blinks.push({ at: t, width: 0.05 + 0.075 * random() });
  // Speech: syllables at about 4.5 Hz within three spans.
  const spans = [
    [0.5, 8],
    [11, 19.5],
    [23, 29],
  ];
  const syllables: { at: number; height: number }[] = [];
  for (const [from, to] of spans)
    for (let t = from; t < to; t += 0.16 + 0.12 * random()) syllables.push({ at: t, height: 0.3 + 0.6 * random() });
  const speechShapes = new Set([
    'jawOpen',
    'mouthClose',
    'mouthFunnel',
    'mouthPucker',
    'mouthLowerDownLeft',
    'mouthLowerDownRight',
    'mouthUpperUpLeft',
    'mouthUpperUpRight',
    'mouthRollLower',
    'mouthRollUpper',
    'mouthPressLeft',
    'mouthPressRight',
    'mouthStretchLeft',
    'mouthStretchRight',
  ]);
  ARKIT_BLENDSHAPES.forEach((name, b) => {
    // Slow drift of expression: a few low-frequency sines around a small level.
    const waves = Array.from({ length: 3 }, () => ({
      f: 0.03 + 0.4 * random(),
      phase: 2 * Math.PI * random(),
      a: 0.05 + 0.15 * random(),
    }));
    const level = name.startsWith('tongue') ? -0.3 : 0.05 + 0.2 * random();
    const speechGain = speechShapes.has(name) ? (name === 'jawOpen' ? 1 : 0.3 + 0.4 * random()) : 0;
    const syllablePhase = random() * 0.05;
    const jitter = 0.003 + 0.006 * random();
    for (let k = 0; k < keyCount; k++) {
      const t = k / rate;
      let w = level;
      for (const { f, phase, a } of waves) w += a * Math.sin(2 * Math.PI * f * t + phase);
      if (name.startsWith('eyeBlink'))
        for (const { at, width } of blinks) w += Math.exp(-(((t - at) / width) ** 2)) * 0.95;
      if (speechGain > 0)
        for (const { at, height } of syllables)
          w += speechGain * height * Math.exp(-(((t - at - syllablePhase) / 0.06) ** 2));
      out[k * count + b] = Math.min(1, Math.max(0, w + jitter * gauss()));
    }
  });
  return out;
}

/** Quaternion (x, y, z, w) of Euler angles in radians, three.js order "ZYX". */
function euler(x: number, y: number, z: number): [number, number, number, number] {
  const [cx, sx, cy, sy, cz, sz] = [
    Math.cos(x / 2),
    Math.sin(x / 2),
    Math.cos(y / 2),
    Math.sin(y / 2),
    Math.cos(z / 2),
    Math.sin(z / 2),
  ];
  return [
    sx * cy * cz - cx * sy * sz,
    cx * sy * cz + sx * cy * sz,
    cx * cy * sz - sx * sy * cz,
    cx * cy * cz + sx * sy * sz,
  ];
}

/** The face-capture avatar as GLB bytes (see the module header). */
export async function makeFacialAvatar(seed = 35): Promise<Uint8Array> {
  const random = mulberry32(seed);
  const doc = new Document();
  const buffer = doc.createBuffer('data');
  const scene = doc.createScene('Scene');
  const armature = doc.createNode('Armature');
  scene.addChild(armature);
  const bones = humanoid();
  const world: Vec3[] = [];
  const skin = doc.createSkin('AvatarSkin');
  const nodes: Node[] = [];
  for (const bone of bones) {
    const node = doc.createNode(bone.name).setTranslation(bone.offset);
    const p = bone.parent >= 0 ? world[bone.parent] : [0, 0, 0];
    world.push([p[0] + bone.offset[0], p[1] + bone.offset[1], p[2] + bone.offset[2]]);
    (bone.parent >= 0 ? nodes[bone.parent] : armature).addChild(node);
    skin.addJoint(node);
    nodes.push(node);
  }
  skin.setSkeleton(nodes[0]);
  // Rest rotations are identity, so each inverse bind matrix is a translation by minus the joint's position.
  const ibm = new Float32Array(bones.length * 16);
  world.forEach((p, j) => {
    ibm.set([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, -p[0], -p[1], -p[2], 1], j * 16);
  });
  skin.setInverseBindMatrices(
    doc.createAccessor('inverseBindMatrices').setType('MAT4').setBuffer(buffer).setArray(ibm),
  );

  const head = bones.findIndex((b) => b.name === 'Head'),
    neck = bones.findIndex((b) => b.name === 'Neck');
  const centre: Vec3 = [world[head][0], world[head][1] + 0.1, world[head][2] + 0.01];
  const geometry = headGeometry(centre);
  const vertexCount = geometry.positions.length / 3;
  const joints = new Uint16Array(vertexCount * 4),
    skinWeights = new Float32Array(vertexCount * 4);
  for (let v = 0; v < vertexCount; v++) {
    // The lower back of the head follows the neck a little, as a skinned head does.
    const below = Math.min(1, Math.max(0, (centre[1] - 0.06 - geometry.positions[v * 3 + 1]) / 0.05));
    const h = Math.fround(1 - 0.5 * below);
    joints.set([head, neck, 0, 0], v * 4);
    skinWeights.set([h, Math.fround(1 - h), 0, 0], v * 4);
  }
  const primitive = doc
    .createPrimitive()
    .setAttribute('POSITION', doc.createAccessor().setType('VEC3').setBuffer(buffer).setArray(geometry.positions))
    .setAttribute('JOINTS_0', doc.createAccessor().setType('VEC4').setBuffer(buffer).setArray(joints))
    .setAttribute('WEIGHTS_0', doc.createAccessor().setType('VEC4').setBuffer(buffer).setArray(skinWeights))
    .setIndices(doc.createAccessor().setType('SCALAR').setBuffer(buffer).setArray(geometry.indices))
    .setMaterial(doc.createMaterial('Skin'));
  geometry.targets.forEach((target, t) => {
    primitive.addTarget(
      doc
        .createPrimitiveTarget(ARKIT_BLENDSHAPES[t])
        .setAttribute('POSITION', doc.createAccessor().setType('VEC3').setBuffer(buffer).setArray(target)),
    );
  });
  const mesh = doc
    .createMesh(AVATAR.headMesh)
    .addPrimitive(primitive)
    .setWeights(ARKIT_BLENDSHAPES.map(() => 0))
    .setExtras({ targetNames: [...ARKIT_BLENDSHAPES] });
  const headNode = doc.createNode(AVATAR.headMesh).setMesh(mesh).setSkin(skin);
  scene.addChild(headNode);

  const keyCount = AVATAR.keyRate * AVATAR.duration + 1;
  const times = doc
    .createAccessor('times')
    .setType('SCALAR')
    .setBuffer(buffer)
    .setArray(Float32Array.from({ length: keyCount }, (_, k) => k / AVATAR.keyRate));
  const anim = doc.createAnimation(AVATAR.animation);
  const channel = (
    node: Node,
    path: 'rotation' | 'translation' | 'weights',
    type: 'VEC4' | 'VEC3' | 'SCALAR',
    values: Float32Array,
  ): void => {
    const sampler = doc
      .createAnimationSampler()
      .setInput(times)
      .setInterpolation('LINEAR')
      .setOutput(doc.createAccessor().setType(type).setBuffer(buffer).setArray(values));
    anim
      .addSampler(sampler)
      .addChannel(doc.createAnimationChannel().setTargetNode(node).setTargetPath(path).setSampler(sampler));
  };
  const weights = weightCurves(random, keyCount, AVATAR.keyRate);
  const gauss = (): number => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const deg = Math.PI / 180;
  bones.forEach((bone, b) => {
    // Head and neck follow the captured head pose (slow turns, nods, tracking jitter); the eyes
    // follow the eyeLook weights; the rest of the body idles (breathing, sway).
    const amplitude =
      bone.name === 'Head'
        ? 14
        : bone.name === 'Neck'
          ? 6
          : /Spine|Hips/.test(bone.name)
            ? 2
            : /Hand.+\d/.test(bone.name)
              ? 3
              : 4;
    const jitter = bone.name === 'Head' || bone.name === 'Neck' ? 0.15 : 0.02;
    const waves = Array.from({ length: 3 }, () => ({ f: 0.05 + 0.3 * random(), phase: 2 * Math.PI * random() }));
    const rotations = new Float32Array(keyCount * 4);
    const eye = bone.name.endsWith('Eye') ? (bone.name.startsWith('Left') ? 'Left' : 'Right') : undefined;
    const w = (name: string, k: number): number =>
      weights[k * ARKIT_BLENDSHAPES.length + ARKIT_BLENDSHAPES.indexOf(name as never)];
    for (let k = 0; k < keyCount; k++) {
      const t = k / AVATAR.keyRate;
      const angle = (i: number): number =>
        amplitude * deg * Math.sin(2 * Math.PI * waves[i].f * t + waves[i].phase) + jitter * deg * gauss();
      const s = eye === 'Left' ? 1 : -1;
      const q = eye
        ? euler(
            25 * deg * (w(`eyeLookDown${eye}`, k) - w(`eyeLookUp${eye}`, k)),
            30 * deg * s * (w(`eyeLookOut${eye}`, k) - w(`eyeLookIn${eye}`, k)),
            0,
          )
        : euler(angle(0), angle(1), 0.5 * angle(2));
      rotations.set(q, k * 4);
    }
    channel(nodes[b], 'rotation', 'VEC4', rotations);
    if (b === 0) {
      const translations = new Float32Array(keyCount * 3);
      for (let k = 0; k < keyCount; k++) {
        const t = k / AVATAR.keyRate;
        translations.set([0.02 * Math.sin(0.4 * t), 1 + 0.005 * Math.sin(1.3 * t), 0.01 * Math.sin(0.25 * t)], k * 3);
      }
      channel(nodes[0], 'translation', 'VEC3', translations);
    }
  });
  channel(headNode, 'weights', 'SCALAR', weights);
  return new NodeIO().writeBinary(doc);
}
