/**
 * Crowd decode timing: N characters, each with its own sampler on one of the given clips
 * and its own time, sampled once per frame into one buffer by a {@link CrowdSampler}.
 * Browser-safe (no Node modules), so the same code runs in Node and in the Chromium page
 * of bench/crowd/.
 */
import type { CompressedClip } from '../runtime/compressed-clip.js';
import { CrowdSampler, type CrowdOutput } from '../runtime/crowd.js';
import type { ClipSampler } from '../runtime/sampler.js';

/** How {@link measureCrowd} measures. */
export interface CrowdTimingOptions {
  /** Characters in the crowd. */
  readonly characters: number;
  /** Frames timed; the figure is their median. */
  readonly frames: number;
  /** Untimed frames first (optimisation, caches). */
  readonly warmupFrames: number;
  /** Seconds between frames. */
  readonly frameSeconds: number;
  readonly output: CrowdOutput;
  /** Seed of the characters' start times. */
  readonly seed: number;
  /**
   * Milliseconds now; default `performance.now()`. Node passes process CPU time, which on a
   * machine shared with other processes leaves out the time this thread waited for a core.
   */
  readonly clock?: () => number;
}

/** Defaults of {@link measureCrowd}: 60 Hz frames, local poses. */
export const CROWD_TIMING_DEFAULTS: Omit<CrowdTimingOptions, 'characters'> = {
  frames: 120,
  warmupFrames: 30,
  frameSeconds: 1 / 60,
  output: 'local',
  seed: 1,
};

/** Milliseconds of decode per frame for one crowd size. */
export interface CrowdTiming {
  readonly characters: number;
  readonly output: CrowdOutput;
  /** Median over the timed frames. */
  readonly medianMs: number;
  /** Mean over the timed frames (robust to a coarse browser clock). */
  readonly meanMs: number;
  /** Fastest timed frame. */
  readonly minMs: number;
  /** Slowest timed frame. */
  readonly maxMs: number;
  /** Distinct clips the crowd plays. */
  readonly clips: number;
}

/**
 * Plays a crowd of `options.characters` characters, character i on `clips[i % clips.length]`
 * from a seeded random start time, looping (`'repeat'`), and times one
 * {@link CrowdSampler.sample} call per frame. Allocates the samplers and the output once.
 */
export function measureCrowd(
  clips: readonly CompressedClip[],
  options: Partial<CrowdTimingOptions> & { characters: number },
): CrowdTiming {
  const o = { ...CROWD_TIMING_DEFAULTS, ...options };
  if (clips.length === 0) throw new Error('measureCrowd needs at least one clip');
  const samplers: ClipSampler[] = [];
  const times = new Float64Array(o.characters);
  let seed = o.seed >>> 0;
  for (let i = 0; i < o.characters; i++) {
    const clip = clips[i % clips.length];
    samplers.push(clip.createSampler());
    // xorshift32: a start time per character, the same in every engine.
    seed ^= seed << 13;
    seed >>>= 0;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    seed >>>= 0;
    times[i] = clip.startTime + (seed / 2 ** 32) * clip.duration;
  }
  const crowd = new CrowdSampler({ output: o.output });
  const out = new Float32Array(crowd.floatsFor(samplers));
  const repeat = { looping: 'repeat' } as const;
  const ms: number[] = [];
  let sink = 0;
  const clock = o.clock ?? (() => performance.now());
  for (let f = 0; f < o.warmupFrames + o.frames; f++) {
    const started = clock();
    crowd.sample(samplers, times, out, repeat);
    const elapsed = clock() - started;
    if (f >= o.warmupFrames) ms.push(elapsed);
    for (let i = 0; i < times.length; i++) times[i] += o.frameSeconds;
    sink += out[f % out.length];
  }
  ms.sort((a, b) => a - b);
  if (sink !== sink) throw new Error('NaN in the decoded crowd');
  return {
    characters: o.characters,
    output: o.output,
    clips: Math.min(clips.length, o.characters),
    medianMs: ms[ms.length >> 1],
    meanMs: ms.reduce((a, b) => a + b, 0) / ms.length,
    minMs: ms[0],
    maxMs: ms[ms.length - 1],
  };
}
