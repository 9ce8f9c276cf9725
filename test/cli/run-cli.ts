/**
 * Runs the built CLI (`node dist/cli/main.js`, built by `npm test`) and collects its exit
 * code and output; plus the bounded waits the process tests share.
 *
 * Every wait here has a deadline: a CLI that hangs fails its test with a clear message and
 * is killed (SIGKILL), never left to the test runner's timeout. Call
 * {@link killStartedClis} in an `afterEach` so no process started by {@link startCli}
 * outlives its test, whatever the test did.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The built bin entry. */
export const CLI = join(ROOT, 'dist', 'cli', 'main.js');
/** The committed BVH fixtures. */
export const FIXTURES = join(ROOT, 'fixtures');

/**
 * Upper bound for one CLI run, and for any single polling wait (an output file, a message,
 * an exit). Far above what a loaded 2-core CI machine needs; only a hang reaches it.
 */
export const WAIT_MS = 30_000;
/** Upper bound for one {@link runCli} run (a whole batch or command). */
export const RUN_MS = 60_000;

/** What a CLI run produced. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `bonepress <args>` from the repository root and waits for it to exit. A run still
 * going after `timeoutMs` is killed (SIGKILL) and throws, naming the command.
 */
export function runCli(args: readonly string[], timeoutMs = RUN_MS): CliRun {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: timeoutMs,
    killSignal: 'SIGKILL',
  });
  if (result.error) {
    if ((result.error as NodeJS.ErrnoException).code === 'ETIMEDOUT') {
      throw new Error(
        `bonepress ${args.join(' ')}: still running after ${timeoutMs} ms, killed (hung?); stderr:\n${result.stderr}`,
      );
    }
    throw result.error;
  }
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** How a started CLI ended. */
export interface CliExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** True when it was still running at the deadline and had to be killed (SIGKILL). */
  timedOut: boolean;
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Every process started by {@link startCli} that has not closed yet. */
const running = new Set<CliProcess>();

/** A CLI started by {@link startCli}: its output so far and bounded waits on it. */
export class CliProcess {
  stdout = '';
  stderr = '';
  /** How it ended; undefined while it runs. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private killedAtDeadline = false;
  private readonly closed: Promise<void>;

  constructor(
    readonly args: readonly string[],
    readonly child: ChildProcess,
  ) {
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      this.stdout += d;
    });
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      this.stderr += d;
    });
    this.closed = new Promise((resolve) => {
      const done = (code: number | null, signal: NodeJS.Signals | null): void => {
        this.exit ??= { code, signal };
        running.delete(this);
        resolve();
      };
      child.on('close', done);
      // A failed spawn emits 'error' and maybe no 'close'.
      child.on('error', (error) => {
        this.stderr += `\n[spawn error: ${error.message}]`;
        done(null, null);
      });
    });
    running.add(this);
  }

  /** One line describing the process, for failure messages. */
  describe(): string {
    const state = this.exit ? `exited (code ${this.exit.code}, signal ${this.exit.signal})` : 'still running';
    return `bonepress ${this.args.slice(0, 3).join(' ')}${this.args.length > 3 ? ' …' : ''}: ${state}; stderr:\n${this.stderr}`;
  }

  /** Sends `signal` (default SIGKILL) unless it has exited. */
  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.exit === undefined) this.child.kill(signal);
  }

  /**
   * Polls `condition` until it holds (→ true) or the process exits first (→ the condition
   * checked once more after the exit). After `timeoutMs` the process is killed and this
   * throws, naming `what` it waited for.
   */
  async waitUntil(condition: () => boolean, what: string, timeoutMs = WAIT_MS): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (condition()) return true;
      if (this.exit !== undefined) {
        await this.closed; // every output chunk has arrived
        return condition();
      }
      if (Date.now() >= deadline) {
        const state = this.describe();
        await this.killAndWait();
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; killed ${state}`);
      }
      await sleep(10);
    }
  }

  /**
   * Waits for the exit; a process still running after `timeoutMs` is killed (SIGKILL) and
   * the result says `timedOut` (assert on it: it is the hang guard).
   */
  async waitForExit(timeoutMs = WAIT_MS): Promise<CliExit> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>((resolve) => {
      timer = setTimeout(() => resolve('deadline'), timeoutMs);
    });
    try {
      if ((await Promise.race([this.closed, deadline])) === 'deadline') {
        this.killedAtDeadline = true;
        await this.killAndWait();
      }
    } finally {
      clearTimeout(timer);
    }
    const exit = this.exit ?? { code: null, signal: null };
    return { ...exit, timedOut: this.killedAtDeadline };
  }

  /** SIGKILL, then waits (bounded) until the process is gone. */
  async killAndWait(): Promise<void> {
    this.kill('SIGKILL');
    await Promise.race([this.closed, sleep(10_000)]);
  }
}

/** Starts `bonepress <args>` from the repository root without waiting; see {@link CliProcess}. */
export function startCli(args: readonly string[]): CliProcess {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  return new CliProcess(args, child);
}

/** Kills (SIGKILL) every process {@link startCli} started that is still running, and waits until they are gone. For `afterEach`. */
export async function killStartedClis(): Promise<void> {
  await Promise.all([...running].map((cli) => cli.killAndWait()));
}

/**
 * A FIFO that blocks whoever reads it until {@link release}: the test holds it open for
 * reading and writing (on Linux that open never blocks), so a reader's open succeeds at once
 * and its read waits for data that never comes. `release()` closes the test's end: every
 * pending read then sees end-of-file, so a stopped worker (or the process around it) can
 * finish. Release it in a `finally`.
 */
export function blockingFifo(path: string): { path: string; release: () => void } {
  execFileSync('mkfifo', [path]);
  let fd: number | undefined = openSync(path, constants.O_RDWR | constants.O_NONBLOCK);
  return {
    path,
    release: () => {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}

/** Lines of `text` without the trailing empty one. */
export function linesOf(text: string): string[] {
  return text.split('\n').filter((line, i, all) => !(i === all.length - 1 && line === ''));
}

/** A fresh temp folder and a function removing it. */
export function makeTempDir(prefix = 'bonepress-test-'): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A fixture path relative to the repository root (as a user would type it). */
export function fixture(name: string): string {
  return join('fixtures', name);
}
