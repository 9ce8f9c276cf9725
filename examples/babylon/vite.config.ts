/**
 * The Babylon.js example is a static page (root examples/babylon, output
 * examples/babylon/dist, relative URLs). `bonepress/babylon` resolves through the package's
 * own `exports` map to dist/, as in a user's app: run `npm run build` first (the
 * `example:babylon` scripts do).
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  build: {
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // Babylon's engine, scene and glTF loader are ~1.5 MB minified whatever the page does.
    chunkSizeWarningLimit: 4000,
  },
  server: { host: '127.0.0.1' },
});
