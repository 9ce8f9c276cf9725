/**
 * Headless Chromium for the viewer's e2e tests: where it and the built viewer are, a check
 * that says how to get whichever is missing, and a launch with a fresh profile and the
 * flags that keep it off the network.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** The built viewer (npm run viewer:build). */
export const DIST = fileURLToPath(new URL('../dist/', import.meta.url));
/** Debian's chromium, or CHROMIUM_PATH. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Launches Chromium headless in a new profile folder named `profilePrefix…` (the caller
 * removes it). Throws, saying what to do, when Chromium or the built viewer is missing.
 */
export async function launchChromium(
  profilePrefix: string,
  options: { acceptDownloads?: boolean } = {},
): Promise<{ context: BrowserContext; profile: string }> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `chromium not found at ${CHROMIUM}: install Debian's chromium (apt-get install -y chromium), or run .ci/e2e, which installs it; CHROMIUM_PATH overrides the path`,
    );
  }
  if (!existsSync(join(DIST, 'index.html'))) {
    throw new Error(`${DIST}index.html is missing: build the viewer first (npm run viewer:build, or npm run test:e2e)`);
  }
  const profile = mkdtempSync(join(tmpdir(), profilePrefix));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 820 },
    ...options,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
  return { context, profile };
}

/**
 * Pixels that are body (the test characters' orange-brown) in either of two captures stored in
 * `window.captures`, and those of them whose colour changed clearly.
 */
export function compareCaptures(page: Page, a: string, b: string): Promise<{ area: number; changed: number }> {
  return page.evaluate(
    ([ka, kb]) => {
      const store = (window as unknown as { captures: Record<string, Uint8ClampedArray> }).captures;
      const x = store[ka],
        y = store[kb];
      const isBody = (d: Uint8ClampedArray, i: number): boolean =>
        d[i] > 80 && d[i] > d[i + 1] + 30 && d[i + 1] > d[i + 2] + 10;
      let area = 0,
        changed = 0;
      for (let i = 0; i < x.length; i += 4) {
        if (!isBody(x, i) && !isBody(y, i)) continue;
        area++;
        if (Math.abs(x[i] - y[i]) + Math.abs(x[i + 1] - y[i + 1]) + Math.abs(x[i + 2] - y[i + 2]) > 60) changed++;
      }
      return { area, changed };
    },
    [a, b] as const,
  );
}
