import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { measureGltfAssets } from '../../src/bench/gltf-assets.js';
import { readGltfWithWarnings } from '../../src/readers/gltf.js';
import { makeSceneRig } from '../utils/gltf-rigs.js';

const dir = mkdtempSync(join(tmpdir(), 'bonepress-gltf-assets-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('measureGltfAssets', () => {
  it('reports source and output animation bytes and file sizes per asset, beside 40 B per bone per sample', async () => {
    const glb = await makeSceneRig({ texture: false });
    const path = join(dir, 'scene.glb');
    writeFileSync(path, glb);
    writeFileSync(
      join(dir, 'walk.bvh'),
      readFileSync(new URL('../../fixtures/dataset-1_walk_happy_002.bvh', import.meta.url)),
    );
    const work = join(dir, 'work');
    mkdirSync(work);
    const { assets, failures } = await measureGltfAssets(
      [
        { path: join(dir, 'walk.bvh'), id: 'walk.bvh' },
        { path, id: 'scene.glb' },
      ],
      { error: '0.01cm', shell: '3cm' },
      work,
    );
    expect(failures).toEqual([]);
    expect(assets.map((a) => a.id)).toEqual(['scene.glb']); // BVH files are not assets
    const [a] = assets;
    // The clips glTF output compresses: skeletal, morph-weight and prop tracks (docs/gltf-extension.md, "Extra bones").
    const { clips } = await readGltfWithWarnings(glb, path, { extraTracks: true });
    expect(a.clips).toBe(clips.length);
    expect(a.rawBytes).toBe(clips.reduce((s, c) => s + 40 * c.skeleton.boneNames.length * c.sampleCount, 0));
    expect(a.sourceFileBytes).toBe(statSync(path).size);
    expect(a.outputAnimation.compressedBytes).toBeGreaterThan(0);
    expect(a.sourceAnimation.compressedBytes).toBe(0);
    expect(a.outputAnimation.total).toBeLessThan(a.sourceAnimation.total);
    expect(a.outputFileBytes).toBeGreaterThan(0);
  });

  it('lists an asset that cannot be compressed as a failure naming the file', async () => {
    const bad = join(dir, 'bad.glb');
    writeFileSync(bad, 'glTF not really');
    const { assets, failures } = await measureGltfAssets(
      [{ path: bad, id: 'bad.glb' }],
      { error: '0.01cm', shell: '3cm' },
      dir,
    );
    expect(assets).toEqual([]);
    expect(failures).toHaveLength(1);
    expect(failures[0].file).toBe(bad);
  });
});
