import { describe, expect, it } from 'vitest';

import { loadReferences, referencesFor } from '../../src/bench/references.js';

describe('reference figures', () => {
  const references = loadReferences();

  it('are read from bench/references.json, each system with its source', () => {
    expect(references).toBeDefined();
    expect(references!.corpus).toMatchObject({
      name: 'bandai-ds1',
      clips: 174,
      rawBytes: 28_084_320,
      error: '0.01cm',
      shell: '3cm',
    });
    for (const system of [
      references!.acl,
      references!.gltfpackC,
      references!.gltfpackCC,
      references!.three,
      references!.goals,
    ]) {
      expect(system.source.length).toBeGreaterThan(20);
    }
  });

  it('apply only to a run over their corpus at their settings', () => {
    const run = { totals: { clips: 174, rawBytes: 28_084_320 }, settings: { error: '0.01cm', shell: '3cm' } };
    expect(referencesFor(run, references)).toBe(references);
    expect(referencesFor({ ...run, totals: { clips: 8, rawBytes: 1_122_000 } }, references)).toBeUndefined();
    expect(referencesFor({ ...run, totals: { clips: 174, rawBytes: 28_084_321 } }, references)).toBeUndefined();
    expect(referencesFor({ ...run, settings: { error: '0.02cm', shell: '3cm' } }, references)).toBeUndefined();
    expect(referencesFor({ ...run, settings: { error: '0.01cm', shell: '5cm' } }, references)).toBeUndefined();
    expect(referencesFor(run, null)).toBeUndefined();
  });

  it('a missing or foreign file means no references', () => {
    expect(loadReferences(new URL('./no-such-file.json', import.meta.url))).toBeUndefined();
    expect(loadReferences(new URL('../../package.json', import.meta.url))).toBeUndefined();
  });
});
