/**
 * Every asset of the glTF corpus (test/khronos/harness.ts: the Khronos sample models, or
 * generated rigs of the same shapes without ../shared) through the built CLI and three.js:
 * compressed to `.bp.glb` and to `.bpk` within the bound; no validator error the source
 * lacks; the GLTFLoader plugin, `createMixerClip` and `CompressedClipPlayer` each within the
 * threshold of three.js's own playback of the source at random times and around every key;
 * `verify` and `info` on the output; and no output whose animation bytes exceed the source's.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { animationBytes } from '../../src/gltf-transform/index.js';
import { runCli, type CliRun } from '../cli/run-cli.js';
import { assetJson, corpusAssets, playbackErrors, TOLERANCE, validatorErrors, type CorpusAsset } from './harness.js';

const work = mkdtempSync(join(tmpdir(), 'bonepress-khronos-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const { assets, khronos } = await corpusAssets(work);

// A model of several megabytes takes a few seconds per CLI run on a loaded 2-core machine.
const MODEL_MS = 180_000;

describe(`glTF corpus (${khronos ? 'Khronos sample models' : 'generated rigs: ../shared is absent'})`, () => {
  it('has every asset', () => {
    expect(assets.length).toBe(khronos ? 18 : 7);
  });

  describe.each(assets)('$name', (asset: CorpusAsset) => {
    const glbOut = join(work, `${asset.name}.bp.glb`);
    const bpkDir = join(work, `${asset.name}-bpk`);
    let glbRun: CliRun, bpkRun: CliRun;
    beforeAll(() => {
      mkdirSync(bpkDir);
      glbRun = runCli(['compress', asset.file, '-o', glbOut, '--jobs', '1'], MODEL_MS);
      bpkRun = runCli(['compress', asset.file, '-o', `${bpkDir}/`, '--jobs', '1'], MODEL_MS);
    }, MODEL_MS * 2);

    it('compresses to .bp.glb and to .bpk within the bound (exit 0)', () => {
      expect({ code: glbRun.code, stderr: glbRun.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
      expect({ code: bpkRun.code, stderr: bpkRun.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    });

    it('writes no validator error the source lacks', async () => {
      const source = await validatorErrors(asset.file);
      const output = await validatorErrors(glbOut);
      expect([...output].filter((code) => !source.has(code))).toEqual([]);
    });

    it('writes no more animation bytes than the source holds, in either form', async () => {
      const source = animationBytes(await assetJson(asset.file)).total;
      expect(animationBytes(await assetJson(glbOut)).total).toBeLessThanOrEqual(source);
      const loose = readdirSync(bpkDir).reduce((sum, f) => sum + statSync(join(bpkDir, f)).size, 0);
      expect(loose).toBeLessThanOrEqual(source);
    });

    it('verify source out passes, and info out summarises every animation', async () => {
      const verified = runCli(['verify', asset.file, glbOut], MODEL_MS);
      expect({ code: verified.code, stderr: verified.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
      const info = runCli(['info', glbOut], MODEL_MS);
      expect({ code: info.code, stderr: info.stderr }).toEqual({ code: 0, stderr: '' });
      const named = (await assetJson(asset.file)).animations?.map((a) => a.name).filter((n): n is string => !!n) ?? [];
      expect(named.filter((name) => !info.stdout.includes(name))).toEqual([]);
    });

    it('plays within the threshold of three.js playing the source: the plugin, createMixerClip and CompressedClipPlayer', async () => {
      const { errors, problems } = await playbackErrors(asset.file, glbOut, bpkDir);
      expect(errors.length).toBeGreaterThanOrEqual(3);
      const over = errors.filter((e) => !(e.error <= TOLERANCE)).map((e) => `${e.animation} ${e.path}: ${(e.error * 100).toPrecision(3)} cm at ${e.time.toFixed(4)} s`);
      expect([...over, ...problems]).toEqual([]);
    }, MODEL_MS);
  });
});
