/**
 * One playing instance's sampling state (a three.js action, a Babylon.js group): its own
 * sampler and the pose it last decoded, so that however many tracks read the pose at one
 * time, it is decoded once. Engine-free.
 */
import type { CompressedClip } from '../runtime/compressed-clip.js';
import { POSE_STRIDE } from '../runtime/pose.js';
import type { ClipSampler } from '../runtime/sampler.js';

/** A sampler and the pose it last decoded, at `time`. */
export class PoseContext {
  // `declare`d: the constructor assigns each, so the build emits no list of them.
  declare readonly sampler: ClipSampler;
  declare readonly pose: Float32Array;
  declare time: number;

  constructor(clip: CompressedClip) {
    this.sampler = clip.createSampler();
    this.pose = new Float32Array(clip.boneCount * POSE_STRIDE);
    this.time = NaN;
  }

  /** The pose at `time` seconds (held at the ends: the sampler's default looping), decoded once however many tracks ask. */
  at(time: number): Float32Array {
    if (time !== this.time) {
      this.sampler.sample(time, this.pose);
      this.time = time;
    }
    return this.pose;
  }
}
