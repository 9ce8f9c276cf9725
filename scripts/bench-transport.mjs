#!/usr/bin/env node
// The transport-form bench (src/bench/transport.ts): downloaded and resident
// sizes, brotli-11 of each, load-time decode speed, playback µs/pose, and the float64 check
// of every clip against its BVH source. Usage:
//   npm run build && node scripts/bench-transport.mjs <BVH files or folders> [--error 0.01cm] [--shell 3cm] [--json]
import { parseArgs } from 'node:util';

import { formatTransportReport, runTransportBench } from '../dist/bench/transport.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    error: { type: 'string' },
    shell: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
if (positionals.length === 0) {
  console.error(
    'usage: node scripts/bench-transport.mjs <BVH files or folders> [--error 0.01cm] [--shell 3cm] [--json]',
  );
  process.exit(2);
}
const report = await runTransportBench({
  corpus: positionals,
  error: values.error,
  shell: values.shell,
  onClip: values.json
    ? undefined
    : (done, total) => {
        if (done % 20 === 0 || done === total) process.stderr.write(`\r${done}/${total} clips`);
      },
});
if (!values.json) process.stderr.write('\n');
console.log(values.json ? JSON.stringify(report, null, 2) : formatTransportReport(report));
