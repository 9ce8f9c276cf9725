/**
 * What main.ts reads from the arguments before commander does (src/cli/argv.ts): how many
 * workers a `compress` run will ask for, so it can start them first.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { compressWorkersIn } from '../../src/cli/argv.js';
import { FIXTURES, makeTempDir } from './run-cli.js';

const temp = makeTempDir();
afterAll(() => temp.remove());

const clip = join(temp.dir, 'a.bvh');
const other = join(temp.dir, 'b.bvh');
const folder = join(temp.dir, 'clips');
const out = join(temp.dir, 'out');
copyFileSync(join(FIXTURES, 'dataset-1_walk_happy_002.bvh'), clip);
copyFileSync(join(FIXTURES, 'dataset-1_walk_happy_002.bvh'), other);
mkdirSync(folder);
mkdirSync(out);
const cores = availableParallelism();

describe('compressWorkersIn', () => {
  it('is --jobs (default one per core) capped at the inputs, a folder counting as many', () => {
    expect(compressWorkersIn(['compress', folder, '-o', out])).toBe(cores);
    expect(compressWorkersIn(['compress', folder, '-o', out, '--jobs', '3'])).toBe(3);
    expect(compressWorkersIn(['compress', '--jobs=1', folder, '--out', out])).toBe(1);
    expect(compressWorkersIn(['compress', clip, '-o', out, '--jobs', '4'])).toBe(1);
    expect(compressWorkersIn(['compress', clip, other, '-o', out, '--jobs', '4'])).toBe(2);
    expect(compressWorkersIn(['-q', 'compress', clip, other, `-o${out}`])).toBe(Math.min(2, cores));
  });

  it('leaves out the output folder, options without a file, and names that are nothing', () => {
    expect(compressWorkersIn(['compress', clip, '-o', out, '--error', '0.1cm', '--jobs', '8'])).toBe(1);
    expect(compressWorkersIn(['compress', clip, `--out=${out}`, '--jobs', '8'])).toBe(1);
    expect(compressWorkersIn(['compress', join(temp.dir, 'missing.bvh'), '-o', out])).toBe(0);
    // Paths that cannot be looked at count as none, without throwing: the command reports them.
    expect(compressWorkersIn(['compress', join(clip, 'inside-a-file.bvh'), 'bad\0name.bvh', '-o', out])).toBe(0);
    expect(compressWorkersIn(['compress', '--', clip, other, '--jobs', '8'])).toBe(Math.min(2, cores));
  });

  it('is 0 for glTF output, help, other commands and a --jobs commander refuses', () => {
    expect(compressWorkersIn(['compress', clip, '-o', join(temp.dir, 'x.GLB')])).toBe(0);
    expect(compressWorkersIn(['compress', clip, '--out=x.gltf'])).toBe(0);
    expect(compressWorkersIn(['compress', folder, '-o', out, '--format', 'glb'])).toBe(0);
    expect(compressWorkersIn(['compress', folder, '-o', 'x.glb', '--format=bpk'])).toBe(cores);
    expect(compressWorkersIn(['compress', folder, '-o', out, '--help'])).toBe(0);
    expect(compressWorkersIn(['help', 'compress'])).toBe(0);
    expect(compressWorkersIn(['--version', 'compress', folder, '-o', out])).toBe(0);
    expect(compressWorkersIn(['info', clip])).toBe(0);
    expect(compressWorkersIn(['verify', clip, 'compress'])).toBe(0);
    expect(compressWorkersIn(['compress', folder, '-o', out, '--jobs', 'two'])).toBe(0);
    expect(compressWorkersIn(['compress', folder, '-o', out, '--jobs', '0'])).toBe(0);
  });
});
