/**
 * End-to-end: the built viewer (viewer/dist) served on 127.0.0.1, driven in Debian's
 * chromium. The figures on the page must be the library's own for the same clip and
 * settings, to the digits shown. Screenshots go to viewer/test/screenshots/ (gitignored).
 *
 * Run with `npm run test:e2e` (builds the library and the viewer first).
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Document, WebIO } from '@gltf-transform/core';
import { compress, convertLength, POSE_STRIDE, readClips, type RawClip } from 'bonepress';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { formatBytes, formatDistance, formatRatio } from '../src/format.js';
import { DIST, launchChromium } from './browser.js';
import { serve } from './static-server.js';

const SCREENSHOTS = fileURLToPath(new URL('./screenshots/', import.meta.url));
/** The clip the viewer opens by itself (viewer/src/default-clip.ts). */
const FIXTURE = fileURLToPath(new URL('../../fixtures/dataset-1_run_active_001.bvh', import.meta.url));

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

/** Pixels that differ clearly from the background colour, in the left and right half of the 3D view. */
function paintedPixels(page: Page): Promise<{ left: number; right: number }> {
  return page.evaluate(() => {
    const view = document.getElementById('view') as HTMLCanvasElement;
    const copy = document.createElement('canvas');
    copy.width = view.width;
    copy.height = view.height;
    const g = copy.getContext('2d')!;
    g.drawImage(view, 0, 0);
    const { data } = g.getImageData(0, 0, copy.width, copy.height);
    let left = 0,
      right = 0;
    for (let i = 0; i < data.length; i += 4) {
      // Background 0x15181d, floor lines are grey: count saturated or bright pixels (bones).
      const r = data[i],
        gr = data[i + 1],
        b = data[i + 2];
      const bright = r + gr + b > 330;
      const saturated = Math.max(r, gr, b) - Math.min(r, gr, b) > 60;
      if (!bright && !saturated) continue;
      if ((i / 4) % copy.width < copy.width / 2) left++;
      else right++;
    }
    return { left, right };
  });
}

/**
 * A GLB holding `clip` twice (animations "first" and "second", the second played
 * backwards), in metres, skinned: what an exporter would write.
 */
async function glbOf(clip: RawClip): Promise<Uint8Array> {
  const doc = new Document();
  const buffer = doc.createBuffer('data');
  const { boneNames, parents, defaultPose } = clip.skeleton;
  const toMetres = 0.01;
  const scene = doc.createScene('scene');
  const skin = doc.createSkin('skin');
  const nodes = boneNames.map((name, b) => {
    const d = Array.from(defaultPose.subarray(b * POSE_STRIDE, (b + 1) * POSE_STRIDE));
    const node = doc
      .createNode(name)
      .setRotation([d[0], d[1], d[2], d[3]])
      .setTranslation([d[4] * toMetres, d[5] * toMetres, d[6] * toMetres])
      .setScale([d[7], d[8], d[9]]);
    skin.addJoint(node);
    return node;
  });
  nodes.forEach((node, b) => (parents[b] < 0 ? scene.addChild(node) : nodes[parents[b]].addChild(node)));
  const n = clip.sampleCount;
  const times = doc
    .createAccessor('times')
    .setType('SCALAR')
    .setBuffer(buffer)
    .setArray(Float32Array.from({ length: n }, (_, s) => s / clip.sampleRate));
  for (const [name, backwards] of [
    ['first', false],
    ['second', true],
  ] as const) {
    const anim = doc.createAnimation(name);
    nodes.forEach((node, b) => {
      for (const path of ['rotation', 'translation', 'scale'] as const) {
        const width = path === 'rotation' ? 4 : 3;
        const src = path === 'rotation' ? clip.rotations : path === 'translation' ? clip.translations : clip.scales;
        const values = new Float32Array(n * width);
        for (let s = 0; s < n; s++) {
          const from = (b * n + (backwards ? n - 1 - s : s)) * width;
          for (let c = 0; c < width; c++)
            values[s * width + c] = src[from + c] * (path === 'translation' ? toMetres : 1);
        }
        const output = doc
          .createAccessor()
          .setType(width === 4 ? 'VEC4' : 'VEC3')
          .setArray(values)
          .setBuffer(buffer);
        const sampler = doc.createAnimationSampler().setInput(times).setOutput(output).setInterpolation('LINEAR');
        anim
          .addSampler(sampler)
          .addChannel(doc.createAnimationChannel().setTargetNode(node).setTargetPath(path).setSampler(sampler));
      }
    });
  }
  return new WebIO().writeBinary(doc);
}

