/**
 * End-to-end: the built viewer opens a glTF asset compressed with BONEPRESS_animation_compression
 * (made here from two mocap fixtures through the public `bonepress/gltf-transform` API) and
 * plays its skinned mesh through `BonepressGLTFLoaderPlugin` in Debian's chromium; and it
 * compresses a source asset whole in its worker and shows both sizes.
 *
 * Run with `npm run test:e2e` (builds the library and the viewer first).
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { NodeIO, type GLTF } from '@gltf-transform/core';
import { readClips } from 'bonepress';
import {
  animationBytes,
  BONEPRESS_ANIMATION_COMPRESSION,
  BonepressAnimationCompression,
  compressDocument,
} from 'bonepress/gltf-transform';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { formatBytes } from '../src/format.js';
import { skinnedDocument } from './skinned-glb.js';
import { compareCaptures, DIST, launchChromium } from './browser.js';
import { serve } from './static-server.js';

const SCREENSHOTS = fileURLToPath(new URL('./screenshots/', import.meta.url));
const FIXTURES = ['dataset-1_walk_happy_002.bvh', 'dataset-1_run_active_001.bvh'].map((name) =>
  fileURLToPath(new URL(`../../fixtures/${name}`, import.meta.url)),
);

async function waitReady(page: Page): Promise<void> {
  await page.waitForFunction(
    () => document.body.dataset.ready === '1' || document.body.dataset.ready === 'error',
    undefined,
    { timeout: 90_000 },
  );
  const state = await page.evaluate(() => document.body.dataset.ready);
  if (state !== '1') throw new Error(`viewer reported an error: ${await page.textContent('#status')}`);
}

const text = async (page: Page, selector: string): Promise<string> => ((await page.textContent(selector)) ?? '').trim();

function jsonOf(glb: Uint8Array): GLTF.IGLTF {
  const view = new DataView(glb.buffer, glb.byteOffset, glb.byteLength);
  return JSON.parse(new TextDecoder().decode(glb.subarray(20, 20 + view.getUint32(12, true)))) as GLTF.IGLTF;
}

/** Scrubs to `seconds` (which pauses) and waits until the page shows that time. */
async function scrubTo(page: Page, seconds: number): Promise<void> {
  await page.evaluate((t) => {
    const scrub = document.getElementById('scrub') as HTMLInputElement;
    scrub.value = String(t);
    scrub.dispatchEvent(new Event('input', { bubbles: true }));
  }, seconds);
  await page.waitForFunction(
    (t) => (document.getElementById('time') as HTMLOutputElement).value.startsWith(`${t.toFixed(3)} `),
    seconds,
  );
  await page.waitForTimeout(150);
}

/**
 * Keeps the 3D view's pixels in the page under `key` and counts the body's pixels: orange,
 * red well above green and green above blue (the background, floor and bones are grey or blue).
 */
function capture(page: Page, key: string): Promise<number> {
  return page.evaluate((k) => {
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
  }, key);
}

/** The rows and columns the body's pixels span in the capture under `key`, and the capture's size. */
function bodyBox(
  page: Page,
  key: string,
): Promise<{ top: number; bottom: number; left: number; right: number; width: number; height: number }> {
  return page.evaluate((k) => {
    const view = document.getElementById('view') as HTMLCanvasElement;
    const data = (window as unknown as { captures: Record<string, Uint8ClampedArray> }).captures[k];
    const width = view.width,
      height = view.height;
    let top = height,
      bottom = -1,
      left = width,
      right = -1;
    for (let i = 0; i < data.length; i += 4) {
      if (!(data[i] > 80 && data[i] > data[i + 1] + 30 && data[i + 1] > data[i + 2] + 10)) continue;
      const x = (i / 4) % width,
        y = Math.floor(i / 4 / width);
      top = Math.min(top, y);
      bottom = Math.max(bottom, y);
      left = Math.min(left, x);
      right = Math.max(right, x);
    }
    return { top, bottom, left, right, width, height };
  }, key);
}

