/**
 * Bulk sampling for crowds: many characters, each with its own sampler (clip) and time,
 * decoded into one caller-owned buffer in one call, as local poses or as object-space
 * matrices for skinning. Allocates nothing per call once it has planned the crowd and its
 * scratch has grown to the largest skeleton it has seen.
 */
import { FormatError } from './errors.js';
import { POSE_STRIDE, objectSpace } from './pose.js';
import type { CompressedClip } from './compressed-clip.js';
import type { ClipSampler, SampleOptions } from './sampler.js';
import { KERNEL_WORLD_WASM } from './kernel-wasm.js';
import { kernelWorld, type KernelWorld } from './wasm-kernel.js';
import { KERNEL_MAX_WORLD_BONES, KERNEL_WORLD_OUT } from './decode-layout.js';

/**
 * A clip's object-space pass in the kernel: the pass on its memory, its parents' byte
 * address there and bone count, and views of what the pass writes (three rows of four
 * floats per bone, or a 4×4).
 */
interface ClipWorld {
  readonly run: KernelWorld;
  readonly parentsAt: number;
  readonly bones: number;
  readonly rows: Float32Array;
  readonly matrices: Float32Array;
}

/**
 * What {@link CrowdSampler.sample} writes per bone:
 * - `'local'`: the local pose, {@link POSE_STRIDE} floats (rotation xyzw, translation xyz, scale xyz);
 * - `'object16'`: the object-space matrix, column-major 4×4 (gl-matrix and WebGL layout), 16 floats;
 * - `'object12'`: the same matrix's top three rows, row by row (three vec4s: the 3×4 affine
 *   form skinning shaders read), 12 floats.
 */
export type CrowdOutput = 'local' | 'object16' | 'object12';

/** Floats per bone of each {@link CrowdOutput}. */
export const CROWD_FLOATS_PER_BONE: Readonly<Record<CrowdOutput, number>> = {
  local: POSE_STRIDE,
  object16: 16,
  object12: 12,
};

/** Options of {@link CrowdSampler}. */
export interface CrowdOptions {
  /** Default `'local'`. */
  output?: CrowdOutput;
}

/**
 * Samples crowds. Characters are written back to back in the output, character i's bone b
 * at `start(i) + b × floatsPerBone`, where start(i) sums the floats of the characters
 * before it (with one skeleton for the whole crowd: i × boneCount × floatsPerBone).
 * Characters are decoded grouped by clip, whatever their order in `samplers`, so that a
 * clip's tables stay in cache from one character to the next (a crowd of 1,000 on the 174
 * corpus clips takes 7–14 % less time than in an interleaved order, docs/design.md);
 * the grouping is planned once per crowd and made again when `samplers` changes.
 */
export class CrowdSampler {
  /** What {@link sample} writes per bone. */
  readonly output: CrowdOutput;
  /** Floats per bone of {@link output}. */
  readonly floatsPerBone: number;
  private pose = new Float32Array(0);
  private world = new Float64Array(0);
  /** The crowd the plan is for (a copy of `samplers`), its visiting order and each character's first float. */
  private planned: ClipSampler[] = [];
  private visit = new Int32Array(0);
  private starts = Int32Array.of(0);
  /** With object-space output, each character's clip's kernel pass (undefined: walked in TypeScript). */
  private worlds: (ClipWorld | undefined)[] = [];

  constructor(options: CrowdOptions = {}) {
    const output = options.output ?? 'local';
    if (output !== 'local' && output !== 'object16' && output !== 'object12')
      throw new FormatError('BAD_ARGUMENT', `output must be 'local', 'object16' or 'object12', got ${String(output)}`);
    this.output = output;
    this.floatsPerBone = CROWD_FLOATS_PER_BONE[output];
  }

  /** Floats {@link sample} writes for these characters. */
  floatsFor(samplers: readonly ClipSampler[]): number {
    let floats = 0;
    for (let i = 0; i < samplers.length; i++) floats += samplers[i].clip.boneCount * this.floatsPerBone;
    return floats;
  }

