import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import {
  WriteQueue, inputBaseName, outputPathsFor, readClipFiles, removeTempFiles, sanitizeClipName, writeFileAtomic,
} from '../../src/node/files.js';
import { makeTempDir } from '../cli/run-cli.js';

const temp = makeTempDir();
afterAll(() => temp.remove());

let folderCount = 0;
function freshFolder(): string {
  const dir = join(temp.dir, `case-${++folderCount}`);
  mkdirSync(dir);
  return dir;
}

describe('writeFileAtomic', () => {
  it('writes the bytes and leaves no temp file', async () => {
    const dir = freshFolder();
    const path = join(dir, 'clip.bpk');
    await writeFileAtomic(path, new Uint8Array([1, 2, 3, 4]));
    expect([...readFileSync(path)]).toEqual([1, 2, 3, 4]);
    expect(readdirSync(dir)).toEqual(['clip.bpk']);
  });

  it('replaces an existing file whole', async () => {
    const dir = freshFolder();
    const path = join(dir, 'clip.bpk');
    writeFileSync(path, 'old contents that are longer than the new ones');
    await writeFileAtomic(path, 'new');
    expect(readFileSync(path, 'utf8')).toBe('new');
    expect(readdirSync(dir)).toEqual(['clip.bpk']);
  });

  it('removes its temp file when the write fails, and reports the target path', async () => {
    const dir = freshFolder();
    // A non-empty folder in the way makes the final rename fail after the temp file was written.
    const target = join(dir, 'clip.bpk');
    mkdirSync(target);
    writeFileSync(join(target, 'inside'), 'x');
    await expect(writeFileAtomic(target, new Uint8Array(16))).rejects.toMatchObject({ path: target });
    expect(readdirSync(dir)).toEqual(['clip.bpk']);
  });

  it('fails without leaving anything when the folder does not exist', async () => {
    const dir = freshFolder();
    const target = join(dir, 'missing', 'clip.bpk');
    await expect(writeFileAtomic(target, 'x')).rejects.toMatchObject({ code: 'ENOENT', path: target });
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('removeTempFiles', () => {
  it('removes only temp files of the given process', async () => {
    const dir = freshFolder();
    const mine = `.clip.bpk.${process.pid}-0-7.tmp`;
    const other = `.clip.bpk.${process.pid + 1}-0-7.tmp`;
    for (const name of [mine, other, 'clip.bpk', 'notes.tmp']) writeFileSync(join(dir, name), 'x');
    expect(await removeTempFiles(dir)).toBe(1);
    expect(readdirSync(dir).sort()).toEqual([other, 'clip.bpk', 'notes.tmp'].sort());
    expect(await removeTempFiles(join(dir, 'missing'))).toBe(0);
  });
});

describe('output naming', () => {
  it('strips the extension, counting .acl.sjson as one', () => {
    expect(inputBaseName('clips/walk.bvh')).toBe('walk');
    expect(inputBaseName('run.acl.sjson')).toBe('run');
    expect(inputBaseName('hero.v2.glb')).toBe('hero.v2');
    expect(inputBaseName('noext')).toBe('noext');
    expect(inputBaseName('.hidden')).toBe('.hidden');
  });

  it('names one clip after its input, several after input and clip', () => {
    expect(outputPathsFor('out', 'a/walk.bvh', ['walk'])).toEqual([join('out', 'walk.bpk')]);
    expect(outputPathsFor('out', 'hero.glb', ['Idle', 'Run Fast', 'Idle', '../x'])).toEqual([
      join('out', 'hero_Idle.bpk'),
      join('out', 'hero_Run_Fast.bpk'),
      join('out', 'hero_Idle_2.bpk'),
      join('out', 'hero_x.bpk'),
    ]);
  });

  it('sanitises clip names into safe file names', () => {
    expect(sanitizeClipName('Run Fast/Left')).toBe('Run_Fast_Left');
    expect(sanitizeClipName('..')).toBe('clip');
    expect(sanitizeClipName('')).toBe('clip');
    expect(sanitizeClipName('ok-name_1.2')).toBe('ok-name_1.2');
  });
});

describe('readClipFiles', () => {
  it('rejects a missing file with ENOENT', async () => {
    await expect(readClipFiles(join(temp.dir, 'missing.bvh'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('WriteQueue', () => {
  /** A promise and the functions that settle it. */
  function deferred(): { promise: Promise<void>; resolve: () => void; reject: (error: Error) => void } {
    let resolve!: () => void, reject!: (error: Error) => void;
    const promise = new Promise<void>((res, rej) => { resolve = res; reject = rej; });
    return { promise, resolve, reject };
  }

  /** Asserts that `waiting` is still pending after a pause, and resolves once `release()` has run. */
  async function resolvesOnlyAfter(waiting: Promise<void>, release: () => void): Promise<void> {
    let done = false;
    const watched = waiting.then(() => { done = true; });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(done).toBe(false);
    release();
    await watched;
    expect(done).toBe(true);
  }

  it('makes room only once fewer than the limit are pending, and drains them all', async () => {
    const queue = new WriteQueue(2);
    const a = deferred(), b = deferred();
    queue.add(a.promise);
    await queue.room(); // one pending, under the limit
    queue.add(b.promise);
    await resolvesOnlyAfter(queue.room(), b.resolve);
    await resolvesOnlyAfter(queue.drain(), a.resolve);
  });

  it('reports a failed write where it is awaited, and settles past it', async () => {
    const queue = new WriteQueue(4);
    const a = deferred(), b = deferred();
    queue.add(a.promise);
    queue.add(b.promise);
    a.reject(new Error('disk full'));
    await expect(queue.drain()).rejects.toThrow('disk full');
    await resolvesOnlyAfter(queue.settle(), b.resolve);
  });
});
