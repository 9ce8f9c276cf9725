/**
 * Root test run (`npm test`): vitest's defaults, without the viewer's end-to-end test
 * (it needs a built viewer and chromium: `npm run test:e2e`).
 */
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    exclude: [...configDefaults.exclude, 'viewer/**'],
  },
});
