/** Stage 4: the clip cut into uniform segments of SEGMENT_SIZE samples (a short tail joins the last). */
import { SEGMENT_SIZE, segmentCountFor, segmentSampleCount } from '../runtime/format.js';

/** Where each segment starts and how many samples it holds. */
export interface SegmentLayout {
  readonly count: number;
  readonly starts: Int32Array;
  readonly sizes: Int32Array;
  /** Largest segment size (scratch buffers are sized by it). */
  readonly maxSize: number;
}

/** The segment layout for `sampleCount` samples, as the decoder derives it. */
export function segmentClip(sampleCount: number): SegmentLayout {
  const count = segmentCountFor(sampleCount);
  const starts = new Int32Array(count);
  const sizes = new Int32Array(count);
  let maxSize = 0;
  for (let s = 0; s < count; s++) {
    starts[s] = s * SEGMENT_SIZE;
    sizes[s] = segmentSampleCount(s, count, sampleCount);
    if (sizes[s] > maxSize) maxSize = sizes[s];
  }
  return { count, starts, sizes, maxSize };
}
