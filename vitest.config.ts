/**
 * Root test run (`npm test`): every test file but the viewer's end-to-end test (it needs a
 * built viewer and chromium: `npm run test:e2e`). Files run in parallel on every core (the
 * CLI tests mostly wait on child processes); the long property runs are `npm run fuzz`.
 */
import { availableParallelism } from 'node:os';

import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    exclude: [...configDefaults.exclude, 'viewer/**'],
    // Spawned CLIs on a loaded 2-core machine can take seconds; a hang still ends the test.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    maxWorkers: Math.max(2, availableParallelism()),
  },
});
