import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import {
  WriteQueue,
  inputBaseName,
  readClipFiles,
  readGltfResourceSync,
  readInputFile,
  readInputFileSync,
  removeTempFiles,
  resolveGltfResource,
  sanitizeClipName,
  writeFileAtomic,
  type ReadFileOptions,
} from '../../src/node/files.js';
import { outputPathsFor } from '../../src/node/outputs.js';
import { ParseError, PARSE_ERROR } from '../../src/readers/errors.js';
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
    // A clip named like another's numbered name takes the next free number, never a clash.
    expect(outputPathsFor('out', 'hero.glb', ['b', 'b_2', 'b'], '.bpt')).toEqual([
      join('out', 'hero_b.bpt'),
      join('out', 'hero_b_2.bpt'),
      join('out', 'hero_b_3.bpt'),
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

/** The ParseError `read` throws (fails the test when it resolves or throws something else). */
async function parseErrorOf(read: () => Promise<unknown>): Promise<ParseError> {
  const error = await read().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ParseError);
  return error as ParseError;
}

/** The same, for a synchronous read. */
function parseErrorOfSync(read: () => unknown): ParseError {
  let error: unknown;
  try {
    read();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ParseError);
  return error as ParseError;
}

describe('readInputFile and readInputFileSync', () => {
  const both = [
    ['readInputFile', (path: string, options?: ReadFileOptions) => readInputFile(path, options)],
    ['readInputFileSync', async (path: string, options?: ReadFileOptions) => readInputFileSync(path, options)],
  ] as const;

  it.each(both)('%s: reads a regular file, an empty one, and one through a symlink', async (_name, read) => {
    const dir = freshFolder();
    writeFileSync(join(dir, 'a.bin'), Buffer.from([1, 2, 3]));
    writeFileSync(join(dir, 'empty.bin'), '');
    symlinkSync('a.bin', join(dir, 'link.bin'));
    expect([...(await read(join(dir, 'a.bin')))]).toEqual([1, 2, 3]);
    expect((await read(join(dir, 'empty.bin'))).byteLength).toBe(0);
    expect([...(await read(join(dir, 'link.bin')))]).toEqual([1, 2, 3]);
  });

  it.each(both)(
    '%s: refuses a FIFO without waiting for a writer, and devices, also through a .bvh symlink',
    async (_name, read) => {
      const dir = freshFolder();
      const fifo = join(dir, 'pipe.bvh');
      execFileSync('mkfifo', [fifo]);
      const e = await parseErrorOf(() => read(fifo));
      expect([e.code, e.file, e.problem]).toEqual([
        PARSE_ERROR.UNSUPPORTED,
        fifo,
        'is a FIFO (named pipe), not a regular file; bonepress reads only regular files',
      ]);
      symlinkSync('/dev/zero', join(dir, 'zero.bvh'));
      for (const device of ['/dev/zero', '/dev/urandom', join(dir, 'zero.bvh')]) {
        expect((await parseErrorOf(() => read(device))).problem).toBe(
          'is a character device, not a regular file; bonepress reads only regular files',
        );
      }
    },
  );

  it.each(both)(
    '%s: refuses a file over maxInputBytes before reading it; exactly the cap reads',
    async (_name, read) => {
      const dir = freshFolder();
      writeFileSync(join(dir, 'big.bvh'), Buffer.alloc(2048, 0x41));
      const e = await parseErrorOf(() => read(join(dir, 'big.bvh'), { maxInputBytes: 1024 }));
      expect([e.code, e.problem]).toEqual([
        PARSE_ERROR.LIMIT,
        'is 2 KiB, over the input limit of 1 KiB (maxInputBytes)',
      ]);
      expect((await read(join(dir, 'big.bvh'), { maxInputBytes: 2048 })).byteLength).toBe(2048);
    },
  );

  it.each(both)(
    '%s: with allowSpecialFiles, an endless device is read up to the cap and no further',
    async (_name, read) => {
      const e = await parseErrorOf(() => read('/dev/zero', { allowSpecialFiles: true, maxInputBytes: 1 << 20 }));
      expect([e.code, e.problem]).toEqual([
        PARSE_ERROR.LIMIT,
        'holds more than the input limit of 1 MiB (maxInputBytes)',
      ]);
    },
  );

  it.each(both)('%s: a directory is EISDIR', async (_name, read) => {
    await expect(read(freshFolder())).rejects.toMatchObject({ code: 'EISDIR' });
  });

  it.each(both)(
    '%s: finds a file whose name is not UTF-8 by the name Node shows for it (U+FFFD)',
    async (_name, read) => {
      const dir = freshFolder();
      // "caf\xe9.bvh" in Latin-1: the byte 0xE9 alone is not UTF-8, so argv shows it as U+FFFD.
      writeFileSync(
        Buffer.concat([Buffer.from(dir + '/'), Buffer.from([0x63, 0x61, 0x66, 0xe9]), Buffer.from('.bvh')]),
        'latin',
      );
      expect(Buffer.from(await read(join(dir, 'caf\uFFFD.bvh'))).toString()).toBe('latin');
      const e = await parseErrorOf(() => read(join(dir, 'th\uFFFD.bvh')));
      expect(e.problem).toMatch(
        /^no such file \(the name holds U\+FFFD, which is how Node shows a byte that is not UTF-8/,
      );
    },
  );
});

describe('glTF buffers stay inside the asset folder', () => {
  /** A one-node glTF whose only buffer has `uri` (2 rotation keys). */
  function gltfWithBuffer(uri: string): string {
    return JSON.stringify({
      asset: { version: '2.0' },
      nodes: [{ name: 'root' }],
      buffers: [{ byteLength: 40, uri }],
      bufferViews: [
        { buffer: 0, byteOffset: 0, byteLength: 8 },
        { buffer: 0, byteOffset: 8, byteLength: 32 },
      ],
      accessors: [
        { bufferView: 0, componentType: 5126, type: 'SCALAR', count: 2 },
        { bufferView: 1, componentType: 5126, type: 'VEC4', count: 2 },
      ],
      animations: [
        {
          name: 'turn',
          channels: [{ sampler: 0, target: { node: 0, path: 'rotation' } }],
          samplers: [{ input: 0, output: 1 }],
        },
      ],
    });
  }
  /** The 40 bytes of that buffer. */
  function bufferBytes(): Buffer {
    return Buffer.from(new Float32Array([0, 1 / 30, 0, 0, 0, 1, 0, 0.1, 0, 0.995]).buffer);
  }

  it('reads a buffer next to the asset, also percent-encoded or through ./ and sub/..', async () => {
    const dir = freshFolder();
    mkdirSync(join(dir, 'asset', 'sub'), { recursive: true });
    writeFileSync(join(dir, 'asset', 'my buffer.bin'), bufferBytes());
    for (const uri of ['my%20buffer.bin', './my buffer.bin', 'sub/../my%20buffer.bin']) {
      const path = join(dir, 'asset', 'a.gltf');
      writeFileSync(path, gltfWithBuffer(uri));
      const [clip] = await readClipFiles(path);
      expect(clip.name, uri).toBe('turn');
    }
  });

  it('refuses buffers outside the folder (.., percent-encoded .., absolute, a symlink out, a scheme) and never quotes their bytes', async () => {
    const dir = freshFolder();
    mkdirSync(join(dir, 'asset'));
    mkdirSync(join(dir, 'secret'));
    // Text that would show up in a message quoting the file, and bytes that parse as a buffer.
    const secret = Buffer.concat([bufferBytes(), Buffer.from('TOP-SECRET')]);
    writeFileSync(join(dir, 'secret', 'secret.bin'), secret);
    symlinkSync(join(dir, 'secret', 'secret.bin'), join(dir, 'asset', 'link.bin'));
    const cases: [string, RegExp][] = [
      ['../secret/secret.bin', /the file is outside the asset's folder/],
      ['..%2Fsecret%2Fsecret.bin', /the file is outside the asset's folder/],
      ['%2E%2E/secret/secret.bin', /the file is outside the asset's folder/],
      [join(dir, 'secret', 'secret.bin'), /the file is outside the asset's folder/],
      ['/dev/zero', /the file is outside the asset's folder/],
      ['link.bin', /the file is a link leading outside the asset's folder/],
      ['file:///etc/passwd', /URIs with a scheme are not read/],
    ];
    for (const [uri, problem] of cases) {
      const path = join(dir, 'asset', 'a.gltf');
      writeFileSync(path, gltfWithBuffer(uri));
      const e = await parseErrorOf(() => readClipFiles(path));
      expect(e.code, uri).toBe(PARSE_ERROR.UNSUPPORTED);
      expect(e.problem, uri).toMatch(problem);
      expect(e.message, uri).not.toContain('TOP-SECRET');
    }
    // Asked for explicitly, the file outside is read.
    const path = join(dir, 'asset', 'a.gltf');
    writeFileSync(path, gltfWithBuffer('../secret/secret.bin'));
    expect((await readClipFiles(path, { allowExternalResources: true }))[0].name).toBe('turn');
  });

  it('refuses a buffer that is a FIFO or a device inside the folder, at once', async () => {
    const dir = freshFolder();
    execFileSync('mkfifo', [join(dir, 'pipe.bin')]);
    symlinkSync('/dev/zero', join(dir, 'zero.bin'));
    for (const [uri, kind] of [
      ['pipe.bin', 'a FIFO (named pipe)'],
      ['zero.bin', 'a character device'],
    ]) {
      const path = join(dir, 'a.gltf');
      writeFileSync(path, gltfWithBuffer(uri));
      // A link to /dev/zero leads outside the folder too; with that allowed it is still a device.
      const e = await parseErrorOf(() => readClipFiles(path, { allowExternalResources: true }));
      expect(e.problem, uri).toBe(
        `cannot load buffer "${uri}" (buffer 0): is ${kind}, not a regular file; bonepress reads only regular files`,
      );
    }
  });

  it('resolveGltfResource and readGltfResourceSync apply the same rules synchronously', () => {
    const dir = freshFolder();
    writeFileSync(join(dir, 'ok.bin'), bufferBytes());
    const gltf = join(dir, 'a.gltf');
    expect(resolveGltfResource(gltf, 'ok.bin')).toBe(join(dir, 'ok.bin'));
    expect(resolveGltfResource(gltf, 'missing.bin')).toBeUndefined();
    expect(() => resolveGltfResource(gltf, '../x.bin')).toThrow(/outside the asset's folder/);
    expect(() => resolveGltfResource(gltf, '%E0%A4%A')).toThrow(/not valid percent-encoding/);
    expect(readGltfResourceSync(gltf, 'ok.bin')?.byteLength).toBe(40);
    expect(() => readGltfResourceSync(gltf, '/dev/zero')).toThrow(/outside the asset's folder/);
    expect(parseErrorOfSync(() => readInputFileSync('/dev/zero')).code).toBe(PARSE_ERROR.UNSUPPORTED);
  });
});

describe('WriteQueue', () => {
  /** A promise and the functions that settle it. */
  function deferred(): { promise: Promise<void>; resolve: () => void; reject: (error: Error) => void } {
    let resolve!: () => void, reject!: (error: Error) => void;
    const promise = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  }

  /** Asserts that `waiting` is still pending after a pause, and resolves once `release()` has run. */
  async function resolvesOnlyAfter(waiting: Promise<void>, release: () => void): Promise<void> {
    let done = false;
    const watched = waiting.then(() => {
      done = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(done).toBe(false);
    release();
    await watched;
    expect(done).toBe(true);
  }

  it('makes room only once fewer than the limit are pending, and drains them all', async () => {
    const queue = new WriteQueue(2);
    const a = deferred(),
      b = deferred();
    queue.add(a.promise);
    await queue.room(); // one pending, under the limit
    queue.add(b.promise);
    await resolvesOnlyAfter(queue.room(), b.resolve);
    await resolvesOnlyAfter(queue.drain(), a.resolve);
  });

  it('reports a failed write where it is awaited, and settles past it', async () => {
    const queue = new WriteQueue(4);
    const a = deferred(),
      b = deferred();
    queue.add(a.promise);
    queue.add(b.promise);
    a.reject(new Error('disk full'));
    await expect(queue.drain()).rejects.toThrow('disk full');
    await resolvesOnlyAfter(queue.settle(), b.resolve);
  });
});
