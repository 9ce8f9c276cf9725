/**
 * Every command's name, one-line description and arguments, and how to load the rest of
 * it. The top-level help needs only this much, so a run loads the module of the command it
 * runs and nothing of the others (program.ts); each command module declares itself from its
 * entry here, so the two cannot disagree.
 */
import type { Command } from 'commander';

/** Registers a command's options and action on the program. */
export type RegisterCommand = (program: Command) => void;

/** What the top-level help shows of a command, and where the command's module is. */
export interface CommandEntry {
  readonly name: string;
  readonly description: string;
  /** `[name, description]` of each positional argument, in order. */
  readonly arguments: readonly (readonly [string, string])[];
  /** False for a command that has subcommands instead of options (its help term has no `[options]`). */
  readonly hasOptions: boolean;
  /** Loads the command's module; returns its register function. */
  readonly load: () => Promise<RegisterCommand>;
}

/** The commands, in the order the help lists them. */
export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'compress',
    description: 'compress clips (BVH, glTF/GLB, ACL SJSON) into .bpk files',
    arguments: [['<inputs...>', 'input files, or folders (searched for .bvh, .gltf, .glb, .sjson)']],
    hasOptions: true,
    load: async () => (await import('./commands/compress.js')).registerCompressCommand,
  },
  {
    name: 'verify',
    description:
      'measure the error of a clip (.bpk, pose dump .json, or a BVH/glTF/SJSON source) against its raw source',
    arguments: [
      ['<raw>', 'the reference clip (BVH, glTF/GLB, ACL SJSON or pose dump)'],
      ['<other>', 'the clip to measure: .bpk (or its transport form .bpt), pose dump .json, or any source format'],
    ],
    hasOptions: true,
    load: async () => (await import('./commands/verify.js')).registerVerifyCommand,
  },
  {
    name: 'info',
    description: 'show the header, section sizes, track classes and bit rates of a compressed clip',
    arguments: [['<clip>', 'a .bpk or .bpt file, or a glTF asset compressed by bonepress (.glb, .gltf)']],
    hasOptions: true,
    load: async () => (await import('./commands/info.js')).registerInfoCommand,
  },
  {
    name: 'sample',
    description: 'decode a compressed clip at a time and print the local pose',
    arguments: [['<clip>', 'a .bpk or .bpt file, or a glTF asset compressed by bonepress (.glb, .gltf)']],
    hasOptions: true,
    load: async () => (await import('./commands/sample.js')).registerSampleCommand,
  },
  {
    name: 'decompress',
    description: 'decode every original sample of a compressed clip into a pose dump JSON file',
    arguments: [['<clip>', 'a .bpk or .bpt file, or a glTF asset compressed by bonepress (.glb, .gltf)']],
    hasOptions: true,
    load: async () => (await import('./commands/decompress.js')).registerDecompressCommand,
  },
  {
    name: 'bench',
    description: 'benchmark size, error, compression and decoding speed over a corpus; check against the baseline',
    arguments: [['<corpus...>', 'clip files or folders (searched for .bvh, .gltf, .glb, .sjson)']],
    hasOptions: true,
    load: async () => (await import('./commands/bench.js')).registerBenchCommand,
  },
  {
    name: 'netsim',
    description: 'stream a clip as pose snapshots over a simulated lossy link and measure bits and error',
    arguments: [['<clip>', 'the clip to stream (BVH, glTF, ACL SJSON or pose dump; one clip)']],
    hasOptions: true,
    load: async () => (await import('./commands/netsim.js')).registerNetsimCommand,
  },
  {
    name: 'manifest',
    description: 'work with the manifests of library builds (compress --manifest)',
    arguments: [],
    hasOptions: false,
    load: async () => (await import('./commands/manifest.js')).registerManifestCommand,
  },
];

/**
 * Adds the command `name` to `program` with its description and arguments from
 * {@link COMMANDS}; the caller adds options and the action.
 */
export function declareCommand(program: Command, name: string): Command {
  const entry = COMMANDS.find((e) => e.name === name);
  if (entry === undefined) throw new Error(`bonepress: no command '${name}' in command-list.ts`);
  const command = program.command(entry.name).description(entry.description);
  for (const [argument, description] of entry.arguments) command.argument(argument, description);
  return command;
}
