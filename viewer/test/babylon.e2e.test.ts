/**
 * End-to-end: the Babylon.js example page (examples/babylon, built with Vite) loads a glTF
 * asset compressed with BONEPRESS_animation_compression (a skinned character made from two
 * mocap fixtures, as the viewer's asset test makes it) through Babylon's glTF loader and
 * the `bonepress/babylon` extension in Debian's chromium, plays it in both modes, reports
 * no page error, and the skinned mesh's pixels change between two times.
 *
 * Run with `npm run test:e2e` (builds the library, the viewer and the example first).
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { NodeIO } from '@gltf-transform/core';
import { readClips } from 'bonepress';
import { BonepressAnimationCompression, compressDocument } from 'bonepress/gltf-transform';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { compareCaptures, launchChromium } from './browser.js';
import { skinnedDocument } from './skinned-glb.js';
import { serve } from './static-server.js';

/** The built example (npm run example:babylon:build). */
const EXAMPLE = fileURLToPath(new URL('../../examples/babylon/dist/', import.meta.url));
const SCREENSHOTS = fileURLToPath(new URL('./screenshots/', import.meta.url));
const FIXTURES = ['dataset-1_walk_happy_002.bvh', 'dataset-1_run_active_001.bvh'].map((name) =>
  fileURLToPath(new URL(`../../fixtures/${name}`, import.meta.url)),
);

/** Pauses the page at `seconds`, keeps the canvas pixels under `key` and counts the body's (orange: red above green above blue). */
function captureAt(page: Page, seconds: number, key: string): Promise<number> {
  return page.evaluate(
    ([t, k]) => {
      (window as unknown as { bonepress: { pauseAt(s: number): void } }).bonepress.pauseAt(t);
      const view = document.getElementById('view') as HTMLCanvasElement;
      const copy = document.createElement('canvas');
      copy.width = view.width;
      copy.height = view.height;
      const g = copy.getContext('2d')!;
      g.drawImage(view, 0, 0);
      const { data } = g.getImageData(0, 0, copy.width, copy.height);
      const store = ((window as unknown as { captures?: Record<string, Uint8ClampedArray> }).captures ??= {});
      store[k] = data;
      let body = 0;
      for (let i = 0; i < data.length; i += 4)
        if (data[i] > 80 && data[i] > data[i + 1] + 30 && data[i + 1] > data[i + 2] + 10) body++;
      return body;
    },
    [seconds, key] as const,
  );
}

describe('Babylon.js example: a compressed skinned glTF asset through the bonepress extension (built, in chromium)', () => {
  let server: Server;
  let context: BrowserContext;
  let profile: string;
  let origin: string;

  beforeAll(async () => {
    if (!existsSync(join(EXAMPLE, 'index.html'))) {
      throw new Error(
        `${EXAMPLE}index.html is missing: build the example first (npm run example:babylon:build, or npm run test:e2e)`,
      );
    }
    const clips = (await Promise.all(FIXTURES.map((f) => readClips(f, readFileSync(f))))).flat();
    const io = new NodeIO().registerExtensions([BonepressAnimationCompression]);
    const doc = skinnedDocument(clips, { metresPerUnit: 0.01 });
    await compressDocument(doc, { error: '0.01cm' });
    const compressed = await io.writeBinary(doc);
    server = await serve(EXAMPLE, new Map([['/model.bp.glb', compressed]]));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    ({ context, profile } = await launchChromium('bonepress-babylon-'));
  });

  afterAll(async () => {
    await context?.close();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  for (const mode of ['decode', 'resident'] as const) {
    it(`${mode}: plays the first animation group, with no page error, and the mesh moves between two times`, async () => {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(String(error)));
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      await page.goto(`${origin}/?mode=${mode}`);
      await page.waitForFunction(
        () => document.body.dataset.ready === '1' || document.body.dataset.ready === 'error',
        undefined,
        { timeout: 90_000 },
      );
      expect(await page.textContent('#status')).toContain(`"dataset-1_walk_happy_002" (${mode}), 2 animation group(s)`);
      // It plays: let a few frames render before pausing.
      await page.waitForTimeout(300);
      const bodyA = await captureAt(page, 0.2, 'a');
      await page.screenshot({ path: join(SCREENSHOTS, `babylon-${mode}-a.png`) });
      const bodyB = await captureAt(page, 1.4, 'b');
      await page.screenshot({ path: join(SCREENSHOTS, `babylon-${mode}-b.png`) });
      expect(bodyA).toBeGreaterThan(1000);
      expect(bodyB).toBeGreaterThan(1000);
      const { area, changed } = await compareCaptures(page, 'a', 'b');
      expect(changed).toBeGreaterThan(area * 0.2);
      expect(errors).toEqual([]);
      await page.close();
    });
  }
});
