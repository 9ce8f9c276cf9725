/**
 * What a TypeScript project that imports the package type-checks: `bonepress` and
 * `bonepress/node` declare nothing of @gltf-transform (whose declarations need `lib`
 * ES2025 for `Float16Array`), so a project without glTF output checks clean with
 * `skipLibCheck: false` and `lib` ES2022; glTF-Transform's types stay behind
 * `bonepress/gltf-transform`. Runs the real compiler on the built declarations (dist/).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { ROOT, makeTempDir } from '../cli/run-cli.js';

const temp = makeTempDir('bonepress-types-');
afterAll(() => temp.remove());

/** Type-checks `code` in a fresh project that has the package as `node_modules/bonepress`; the compiler's output. */
function typeCheck(name: string, code: string): { status: number | null; output: string } {
  const dir = join(temp.dir, name);
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  symlinkSync(ROOT, join(dir, 'node_modules', 'bonepress'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        lib: ['ES2022', 'DOM'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: false,
        noEmit: true,
        types: ['node'],
        typeRoots: [join(ROOT, 'node_modules', '@types')],
      },
      files: ['main.ts'],
    }),
  );
  writeFileSync(join(dir, 'main.ts'), code);
  const run = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir, '--listFiles'],
    { encoding: 'utf8', timeout: 120_000 },
  );
  return { status: run.status, output: run.stdout + run.stderr };
}

describe('the package in a TypeScript project with skipLibCheck false and lib ES2022', () => {
  it('bonepress and bonepress/node check clean and load no @gltf-transform declaration', { timeout: 180_000 }, () => {
    const { status, output } = typeCheck(
      'plain',
      [
        "import { compress, readBvh } from 'bonepress';",
        "import { compressFiles, compressGltfFile, readCompressedGltfFile } from 'bonepress/node';",
        'export const used = [compress, readBvh, compressFiles, compressGltfFile, readCompressedGltfFile];',
      ].join('\n'),
    );
    expect(output).not.toContain('error TS');
    expect(status).toBe(0);
    expect(output).toContain('dist/node/gltf-files.d.ts');
    expect(output).not.toMatch(/@gltf-transform/);
  });

  it('bonepress/node exports no CLI-only helper', async () => {
    const node = (await import(join(ROOT, 'dist', 'node', 'index.js'))) as Record<string, unknown>;
    for (const name of [
      'stageFile',
      'commitStaged',
      'discardStaged',
      'planOutputs',
      'planBatchOutputs',
      'resolveOutputTarget',
      'writeChunksAtomic',
      'toFailure',
      'problemOf',
    ]) {
      expect(node[name], name).toBeUndefined();
    }
    for (const name of [
      'compressFiles',
      'compressFile',
      'compressLibrary',
      'compressGltfFile',
      'readClipFiles',
      'mergeManifests',
      'expandInputs',
      'OutputError',
    ]) {
      expect(typeof node[name], name).toBe('function');
    }
  });

  it("bonepress/gltf-transform is where glTF-Transform's declarations come in", { timeout: 180_000 }, () => {
    const { output } = typeCheck(
      'gltf',
      "import { bonepress } from 'bonepress/gltf-transform';\nexport const used = bonepress;\n",
    );
    expect(output).toMatch(/@gltf-transform\/core\/dist\/index\.d\.ts/);
  });
});
