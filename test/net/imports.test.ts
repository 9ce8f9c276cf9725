import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

const NET = fileURLToPath(new URL('../../src/net/', import.meta.url));
const ALLOWED = [
  /^\.\/[a-z-]+\.js$/,
  /^\.\.\/runtime\/[a-z-]+\.js$/,
  /^\.\.\/clip\/[a-z-]+\.js$/,
  /^\.\.\/metric\/error-metric\.js$/,
  /^\.\.\/shared\/[a-z-]+\.js$/,
];

describe('bonepress/net imports', () => {
  it('stay browser-safe: only net, runtime, clip and the error metric; nothing from node:*', () => {
    const files = readdirSync(NET).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      const text = readFileSync(join(NET, file), 'utf8');
      const specifiers = [...text.matchAll(/(?:import|export)[^'"]*?from\s+'([^']+)'/g)].map((m) => m[1]);
      for (const spec of specifiers) {
        expect(
          ALLOWED.some((re) => re.test(spec)),
          `${file} imports ${spec}`,
        ).toBe(true);
      }
    }
  });

  it('the entry point uses named exports only', () => {
    expect(readFileSync(join(NET, 'index.ts'), 'utf8')).not.toMatch(/export \*/);
  });
});
