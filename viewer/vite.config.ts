/**
 * The viewer is a plain static site: root viewer/, relative asset URLs (`base: './'`) so
 * viewer/dist works from any static server or sub-folder. `bonepress`, `bonepress/runtime`
 * and `bonepress/three` resolve through the package's own `exports` map to dist/ (package
 * self-reference), exactly as in a user's app; run `npm run build` first (the `viewer` and
 * `viewer:build` scripts do).
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: './',
  build: {
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // three.js alone is ~700 kB minified; the viewer is a tool page, not a landing page.
    chunkSizeWarningLimit: 1500,
  },
  worker: { format: 'es' },
  server: { host: '127.0.0.1' },
  preview: { host: '127.0.0.1' },
});
