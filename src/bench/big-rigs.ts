/**
 * Generated skeletons larger than the corpus's, for the bench's scaling rows: a long chain
 * (a rope or tail) and a body with face and fingers, as games ship them. Smooth motion from
 * seeded sines, so the same call gives the same clip on every machine.
 */
import { createRawClip, type RawClip } from '../clip/raw-clip.js';
import { createSkeleton, POSE_STRIDE } from '../clip/skeleton.js';
import { mulberry32 } from '../clip/random.js';

/** Samples per second of the generated clips. */
const RATE = 30;

/** One bone of a rig being built: its parent, bind offset (cm) and how much it moves. */
interface BoneSpec {
  name: string;
  parent: number;
  offset: [number, number, number];
  /** Largest rotation about each axis, radians. */
  swing: number;
  /** Largest translation about the bind offset, cm (facial bones slide). */
  slide: number;
}

/** A chain of `joints` bones 2 cm apart, a wave travelling down it (a rope, a tail). */
export function chainClip(joints: number, sampleCount: number): RawClip {
  const bones: BoneSpec[] = [];
  for (let b = 0; b < joints; b++)
    bones.push({
      name: `j${b}`,
      parent: b - 1,
      offset: b === 0 ? [0, 0, 0] : [0, 2, 0],
      swing: b === 0 ? 0.3 : 0.04,
      slide: 0,
    });
  return rigClip(`chain-${joints}`, bones, sampleCount, 1);
}

/**
 * A 300-bone character: a 22-bone body (the corpus's layout), 30 finger bones, and 248
 * face bones hanging off the head in short chains (brows, lids, lips, cheeks, tongue),
 * which slide and turn a little, as facial rigs do.
 */
export function bodyFaceFingersClip(sampleCount: number): RawClip {
  const bones: BoneSpec[] = [];
  const add = (name: string, parent: number, offset: [number, number, number], swing: number, slide = 0): number => {
    bones.push({ name, parent, offset, swing, slide });
    return bones.length - 1;
  };
  const hips = add('Hips', -1, [0, 95, 0], 0.2);
  const spine = add('Spine', hips, [0, 10, 0], 0.15);
  const chest = add('Chest', spine, [0, 15, 0], 0.15);
  const neck = add('Neck', chest, [0, 20, 0], 0.2);
  const head = add('Head', neck, [0, 10, 0], 0.3);
  const hands: number[] = [];
  for (const side of [-1, 1]) {
    const tag = side < 0 ? 'L' : 'R';
    const shoulder = add(`Shoulder${tag}`, chest, [side * 8, 17, 0], 0.2);
    const arm = add(`UpperArm${tag}`, shoulder, [side * 12, 0, 0], 0.8);
    const fore = add(`ForeArm${tag}`, arm, [side * 28, 0, 0], 0.8);
    hands.push(add(`Hand${tag}`, fore, [side * 25, 0, 0], 0.4));
    const thigh = add(`UpLeg${tag}`, hips, [side * 9, -5, 0], 0.7);
    const shin = add(`Leg${tag}`, thigh, [0, -42, 0], 0.9);
    const foot = add(`Foot${tag}`, shin, [0, -40, 0], 0.5);
    add(`Toe${tag}`, foot, [0, -6, 12], 0.3);
  }
  // Body: 5 + 2 × 8 = 21 bones; one more joint for the corpus's 22.
  add('Spine2', chest, [0, 5, -2], 0.05);
  for (const [h, hand] of hands.entries()) {
    const side = h === 0 ? -1 : 1;
    for (let finger = 0; finger < 5; finger++) {
      let parent = hand;
      for (let joint = 0; joint < 3; joint++) {
        parent = add(
          `Finger${h}_${finger}_${joint}`,
          parent,
          joint === 0 ? [side * 9, 0, (finger - 2) * 2] : [side * 3, 0, 0],
          0.6,
        );
      }
    }
  }
  const random = mulberry32(300);
  while (bones.length < 300) {
    // A face chain of up to three bones on the head, 2..9 cm from its centre.
    const length = 1 + Math.floor(random() * 3);
    let parent = head;
    for (let j = 0; j < length && bones.length < 300; j++) {
      const offset: [number, number, number] =
        j === 0
          ? [(random() - 0.5) * 14, 4 + random() * 10, 5 + random() * 4]
          : [(random() - 0.5) * 2, (random() - 0.5) * 2, 0.5 + random()];
      parent = add(`Face${bones.length}`, parent, offset, 0.05 + random() * 0.2, random() * 0.8);
    }
  }
  return rigClip('body-face-fingers-300', bones, sampleCount, 2);
}

/** A clip of `bones` whose every rotation (and, where `slide` > 0, translation) follows seeded sines. */
function rigClip(name: string, bones: readonly BoneSpec[], sampleCount: number, seed: number): RawClip {
  const boneCount = bones.length;
  const pose = new Float32Array(boneCount * POSE_STRIDE);
  for (let b = 0; b < boneCount; b++) {
    const o = b * POSE_STRIDE;
    pose[o + 3] = 1;
    pose.set(bones[b].offset, o + 4);
    pose[o + 7] = 1;
    pose[o + 8] = 1;
    pose[o + 9] = 1;
  }
  const skeleton = createSkeleton(
    bones.map((bone) => bone.name),
    bones.map((bone) => bone.parent),
    pose,
    'cm',
  );
  const clip = createRawClip(name, skeleton, RATE, sampleCount, 'cm');
  const random = mulberry32(seed);
  for (let b = 0; b < boneCount; b++) {
    const { swing, slide, offset } = bones[b];
    // Per axis: frequency 0.2..1.7 Hz, phase; the chain's phase steps along it so a wave travels.
    const freq = [0, 1, 2].map(() => 0.2 + random() * 1.5);
    const phase = [0, 1, 2].map(() => random() * 2 * Math.PI + b * 0.15);
    for (let s = 0; s < sampleCount; s++) {
      const t = s / RATE;
      const half = [0, 1, 2].map((axis) => (swing * Math.sin(2 * Math.PI * freq[axis] * t + phase[axis])) / 2);
      // Rotation about x, then y, then z (small angles: the order matters little).
      const [sx, sy, sz] = half.map(Math.sin),
        [cx, cy, cz] = half.map(Math.cos);
      const i = b * sampleCount + s;
      const x1 = sx * cy,
        y1 = cx * sy,
        z1 = sx * sy,
        w1 = cx * cy;
      clip.rotations[i * 4] = x1 * cz + y1 * sz;
      clip.rotations[i * 4 + 1] = y1 * cz - x1 * sz;
      clip.rotations[i * 4 + 2] = w1 * sz + z1 * cz;
      clip.rotations[i * 4 + 3] = w1 * cz - z1 * sz;
      for (let axis = 0; axis < 3; axis++) {
        const move = b === 0 && axis === 2 ? 100 * t : slide * Math.sin(2 * Math.PI * freq[axis] * t + 2 * phase[axis]);
        clip.translations[i * 3 + axis] = offset[axis] + move;
      }
    }
  }
  return clip;
}
