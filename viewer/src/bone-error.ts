/**
 * Error of each bone at one instant: the library's virtual-vertex metric
 * (measureClipError) applied to one-sample clips holding the raw and the decoded pose at
 * the current time, so the heat map and the panels measure the same thing.
 */
import { createRawClip, measureClipError, writeSamplePose, type RawClip } from 'bonepress';

/** Reusable measurer for one clip's skeleton and shell distances. */
export class PoseErrorMeter {
  private readonly reference: RawClip;
  private readonly decoded: RawClip;

  constructor(
    clip: RawClip,
    private readonly shellDistances: Float32Array,
  ) {
    this.reference = createRawClip('reference', clip.skeleton, clip.sampleRate, 1, clip.unit);
    this.decoded = createRawClip('decoded', clip.skeleton, clip.sampleRate, 1, clip.unit);
  }

  /** Writes each bone's error (clip units) between `rawPose` and `decodedPose` into `out`. */
  measure(rawPose: Float32Array, decodedPose: Float32Array, out: Float64Array): Float64Array {
    writeSamplePose(this.reference, 0, rawPose);
    writeSamplePose(this.decoded, 0, decodedPose);
    out.set(measureClipError(this.reference, this.decoded, this.shellDistances).boneMaxError);
    return out;
  }
}