  /**
   * Samples character i with `samplers[i]` at `times[i]` seconds (see
   * {@link ClipSampler.sample}; `options` apply to every character) into `out`, back to back.
   * Object-space output walks each skeleton right after its decode, while the local pose is
   * still in the first-level cache: `M[b] = M[parent] · T · R · S` (parents precede children
   * in every clip), in float64 down the hierarchy. Where the clip decodes in the WebAssembly
   * kernel, the kernel walks it in its own memory (kernel.wat, the same operations, so
   * the same floats). Returns the floats written. Throws when `times` is shorter than
   * `samplers` or `out` cannot hold the crowd; allocates only to plan a crowd it has not
   * seen last and to grow its scratch.
   */
  sample(
    samplers: readonly ClipSampler[],
    times: ArrayLike<number>,
    out: Float32Array,
    options?: SampleOptions,
  ): number {
    const count = samplers.length;
    if (times.length < count) throw new FormatError('BAD_ARGUMENT', `${times.length} times for ${count} characters`);
    const needed = this.plan(samplers);
    if (out.length < needed)
      throw new FormatError('BAD_ARGUMENT', `out holds ${out.length} floats, the crowd needs ${needed}`);
    const visit = this.visit,
      starts = this.starts;
    if (this.output === 'local') {
      for (let k = 0; k < count; k++) {
        const i = visit[k];
        samplers[i].sampleInto(times[i], out, starts[i], options);
      }
      return needed;
    }
    const rows = this.output === 'object12';
    for (let k = 0; k < count; k++) {
      const i = visit[k];
      const sampler = samplers[i];
      const world = this.worlds[i];
      if (world !== undefined) {
        objectInto(sampler, world, times[i], out, starts[i], rows, options);
        continue;
      }
      const bones = sampler.clip.boneCount;
      if (this.pose.length < bones * POSE_STRIDE) {
        this.pose = new Float32Array(bones * POSE_STRIDE);
        this.world = new Float64Array(bones * 12);
      }
      sampler.sampleInto(times[i], this.pose, 0, options);
      objectSpace(this.pose, sampler.clip.parents, bones, this.world, out, starts[i], rows);
    }
    return needed;
  }

  /**
   * Plans `samplers` unless the plan is for the same characters: the visiting order (by
   * clip, clips in order of first appearance, characters in their order within a clip),
   * each character's first float and, with object-space output, its clip's kernel pass.
   * Returns the floats the crowd needs.
   */
  private plan(samplers: readonly ClipSampler[]): number {
    const count = samplers.length,
      planned = this.planned;
    let same = planned.length === count;
    for (let i = 0; same && i < count; i++) same = planned[i] === samplers[i];
    if (same) return this.starts[count];
    const ids = new Map<CompressedClip, number>();
    const clipOf = new Int32Array(count);
    const starts = new Int32Array(count + 1);
    const clipWorlds: (ClipWorld | undefined)[] = [];
    for (let i = 0; i < count; i++) {
      const clip = samplers[i].clip;
      let id = ids.get(clip);
      if (id === undefined) {
        id = ids.size;
        ids.set(clip, id);
        clipWorlds.push(this.output === 'local' ? undefined : clipWorld(clip));
      }
      clipOf[i] = id;
      starts[i + 1] = starts[i] + clip.boneCount * this.floatsPerBone;
    }
    // A counting sort by clip, stable.
    const first = new Int32Array(ids.size + 1);
    for (let i = 0; i < count; i++) first[clipOf[i] + 1]++;
    for (let c = 0; c < ids.size; c++) first[c + 1] += first[c];
    const visit = new Int32Array(count);
    for (let i = 0; i < count; i++) visit[first[clipOf[i]]++] = i;
    this.planned = samplers.slice();
    this.visit = visit;
    this.starts = starts;
    this.worlds = Array.from(clipOf, (id) => clipWorlds[id]);
    return starts[count];
  }
}

/**
 * The kernel's object-space pass for `clip`, or undefined where it has none (it decodes in
 * TypeScript, has more than KERNEL_MAX_WORLD_BONES bones, or the pass cannot be made here):
 * {@link CrowdSampler.sample} then walks the pose itself. The pass is a module of its own
 * (kernel-world.wat), which only crowds bring into a page.
 * @internal
 */
export function clipWorld(clip: CompressedClip): ClipWorld | undefined {
  const kernel = clip.tables.kernel;
  const bones = clip.boneCount;
  if (kernel === undefined || bones > KERNEL_MAX_WORLD_BONES) return undefined;
  const run = kernelWorld(kernel.place, KERNEL_WORLD_WASM);
  if (run === undefined) return undefined;
  const { place, parentsAt } = kernel;
  return {
    run,
    parentsAt,
    bones,
    rows: place.view(KERNEL_WORLD_OUT, 12 * bones),
    matrices: place.view(KERNEL_WORLD_OUT, 16 * bones),
  };
}

/**
 * Samples `sampler` at `time` and writes the pose's object-space matrices into `out` at
 * `offset` (three rows of four floats per bone with `rows`, else a column-major 4×4),
 * computed by the clip's kernel pass `world` right after the decode, in the kernel's memory.
 */
function objectInto(
  sampler: ClipSampler,
  world: ClipWorld,
  time: number,
  out: Float32Array,
  offset: number,
  rows: boolean,
  options?: SampleOptions,
): void {
  sampler.kernelDecode(sampler.locate(time, options), world.run, world.parentsAt, world.bones, rows ? 1 : 0);
  out.set(rows ? world.rows : world.matrices, offset);
}
