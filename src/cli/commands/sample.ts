/**
 * `bonepress sample <clip> --time T`: the local pose the runtime decoder produces at a
 * time, for every bone or one, from a `.bpk`, a `.bpt` or an animation of a compressed glTF asset.
 */
import { Option, type Command } from 'commander';

import { ClipError, POSE_STRIDE } from '../../index.js';
import { sampleBone, type CompressedClip, type Looping, type Rounding } from '../../runtime/index.js';
import { declareCommand } from '../command-list.js';
import { EXIT, atFile, type ExitCode } from '../exit-codes.js';
import { anonymousBoneName, openCompressedFile } from '../load.js';
import { parseSecondsArg } from '../parse.js';
import { renderJson } from '../render/json.js';
import { renderTable } from '../render/table.js';

const ROUNDINGS = ['none', 'floor', 'ceil', 'nearest'] as const satisfies readonly Rounding[];
const LOOPINGS = ['clamp', 'repeat', 'wrap'] as const satisfies readonly Looping[];

/** Options of `sample` as commander parses them. */
export interface SampleCliOptions {
  time: number;
  bone?: string;
  rounding: Rounding;
  loop: Looping;
  json?: boolean;
  /** The animation of a glTF asset holding several. */
  clip?: string;
}

/** One bone's sampled local transform. */
export interface SampledBone {
  index: number;
  name: string;
  /** Quaternion x, y, z, w. */
  rotation: number[];
  /** In `unit`. */
  translation: number[];
  scale: number[];
}

/** What `sample --json` prints. */
export interface SampleResult {
  file: string;
  /** Seconds. */
  time: number;
  rounding: Rounding;
  looping: Looping;
  unit: string;
  bones: SampledBone[];
}

/** Adds the `sample` command to `program`. */
export function registerSampleCommand(program: Command): void {
  declareCommand(program, 'sample')
    .requiredOption('--time <time>', 'time to sample: seconds (1.5), or with a unit (1.5s, 1500ms)', parseSecondsArg)
    .option('--bone <name>', 'only this bone (bone_<i> when names were stripped)')
    .option(
      '--clip <name>',
      'the animation to read from a glTF asset holding several (its name, or animation_<index> when unnamed)',
    )
    .addOption(
      new Option('--rounding <policy>', 'between samples: interpolate, or take one').choices(ROUNDINGS).default('none'),
    )
    .addOption(
      new Option(
        '--loop <mode>',
        'outside the clip: clamp, repeat (period = duration, as three.js LoopRepeat) or wrap (last sample blends into the first)',
      )
        .choices(LOOPINGS)
        .default('clamp'),
    )
    .option('--json', 'print one JSON object instead of a table')
    .action(async (file: string, options: SampleCliOptions) => {
      process.exitCode = await runSample(file, options);
    });
}

/** Runs `sample`. Throws (scoped to the file) when it holds no valid compressed clip (load.ts `openCompressedFile`) or on an unknown bone. */
export async function runSample(file: string, options: SampleCliOptions): Promise<ExitCode> {
  const { clip, boneNames = clip.boneNames } = await openCompressedFile(file, options.clip);
  const nameOf = (b: number): string => boneNames?.[b] ?? anonymousBoneName(b);
  const sampleOptions = { rounding: options.rounding, looping: options.loop };
  const bones: SampledBone[] = [];
  const read = (values: Float32Array, o: number, index: number): SampledBone => ({
    index,
    name: nameOf(index),
    rotation: Array.from(values.subarray(o, o + 4)),
    translation: Array.from(values.subarray(o + 4, o + 7)),
    scale: Array.from(values.subarray(o + 7, o + 10)),
  });
  if (options.bone !== undefined) {
    const bone = options.bone;
    const index = await atFile(file, () => findBone(clip, boneNames, bone));
    const sampled = sampleBone(clip.createSampler(), options.time, index, new Float32Array(POSE_STRIDE), sampleOptions);
    bones.push(read(sampled, 0, index));
  } else {
    const pose = clip
      .createSampler()
      .sample(options.time, new Float32Array(clip.boneCount * POSE_STRIDE), sampleOptions);
    for (let b = 0; b < clip.boneCount; b++) bones.push(read(pose, b * POSE_STRIDE, b));
  }
  const result: SampleResult = {
    file,
    time: options.time,
    rounding: options.rounding,
    looping: options.loop,
    unit: clip.unit,
    bones,
  };
  process.stdout.write(options.json ? renderJson(result) : renderSample(result));
  return EXIT.OK;
}

/** Index of the bone called `name` among `boneNames`, or named `bone_<i>` (always accepted when unambiguous). */
function findBone(clip: CompressedClip, boneNames: readonly string[] | undefined, name: string): number {
  const byName = boneNames?.indexOf(name) ?? -1;
  if (byName >= 0) return byName;
  const m = /^bone_(\d+)$/.exec(name);
  if (m && Number(m[1]) < clip.boneCount) return Number(m[1]);
  throw new ClipError(
    'NO_SUCH_BONE',
    `no bone named "${name}"${boneNames ? '' : ' (names were stripped: use bone_<i>)'}`,
  );
}

function renderSample(r: SampleResult): string {
  const num = (v: number) => v.toFixed(6);
  const head = `${r.file} at ${r.time} s (rounding ${r.rounding}, loop ${r.looping}; translations in ${r.unit})\n`;
  return (
    head +
    renderTable(
      [
        { header: 'bone' },
        { header: 'rotation (x y z w)' },
        { header: 'translation (x y z)' },
        { header: 'scale (x y z)' },
      ],
      {
        body: r.bones.map((b) => [
          `${b.index} ${b.name}`,
          b.rotation.map(num).join(' '),
          b.translation.map(num).join(' '),
          b.scale.map(num).join(' '),
        ]),
      },
    )
  );
}