describe('viewer: a compressed glTF asset (built, in chromium)', () => {
  let server: Server;
  let context: BrowserContext;
  let page: Page;
  let origin: string;
  let profile: string;
  let source: Uint8Array;
  let compressed: Uint8Array;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    const clips = (await Promise.all(FIXTURES.map((f) => readClips(f, readFileSync(f))))).flat();
    const io = new NodeIO().registerExtensions([BonepressAnimationCompression]);
    source = await io.writeBinary(skinnedDocument(clips, { metresPerUnit: 0.01 }));
    const doc = await io.readBinary(source);
    const report = await compressDocument(doc, { error: '0.01cm' });
    expect(report.animations.map((a) => a.animation)).toEqual(clips.map((c) => c.name));
    compressed = await io.writeBinary(doc);

    mkdirSync(SCREENSHOTS, { recursive: true });
    server = await serve(DIST, new Map([['/e2e/hero.bp.glb', compressed]]));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    ({ context, profile } = await launchChromium('bonepress-viewer-asset-'));
    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text());
    });
    await page.goto(`${origin}/?open=e2e/hero.bp.glb`);
  });

  afterAll(async () => {
    await context?.close();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('the asset requires the extension and keeps no plain skeletal channels', () => {
    const json = jsonOf(compressed);
    expect(json.extensionsRequired).toContain(BONEPRESS_ANIMATION_COMPRESSION);
    for (const animation of json.animations ?? []) {
      expect(animation.extensions?.[BONEPRESS_ANIMATION_COMPRESSION]).toBeDefined();
      for (const channel of animation.channels)
        expect(['rotation', 'translation', 'scale']).not.toContain(
          channel.target.node !== undefined ? channel.target.path : '',
        );
    }
  });

  it("opens it from ?open=, through the plugin: one skinned mesh, two compressed clips, the file's sizes", async () => {
    await waitReady(page);
    const data = await page.evaluate(() => ({ ...document.body.dataset }));
    expect(data.skinnedMeshes).toBe('1');
    expect(data.clips).toBe('2');
    expect(data.compressedClips).toBe('2');
    expect(await page.locator('#clip-select option').count()).toBe(2);
    expect(await page.isVisible('#clip-select')).toBe(true);
    expect(await text(page, '#clip-name')).toBe('dataset-1_walk_happy_002');
    expect(await text(page, '#file-bytes')).toBe(formatBytes(compressed.byteLength));
    expect(await text(page, '#animation-bytes')).toBe(formatBytes(animationBytes(jsonOf(compressed)).total));
    expect(await text(page, '#source-file-bytes')).toBe('–');
  });

  it('renders the skinned mesh and it moves between two times', async () => {
    // The camera follows the figure (the viewer's default), so it stays in view as it walks.
    expect(await page.isChecked('#follow')).toBe(true);
    await scrubTo(page, 0.2);
    const bodyA = await capture(page, 'a');
    await page.screenshot({ path: join(SCREENSHOTS, 'viewer-asset-a.png') });
    await scrubTo(page, 1.4);
    const bodyB = await capture(page, 'b');
    await page.screenshot({ path: join(SCREENSHOTS, 'viewer-asset-b.png') });
    // The body covers a good part of the view at both times (bones alone would not be orange).
    expect(bodyA).toBeGreaterThan(2000);
    expect(bodyB).toBeGreaterThan(2000);
    // Inside the body's area at either time, many pixels change: the mesh is skinned and posed.
    const { area, changed } = await compareCaptures(page, 'a', 'b');
    expect(changed).toBeGreaterThan(area * 0.2);
    // Framed whole: the figure (180 units tall) keeps clear of every edge of the view, head and feet included.
    for (const key of ['a', 'b']) {
      const { top, bottom, left, right, height, width } = await bodyBox(page, key);
      expect(top, key).toBeGreaterThan(0.02 * height);
      expect(bottom, key).toBeLessThan(0.98 * height);
      expect(left, key).toBeGreaterThan(0.02 * width);
      expect(right, key).toBeLessThan(0.98 * width);
    }
  });

  it("plays it: after play, the time display advances and the skinned mesh's pixels change between frames", async () => {
    expect(await text(page, '#play')).toBe('▶'); // scrubbing paused it
    await page.click('#play');
    const timeOf = (): Promise<number> =>
      page.evaluate(() => parseFloat((document.getElementById('time') as HTMLOutputElement).value));
    const t0 = await timeOf();
    await capture(page, 'play-a');
    await page.waitForFunction(
      (t) => parseFloat((document.getElementById('time') as HTMLOutputElement).value) > t + 0.3,
      t0,
    );
    await page.waitForTimeout(50);
    await capture(page, 'play-b');
    const t1 = await timeOf();
    await page.click('#play');
    expect(t1).toBeGreaterThan(t0 + 0.3);
    const { area, changed } = await compareCaptures(page, 'play-a', 'play-b');
    expect(area).toBeGreaterThan(2000);
    expect(changed).toBeGreaterThan(area * 0.1);
  });

  it('switches to the second animation with the picker', async () => {
    await page.selectOption('#clip-select', '1');
    await page.waitForFunction(() => document.getElementById('clip-name')?.textContent === 'dataset-1_run_active_001');
    // The time display follows at the next animation frame (later than the name on a busy machine).
    await page.waitForFunction(() => (document.getElementById('time')?.textContent ?? '').startsWith('0.000 /'));
    expect(await text(page, '#time')).toMatch(/^0\.000 \//);
  });

  it('compresses a source asset whole in the worker and shows both sizes', async () => {
    await page.setInputFiles('#file', { name: 'hero.glb', mimeType: 'model/gltf-binary', buffer: Buffer.from(source) });
    await page.waitForFunction(() => (document.getElementById('status')?.textContent ?? '').startsWith('hero.glb'));
    await waitReady(page);
    expect(await page.isVisible('#view-asset')).toBe(true);
    await page.click('#view-asset');
    await page.waitForFunction(() => (document.getElementById('status')?.textContent ?? '').startsWith('hero.bp.glb'));
    await waitReady(page);
    const data = await page.evaluate(() => ({ ...document.body.dataset }));
    expect(data.skinnedMeshes).toBe('1');
    expect(data.compressedClips).toBe('2');
    expect(await text(page, '#source-file-bytes')).toBe(formatBytes(source.byteLength));
    expect(await text(page, '#source-animation-bytes')).toBe(formatBytes(animationBytes(jsonOf(source)).total));
    // The viewer compressed with the threshold field's default (0.01 cm), as the test did.
    expect(await text(page, '#file-bytes')).toBe(formatBytes(compressed.byteLength));
    await page.screenshot({ path: join(SCREENSHOTS, 'viewer-asset-source.png') });
  });

  it('logged no errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
