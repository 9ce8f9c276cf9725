/**
 * Runs the built CLI and reports, besides its exit and output, the CPU time and peak
 * resident memory it used (usage-preload.mjs writes them at exit). A run still going at
 * the deadline is killed (SIGKILL): the guard against a hang, reported by `timedOut`.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { CLI, ROOT } from '../cli/run-cli.js';

const PRELOAD = fileURLToPath(new URL('./usage-preload.mjs', import.meta.url));

/** What one measured run did. */
export interface MeasuredRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** User + system CPU time of every thread, ms (undefined when the process was killed). */
  cpuMs: number | undefined;
  /** Peak resident memory, bytes (undefined when the process was killed). */
  maxRssBytes: number | undefined;
}

/** Options of {@link runMeasured}. */
export interface MeasureOptions {
  /** Kill the run after this long (default 60 s): only a hang gets there. */
  deadlineMs?: number;
  /** Called once the process runs, e.g. to signal it later. */
  onStart?: (pid: number, usedCpuMs: () => number) => void;
  /** Working directory (default the repository root). */
  cwd?: string;
}

let runCount = 0;

/** Runs `bonepress <args>` with the usage preload; resolves when it has exited. */
export function runMeasured(
  args: readonly string[],
  usageDir: string,
  options: MeasureOptions = {},
): Promise<MeasuredRun> {
  const usageFile = join(usageDir, `usage-${process.pid}-${++runCount}.json`);
  const child = spawn(process.execPath, ['--import', PRELOAD, CLI, ...args], {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, BONEPRESS_USAGE_FILE: usageFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '',
    stderr = '',
    timedOut = false;
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, options.deadlineMs ?? 60_000);
  if (child.pid !== undefined) options.onStart?.(child.pid, () => cpuMsOf(child.pid!));
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      let usage: { cpuMs?: number; maxRssBytes?: number } = {};
      if (existsSync(usageFile)) {
        usage = JSON.parse(readFileSync(usageFile, 'utf8')) as typeof usage;
        rmSync(usageFile, { force: true });
      }
      resolve({ code, signal, stdout, stderr, timedOut, cpuMs: usage.cpuMs, maxRssBytes: usage.maxRssBytes });
    });
  });
}

/** CPU time (ms) a running process has used so far, from /proc (0 when it is gone). */
export function cpuMsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    // utime and stime are fields 14 and 15 of the line, in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}
