/**
 * What the arguments say before commander reads them: the command they run (program.ts
 * loads only that one), and how many workers a `compress` run will ask for, so that main.ts
 * can start them before the program is even built. Nothing here decides anything commander
 * decides: a wrong guess only costs the early workers' start.
 */
import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** Options that print and end the run before any command runs. */
const ENDS_EARLY = new Set(['-h', '--help', '-V', '--version']);

/**
 * The command `args` (the arguments after `bonepress`) run, as commander dispatches: the
 * first operand (global options take no value), or the one after `help`.
 */
export function commandNameIn(args: readonly string[]): string | undefined {
  const operands: string[] = [];
  for (let i = 0; i < args.length && operands.length < 2; i++) {
    const arg = args[i];
    if (arg === '--') {
      operands.push(...args.slice(i + 1, i + 3));
      break;
    }
    if (arg.length > 1 && arg.startsWith('-')) continue;
    operands.push(arg);
  }
  return operands[0] === 'help' ? operands[1] : operands[0];
}

/**
 * The workers `compress <args>` will start (pool.ts `compressFiles`, library.ts
 * `compressLibrary`: `--jobs`, default one per core, capped at the number of inputs), or 0
 * when it starts none that can be told now: another command, help, glTF output (which runs
 * in this thread). Inputs are the operands naming files or folders (a folder counts as many
 * inputs; an option's value that names an existing file counts too, so a guess may be one
 * high); `-o` is left out.
 */
export function compressWorkersIn(args: readonly string[]): number {
  const at = args.indexOf('compress');
  if (
    at < 0 ||
    commandNameIn(args) !== 'compress' ||
    args.slice(0, at).some((arg) => !arg.startsWith('-') || ENDS_EARLY.has(arg))
  )
    return 0;
  let jobs = availableParallelism();
  let inputs = 0;
  let out = '';
  let format = '';
  let operandsOnly = false;
  for (let i = at + 1; i < args.length; i++) {
    const arg = args[i];
    if (!operandsOnly && arg.startsWith('-') && arg.length > 1) {
      if (arg === '--') operandsOnly = true;
      else if (ENDS_EARLY.has(arg)) return 0;
      const [name, inline] = optionParts(arg);
      const value = (): string => inline ?? args[++i] ?? '';
      if (name === '--jobs') jobs = Number(value());
      else if (name === '-o' || name === '--out') out = value();
      else if (name === '--format') format = value();
      continue;
    }
    inputs += inputsNamed(arg);
  }
  const gltfOut = format === 'glb' || format === 'gltf' || (format === '' && /\.(glb|gltf)$/i.test(out));
  if (gltfOut || !Number.isInteger(jobs) || jobs < 1) return 0;
  return Math.min(jobs, inputs);
}

/** `--name=value` as `--name` and `value`, `-ovalue` as `-o` and `value`; otherwise the name alone. */
function optionParts(arg: string): [string, string | undefined] {
  if (arg.startsWith('--')) {
    const eq = arg.indexOf('=');
    return eq < 0 ? [arg, undefined] : [arg.slice(0, eq), arg.slice(eq + 1)];
  }
  return arg.length > 2 ? [arg.slice(0, 2), arg.slice(2)] : [arg, undefined];
}

/**
 * Inputs `path` names: a folder many, a file one, anything else none (a path that cannot be
 * looked at too: the command reports it).
 */
function inputsNamed(path: string): number {
  try {
    const info = statSync(path, { throwIfNoEntry: false });
    return info?.isDirectory() ? Number.POSITIVE_INFINITY : info ? 1 : 0;
  } catch {
    return 0;
  }
}
