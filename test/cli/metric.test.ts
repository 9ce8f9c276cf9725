/**
 * `--metric <vertices|shell>` on compress, verify and bench: the shell metric holds every
 * point of each bone's shell sphere within --error, and verify and bench report the
 * whole-shell error beside the default metric's error.
 */
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { fixture, makeTempDir, runCli } from './run-cli.js';

const DASH = fixture('dataset-1_dash_normal_001.bvh');
/** A fixture whose default-metric file leaves points of the shell beyond 0.01 cm. */
const BYEBYE = fixture('dataset-1_byebye_angry_001.bvh');
const temp = makeTempDir();
afterAll(() => temp.remove());

interface VerifyJson {
  metric: string;
  maxError: number;
  shellMaxError: number;
  threshold: number;
  pass: boolean;
}

function verifyJson(...args: string[]): { code: number | null; report: VerifyJson } {
  const run = runCli(['verify', ...args, '--json']);
  expect(run.stderr).toBe('');
  return { code: run.code, report: JSON.parse(run.stdout) as VerifyJson };
}

describe('--metric', () => {
  const shellFile = join(temp.dir, 'shell.bpk');
  const defaultFile = join(temp.dir, 'vertices.bpk');

  it('compress --metric shell writes a clip whose whole-shell error is within --error, and says so in --json', () => {
    const run = runCli(['compress', DASH, '--metric', 'shell', '-o', shellFile, '--json']);
    expect(run.code).toBe(0);
    const [clip] = (
      JSON.parse(run.stdout) as {
        clips: { metric: string; maxError: number; shellMaxError: number; threshold: number }[];
      }
    ).clips;
    expect(clip.metric).toBe('shell');
    expect(clip.shellMaxError).toBe(clip.maxError);
    expect(clip.shellMaxError).toBeLessThanOrEqual(clip.threshold);
  });

  it('verify measures the whole shell with --metric shell, and prints it beside the default metric without', () => {
    const shell = verifyJson(DASH, shellFile, '--metric', 'shell');
    expect(shell.code).toBe(0);
    expect(shell.report).toMatchObject({ metric: 'shell', pass: true });
    expect(shell.report.maxError).toBe(shell.report.shellMaxError);

    const vertices = verifyJson(DASH, shellFile);
    expect(vertices.code).toBe(0);
    expect(vertices.report.metric).toBe('vertices');
    expect(vertices.report.shellMaxError).toBe(shell.report.shellMaxError);
    expect(vertices.report.maxError).toBeLessThanOrEqual(vertices.report.shellMaxError);

    const text = runCli(['verify', DASH, shellFile]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/whole-shell error\s+0\.\d+cm\n/);
    expect(text.stdout).toMatch(/metric\s+vertices/);
  });

  it('verify --metric shell fails (exit 1) a file compressed with the default metric whose shell goes beyond --error', () => {
    expect(runCli(['compress', BYEBYE, '-o', defaultFile]).code).toBe(0);
    const vertices = verifyJson(BYEBYE, defaultFile);
    expect(vertices.code).toBe(0);
    expect(vertices.report.shellMaxError).toBeGreaterThan(vertices.report.threshold);
    const shell = verifyJson(BYEBYE, defaultFile, '--metric', 'shell');
    expect(shell.code).toBe(1);
    expect(shell.report).toMatchObject({ metric: 'shell', pass: false });
    expect(shell.report.maxError).toBe(vertices.report.shellMaxError);
  });

  it('bench --metric shell compresses with it and reports the whole-shell error of every clip', () => {
    const run = runCli(['bench', DASH, '--metric', 'shell', '--jobs', '1', '--no-decode', '--no-speed', '--json']);
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as {
      settings: { metric: string };
      clips: { maxError: number; shellMaxError: number; threshold: number }[];
      totals: { shellMaxError: number };
    };
    expect(result.settings.metric).toBe('shell');
    expect(result.clips).toHaveLength(1);
    expect(result.clips[0].shellMaxError).toBe(result.clips[0].maxError);
    expect(result.clips[0].shellMaxError).toBeLessThanOrEqual(result.clips[0].threshold);
    expect(result.totals.shellMaxError).toBe(result.clips[0].shellMaxError);
  });

  it('bench prints a whole-shell column and row with the default metric', () => {
    const run = runCli(['bench', DASH, '--jobs', '1', '--no-decode', '--no-speed']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/whole shell/);
    expect(run.stdout).toMatch(/whole-shell error\s+0\.\d+cm/);
  });

  for (const command of [
    ['compress', DASH, '-o', join(temp.dir, 'bad.bpk')],
    ['verify', DASH, DASH],
    ['bench', DASH, '--no-decode', '--no-speed'],
  ]) {
    it(`${command[0]} refuses an unknown metric (exit 2, names the choices)`, () => {
      const run = runCli([...command, '--metric', 'sphere']);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/--metric <metric>.*'sphere' is invalid\. expected one of vertices, shell/);
    });
  }
});
