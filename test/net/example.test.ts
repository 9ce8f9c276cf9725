import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('examples/net/world.mjs', () => {
  // It imports 'bonepress/net', i.e. the build (`npm test` builds first).
  it("runs: both clients see the player, the despawned crate and the player's fields", () => {
    const out = execFileSync(process.execPath, ['examples/net/world.mjs'], { cwd: ROOT, encoding: 'utf8' });
    const lines = out.trim().split('\n');
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line).toMatch(
        /^client \d: [\d.]+ kbps; player drawn at \(-?\d+\.\d+, -?\d+\.\d+\); crate 42 despawned; health 100$/,
      );
      const kbps = Number(/: ([\d.]+) kbps/.exec(line)![1]);
      expect(kbps).toBeGreaterThan(1);
      expect(kbps).toBeLessThan(64);
    }
  });
});
