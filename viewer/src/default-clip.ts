/**
 * The clip shown on load: a real mocap clip from fixtures/ (22 bones, centimetres,
 * 72 samples at 30 Hz), bundled as text.
 */
import text from '../../fixtures/dataset-1_run_active_001.bvh?raw';

export const DEFAULT_CLIP_NAME = 'dataset-1_run_active_001.bvh';
export const DEFAULT_CLIP_TEXT: string = text;
