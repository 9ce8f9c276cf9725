/**
 * Runs the built CLI (`node dist/cli/main.js`, built by `npm test`) and collects its exit
 * code and output.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The built bin entry. */
export const CLI = join(ROOT, 'dist', 'cli', 'main.js');
/** The committed BVH fixtures. */
export const FIXTURES = join(ROOT, 'fixtures');

/** What a CLI run produced. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `bonepress <args>` from the repository root and waits for it to exit. */
export function runCli(args: readonly string[]): CliRun {
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8' });
  if (result.error) throw result.error;
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Starts `bonepress <args>` without waiting; see {@link runCli}. */
export function startCli(args: readonly string[]) {
  return spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
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