describe('viewer (built, in chromium)', () => {
  let server: Server;
  let context: BrowserContext;
  let page: Page;
  let origin: string;
  let profile: string;
  let clip: RawClip;
  const pageErrors: string[] = [];
  const foreignRequests: string[] = [];

  beforeAll(async () => {
    [clip] = await readClips(FIXTURE, readFileSync(FIXTURE));
    mkdirSync(SCREENSHOTS, { recursive: true });
    server = await serve(DIST);
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    ({ context, profile } = await launchChromium('bonepress-viewer-chromium-', { acceptDownloads: true }));
    context.on('request', (request) => {
      const url = request.url();
      if (!url.startsWith(origin) && !url.startsWith('blob:') && !url.startsWith('data:')) foreignRequests.push(url);
    });
    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text());
    });
    await page.goto(`${origin}/`);
  });

  afterAll(async () => {
    await context?.close();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it("compresses the default clip on load and shows the library's figures", async () => {
    await waitReady(page);
    const { stats } = compress(clip); // the library's defaults: 0.01 cm, shell 3 cm
    expect(stats.unit).toBe('cm');
    expect(await text(page, '#ratio')).toBe(formatRatio(stats.ratio));
    expect(await text(page, '#max-error')).toBe(formatDistance(stats.maxError, stats.unit));
    expect(await text(page, '#p99-error')).toBe(formatDistance(stats.p99Error, stats.unit));
    expect(await text(page, '#compressed-bytes')).toBe(formatBytes(stats.compressedBytes));
    expect(await text(page, '#raw-bytes')).toBe(formatBytes(stats.rawBytes));
    // And as numbers, whatever the formatting.
    expect(Math.abs(parseFloat(await text(page, '#ratio')) - stats.ratio)).toBeLessThanOrEqual(0.005);
    expect(Math.abs(parseFloat(await text(page, '#max-error')) - stats.maxError)).toBeLessThanOrEqual(0.00005);
    // One bar per bit rate the library used.
    expect(await page.locator('#histogram rect').count()).toBe(
      Object.values(stats.bitRateHistogram).filter((n) => n > 0).length,
    );
    expect(await page.locator('label:has-text("ratio"), dt:has-text("ratio")').count()).toBeGreaterThan(0);
  });

  it('scrubs to a time, colours the bones by their error there and draws both skeletons', async () => {
    await page.evaluate(() => {
      const scrub = document.getElementById('scrub') as HTMLInputElement;
      scrub.value = '1.2';
      scrub.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await page.waitForFunction(() => (document.getElementById('time') as HTMLOutputElement).value.startsWith('1.200 '));
    await page.waitForTimeout(100);
    expect(await text(page, '#time')).toContain('key 36');
    expect(await text(page, '#play')).toBe('▶'); // scrubbing pauses
    // 1.2 s is sample 36: its error is one of the samples the library measured.
    const now = Number(await page.getAttribute('#current-error', 'data-value'));
    const { stats } = compress(clip);
    expect(now).toBeGreaterThan(0);
    expect(now).toBeLessThanOrEqual(stats.maxError + 1e-9);
    await page.screenshot({ path: join(SCREENSHOTS, 'viewer.png') });
    const painted = await paintedPixels(page);
    expect(painted.left).toBeGreaterThan(200);
    expect(painted.right).toBeGreaterThan(200);
  });

  it('re-compresses when the threshold changes', async () => {
    await page.fill('#threshold', '0.05');
    await page.dispatchEvent('#threshold', 'change');
    await waitReady(page);
    const { stats } = compress(clip, { error: '0.05cm', shell: '3cm' });
    expect(await text(page, '#ratio')).toBe(formatRatio(stats.ratio));
    expect(await text(page, '#max-error')).toBe(formatDistance(stats.maxError, stats.unit));
    expect(await text(page, '#threshold-value')).toBe(formatDistance(0.05, 'cm'));
  });

  it('overlays the two skeletons', async () => {
    await page.selectOption('#mode', 'overlaid');
    await page.waitForTimeout(200);
    await page.screenshot({ path: join(SCREENSHOTS, 'viewer-overlaid.png') });
    const painted = await paintedPixels(page);
    expect(painted.left + painted.right).toBeGreaterThan(200);
  });

  it('downloads the .bpk and opens a .bpk alone, without error figures', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
    const saved = join(profile, 'downloaded.bpk');
    await download.saveAs(saved);
    const bytes = readFileSync(saved);
    const expected = compress(clip, { error: '0.05cm', shell: '3cm' });
    expect(Buffer.compare(bytes, Buffer.from(expected.bytes))).toBe(0);

    await page.setInputFiles('#file', { name: 'run.bpk', mimeType: 'application/octet-stream', buffer: bytes });
    await page.waitForFunction(() => (document.getElementById('status')?.textContent ?? '').startsWith('run.bpk'));
    await waitReady(page);
    expect(await text(page, '#ratio')).toBe(formatRatio(expected.stats.ratio));
    expect(await text(page, '#max-error')).toBe('–');
    expect(await page.isHidden('#legend')).toBe(true);
    await page.screenshot({ path: join(SCREENSHOTS, 'viewer-bpk.png') });
  });

  it('reads a GLB in the worker, with a picker for its animations', async () => {
    const glb = await glbOf(clip);
    const clips = await readClips('run.glb', glb);
    expect(clips.map((c) => c.name)).toEqual(['first', 'second']);
    const options = { error: '0.05cm', shell: '3cm' }; // what the fields still hold
    await page.setInputFiles('#file', { name: 'run.glb', mimeType: 'model/gltf-binary', buffer: Buffer.from(glb) });
    await page.waitForFunction(() =>
      (document.getElementById('status')?.textContent ?? '').includes('first compressed'),
    );
    await waitReady(page);
    let { stats } = compress(clips[0], options);
    expect(stats.unit).toBe('m');
    expect(await text(page, '#ratio')).toBe(formatRatio(stats.ratio));
    // Shown in the threshold field's unit (cm), not the clip's (m).
    expect(await text(page, '#max-error')).toBe(
      formatDistance(convertLength({ value: stats.maxError, unit: 'm' }, 'cm'), 'cm'),
    );
    expect(await page.isVisible('#clip-select')).toBe(true);
    expect(await page.locator('#clip-select option').count()).toBe(2);

    await page.selectOption('#clip-select', '1');
    await page.waitForFunction(() =>
      (document.getElementById('status')?.textContent ?? '').includes('second compressed'),
    );
    await waitReady(page);
    ({ stats } = compress(clips[1], options));
    expect(await text(page, '#ratio')).toBe(formatRatio(stats.ratio));
    expect(await text(page, '#compressed-bytes')).toBe(formatBytes(stats.compressedBytes));
    await page.screenshot({ path: join(SCREENSHOTS, 'viewer-glb.png') });
  });

  it('logged no errors and fetched nothing from outside 127.0.0.1', () => {
    expect(pageErrors).toEqual([]);
    expect(foreignRequests).toEqual([]);
  });
});
