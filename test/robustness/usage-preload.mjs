// Loaded with `node --import` into a CLI run by resource-run.ts: at exit, writes the
// process's CPU time and peak resident memory (all threads) to $BONEPRESS_USAGE_FILE.
import { writeFileSync } from 'node:fs';

const out = process.env.BONEPRESS_USAGE_FILE;
if (out) {
  process.on('exit', () => {
    const usage = process.resourceUsage();
    writeFileSync(
      out,
      JSON.stringify({ cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000, maxRssBytes: usage.maxRSS * 1024 }),
    );
  });
}
