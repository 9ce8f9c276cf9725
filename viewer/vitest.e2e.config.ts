/**
 * End-to-end test of the built viewer (viewer/dist) in Debian's chromium. Run through
 * `npm run test:e2e`, which builds the library and the viewer first.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    include: ['viewer/test/**/*.e2e.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
