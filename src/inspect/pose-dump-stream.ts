/**
 * A compressed clip decoded into pose dump JSON (docs/pose-dump.md) piece by piece, so that
 * `decompress` holds one pose in memory, not the decoded clip and its text.
 */
import { POSE_STRIDE } from '../clip/skeleton.js';
import { sampleKey, type CompressedClip } from '../runtime/index.js';
import { anonymousBoneName } from './compare.js';

/** Pose layout of each array of a pose dump: where it starts in a pose and how many floats. */
const ARRAYS = [
  ['rotations', 0, 4],
  ['translations', 4, 3],
  ['scales', 7, 3],
] as const;

/**
 * The pose dump JSON of every original sample of `clip`, as decoded by the runtime (the
 * text `writePoseDump(decompressClip(clip))` gives, in pieces): a header, then one piece per
 * sample and array. Each array is decoded in a pass of its own, so memory stays at one pose
 * whatever the clip's length. Bones are named `bone_<i>` when names were stripped.
 */
export function* poseDumpChunks(clip: CompressedClip): Generator<string> {
  const boneCount = clip.boneCount;
  const names = clip.boneNames ?? Array.from({ length: boneCount }, (_, b) => anonymousBoneName(b));
  const header = {
    bones: [...names],
    parents: Array.from(clip.parents),
    sampleRate: clip.sampleRate,
    numSamples: clip.sampleCount,
    unit: clip.unit,
  };
  yield JSON.stringify(header).slice(0, -1);
  const sampler = clip.createSampler();
  const pose = new Float32Array(boneCount * POSE_STRIDE);
  for (const [field, offset, width] of ARRAYS) {
    yield `,"${field}":[`;
    for (let s = 0; s < clip.sampleCount; s++) {
      sampleKey(sampler, s, pose);
      const values: number[] = [];
      for (let b = 0; b < boneCount; b++) {
        for (let c = 0; c < width; c++) values.push(pose[b * POSE_STRIDE + offset + c]);
      }
      yield (s > 0 ? ',' : '') + JSON.stringify(values).slice(1, -1);
    }
    yield ']';
  }
  yield '}';
}
