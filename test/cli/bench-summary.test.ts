import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { runBench } from '../../src/bench/run.js';
import { renderBenchSummary } from '../../src/cli/commands/bench.js';
import { FIXTURES } from './run-cli.js';

describe('bench summary: `compress` as whole processes', () => {
  it('prints --jobs 1 and --jobs N as the user runs them, and compares ACL with the whole --jobs 1 process', {
    timeout: 120_000,
  }, async () => {
    const result = await runBench({
      corpus: [path.join(FIXTURES, 'dataset-1_dash_normal_001.bvh')],
      jobs: 1,
      decode: false,
      poolCheck: false,
      speed: false,
    });
    // From the sources there is no built command line to time: the figure is absent.
    expect(result.throughput.wholeProcess ?? null).toBeNull();
    const without = renderBenchSummary(result, undefined, undefined, false);
    expect(without).not.toContain('whole process');

    result.throughput.wholeProcess = {
      one: { jobs: 1, seconds: 6, cpuSeconds: 5.5, rounds: [6.5, 6, 5.9], clips: 1 },
      pool: { jobs: 2, seconds: 4, cpuSeconds: 7.25, rounds: [4, 4.1, 3.9], clips: 1 },
      speedup: 1.5,
      split: { jobs: 2, seconds: 3.75, cpuSeconds: 6.5, rounds: [3.75, 3.8, 3.7], clips: 1 },
      splitSpeedup: 1.6,
    };
    result.speed = {
      efforts: null,
      scaling: null,
      acl: { label: 'ACL test', clips: 1, compressSeconds: 3, processSeconds: 4, rawBytes: 1e6 },
    };
    const text = renderBenchSummary(result, undefined, undefined, false);
    const line = (label: string): string => text.split('\n').find((l) => l.startsWith(label)) ?? '';
    expect(line('compress --jobs 1, whole process')).toMatch(
      /6\.00 s .*CPU 5\.50 s · median of 3 \(6\.50, 6\.00, 5\.90\)/,
    );
    expect(line('compress --jobs 2, whole process')).toMatch(/4\.00 s .*CPU 7\.25 s .*1\.50× --jobs 1/);
    expect(line('2 × compress --jobs 1 at once')).toMatch(/3\.75 s .*CPU 6\.50 s .*1\.60× --jobs 1 · each on a share/);
    expect(line('native ACL test')).toContain(
      "bonepress compress --jobs 1 6.00 s: 2.00× ACL's compression, 1.50× its loop",
    );
  });
});
