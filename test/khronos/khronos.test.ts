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
import { startCli, type CliRun } from '../cli/run-cli.js';
import { assetJson, corpusAssets, playbackErrors, THRESHOLD, validatorErrors, type CorpusAsset } from './harness.js';

const work = mkdtempSync(join(tmpdir(), 'bonepress-khronos-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const { assets, khronos } = await corpusAssets(work);

// A model of several megabytes takes a few seconds per CLI run on a loaded 2-core machine.
const MODEL_MS = 180_000;

describe(`glTF corpus (${khronos ? 'Khronos sample models' : 'generated rigs: ../shared is absent'})`, () => {
  it('has every asset', () => {
    expect(assets.length).toBe(khronos ? 18 : 7);
  });

  // Every compression up front, two at a time (the machine's cores), each in a process of its own.
  const runs = new Map<string, CliRun>();
  const outputs = (asset: CorpusAsset) => ({
    glbOut: join(work, `${asset.name}.bp.glb`),
    bpkDir: join(work, `${asset.name}-bpk`),
  });
  beforeAll(async () => {
    const jobs = assets.flatMap((asset) => {
      const { glbOut, bpkDir } = outputs(asset);
      mkdirSync(bpkDir);
      return [
        [`${asset.name} glb`, ['compress', asset.file, '-o', glbOut, '--jobs', '1']],
        [`${asset.name} bpk`, ['compress', asset.file, '-o', `${bpkDir}/`, '--jobs', '1']],
      ] as const;
    });
    const pool = async (queue: (readonly [string, readonly string[]])[]): Promise<void> => {
      const next = async (): Promise<void> => {
        for (let job = queue.shift(); job; job = queue.shift()) {
          const cli = startCli(job[1]);
          const exit = await cli.waitForExit(MODEL_MS);
          runs.set(job[0], { code: exit.timedOut ? null : exit.code, stdout: cli.stdout, stderr: cli.stderr });
        }
      };
      await Promise.all([next(), next()]);
    };
    await pool(jobs);
    await pool(
      assets.flatMap((asset) => {
        const { glbOut } = outputs(asset);
        return [
          [`${asset.name} verify`, ['verify', asset.file, glbOut]],
          [`${asset.name} info`, ['info', glbOut]],
        ] as const;
      }),
    );
  }, MODEL_MS * assets.length);

  describe.each(assets)('$name', (asset: CorpusAsset) => {
    const { glbOut, bpkDir } = outputs(asset);
    let glbRun: CliRun, bpkRun: CliRun;
    beforeAll(() => {
      glbRun = runs.get(`${asset.name} glb`)!;
      bpkRun = runs.get(`${asset.name} bpk`)!;
    });

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
      const warned = /more than the \d+ bytes of the source's animations/.test(bpkRun.stderr);
      // Every Khronos model's loose clips fit in its source. A generated rig's CUBICSPLINE curve
      // (30° a key at 4 Hz) takes more samples than its keys' bytes: then compress must say so.
      if (khronos) expect(loose).toBeLessThanOrEqual(source);
      expect(warned).toBe(loose > source);
    });

    it('verify source out passes, and info out summarises every animation', async () => {
      const verified = runs.get(`${asset.name} verify`)!;
      expect({ code: verified.code, stderr: verified.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
      const info = runs.get(`${asset.name} info`)!;
      expect({ code: info.code, stderr: info.stderr }).toEqual({ code: 0, stderr: '' });
      const named = (await assetJson(asset.file)).animations?.map((a) => a.name).filter((n): n is string => !!n) ?? [];
      expect(named.filter((name) => !info.stdout.includes(name))).toEqual([]);
    });

    it(
      'plays within the threshold of three.js playing the source: the plugin, createMixerClip and CompressedClipPlayer',
      async () => {
        const { errors, problems } = await playbackErrors(asset.file, glbOut, bpkDir);
        expect(errors.length).toBeGreaterThanOrEqual(3);
        const over = errors
          .filter((e) => e.error > THRESHOLD)
          .map((e) => `${e.animation} ${e.path}: ${(e.error * 100).toPrecision(3)} cm at ${e.time.toFixed(4)} s`);
        expect([...over, ...problems]).toEqual([]);
      },
      MODEL_MS,
    );
  });
});
