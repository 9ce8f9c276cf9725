/**
 * The built command line run as a child process and measured as a user would feel it: wall
 * time from spawn to exit, and, from a probe loaded into the process, its peak RSS and the
 * CPU time of all its threads (main, workers, the engine's own).
 */
import { spawn } from 'node:child_process';

/** Loaded with `--import`: on exit, writes the process's resource figures as a last stderr line. */
const PROBE =
  'data:text/javascript,process.on("exit",()=>{const u=process.resourceUsage();process.stderr.write("\\nbonepress-bench-maxrss "+u.maxRSS+" "+u.userCPUTime+" "+u.systemCPUTime+"\\n")})';

/** What {@link runCliMeasured} measured. */
export interface MeasuredRun {
  seconds: number;
  peakRssMB: number;
  cpuSeconds: number;
  /** Its exit status, one `accepted` allows. */
  code: number;
  stdout: string;
}

/**
 * Runs `node <cli> <args>` in `cwd` (default: this process's); rejects unless it exits with
 * a status `accepted` allows, naming the command, its status and the end of its stderr.
 */
export async function runCliMeasured(
  cli: string,
  args: readonly string[],
  accepted: (code: number) => boolean,
  cwd?: string,
): Promise<MeasuredRun> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', PROBE, cli, ...args], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '',
    stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
    (resolve, reject) => {
      child.on('error', reject);
      child.on('close', (c, s) => resolve({ code: c, signal: s }));
    },
  );
  const seconds = (performance.now() - started) / 1000;
  const rss = /bonepress-bench-maxrss (\d+) (\d+) (\d+)/.exec(stderr);
  if (code === null || !accepted(code) || !rss)
    throw new Error(
      `${args[0] ?? cli} ended with ${signal ?? `status ${code}`}${rss ? '' : ' (no resource figures)'}; stderr:\n${stderr.slice(-2000)}`,
    );
  return {
    seconds,
    peakRssMB: (Number(rss[1]) * 1024) / 1e6,
    cpuSeconds: (Number(rss[2]) + Number(rss[3])) / 1e6,
    code,
    stdout,
  };
}
