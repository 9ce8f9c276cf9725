#!/usr/bin/env node
/**
 * Pose snapshot bench (docs/net.md): every BVH clip of a corpus through `simulateNetwork`
 * (sender → seeded lossy link → receiver), reporting bits per snapshot of each mode and the
 * largest error of any received pose. Plain ESM over the build:
 *
 *   npm run build && node bench/net.mjs [corpus-dir] [--hz 60] [--loss 0.05] [--rtt 100]
 *     [--error 0.1cm] [--shell 3cm] [--seed 1] [--jitter 0] [--json out.json] [--dist dir]
 *
 * Default corpus: ../shared/data/bandai-ds1 when present, else fixtures/. Timings are not
 * measured here.
 */
import { readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
};
const hz = Number(flag('hz', '60'));
const loss = Number(flag('loss', '0.05'));
const rttMs = Number(flag('rtt', '100'));
const jitterMs = Number(flag('jitter', '0'));
const seed = Number(flag('seed', '1'));
const error = flag('error', '0.1cm');
const shell = flag('shell', '3cm');
const jsonOut = flag('json', undefined);
const dist = resolve(flag('dist', join(here, '..', 'dist')));
const limit = Number(flag('limit', 'Infinity'));
const schemaOptions = JSON.parse(flag('schema', '{}'));
const sessionOptions = JSON.parse(flag('session', '{}'));
const defaultCorpus = existsSync(join(here, '..', '..', 'shared', 'data', 'bandai-ds1'))
  ? join(here, '..', '..', 'shared', 'data', 'bandai-ds1')
  : join(here, '..', 'fixtures');
const corpus = resolve(args[0] ?? defaultCorpus);

const { readBvh } = await import(pathToFileURL(join(dist, 'readers', 'bvh.js')).href);
const { simulateNetwork } = await import(pathToFileURL(join(dist, 'net', 'netsim.js')).href);
const { createSnapshotSchema } = await import(pathToFileURL(join(dist, 'net', 'schema.js')).href);

const files = readdirSync(corpus).filter((f) => f.toLowerCase().endsWith('.bvh')).sort().slice(0, limit);
const rows = [];
const sum = { ticks: 0, raw: 0, absolute: 0, delta: 0, entropy: 0, deltaPacket: 0, entropyPacket: 0, sent: 0, lost: 0, received: 0, rejected: 0, age: 0, deltas: 0 };
let maxError = 0, maxBound = 0, worstClip = '';
for (const file of files) {
  const path = join(corpus, file);
  const clip = readBvh(readFileSync(path, 'utf8'), file);
  const schema = createSnapshotSchema(clip, { error, shell, ...schemaOptions });
  const r = simulateNetwork(clip, { hz, loss, rttMs, jitterMs, seed, schema, session: sessionOptions });
  rows.push({
    clip: file, ticks: r.ticks, raw: r.rawBitsPerSnapshot, absolute: r.absoluteBitsPerSnapshot,
    delta: r.deltaBitsPerSnapshot, entropy: r.entropyBitsPerSnapshot, maxError: r.maxError, errorBound: r.errorBound,
    deltaPacket: r.plain.packetBitsPerSnapshot, entropyPacket: r.entropy.packetBitsPerSnapshot,
    sent: r.sent, lost: r.lost, received: r.received, rejected: r.plain.rejected + r.entropy.rejected,
  });
  // Weighted by ticks: the mean over every snapshot of the corpus.
  sum.ticks += r.ticks;
  sum.raw += r.rawBitsPerSnapshot * r.ticks;
  sum.absolute += r.absoluteBitsPerSnapshot * r.ticks;
  sum.delta += r.deltaBitsPerSnapshot * r.ticks;
  sum.entropy += r.entropyBitsPerSnapshot * r.ticks;
  sum.deltaPacket += r.plain.packetBitsPerSnapshot * r.ticks;
  sum.entropyPacket += r.entropy.packetBitsPerSnapshot * r.ticks;
  sum.sent += r.sent; sum.lost += r.lost; sum.received += r.received; sum.rejected += r.plain.rejected + r.entropy.rejected;
  sum.age += r.plain.meanBaselineAge * r.plain.deltas; sum.deltas += r.plain.deltas;
  if (r.maxError > maxError) { maxError = r.maxError; worstClip = file; }
  maxBound = Math.max(maxBound, r.errorBound);
}
const mean = (k) => sum[k] / sum.ticks;
const summary = {
  corpus, clips: files.length, snapshots: sum.ticks, hz, loss, rttMs, jitterMs, seed, error, shell,
  schemaOptions, sessionOptions,
  rawBits: mean('raw'), absoluteBits: mean('absolute'), deltaBits: mean('delta'), entropyBits: mean('entropy'),
  deltaPacketBits: mean('deltaPacket'), entropyPacketBits: mean('entropyPacket'),
  meanBaselineAge: sum.age / sum.deltas,
  maxError, worstClip, maxErrorBound: maxBound,
  sent: sum.sent, lost: sum.lost, received: sum.received, rejected: sum.rejected,
};
const f1 = (x) => x.toFixed(1);
console.log(`corpus ${corpus}: ${files.length} clips, ${sum.ticks} snapshots at ${hz} Hz, loss ${loss}, RTT ${rttMs} ms, error ${error}, shell ${shell}`);
console.log('mode       bits/snapshot  vs raw');
console.log(`raw        ${f1(summary.rawBits).padStart(13)}  1/1.0`);
for (const [name, bits] of [['absolute', summary.absoluteBits], ['delta', summary.deltaBits], ['entropy', summary.entropyBits]]) {
  console.log(`${name.padEnd(10)} ${f1(bits).padStart(13)}  1/${(summary.rawBits / bits).toFixed(1)}`);
}
console.log(`packets on the wire (header + check + padding): delta ${f1(summary.deltaPacketBits)}, entropy ${f1(summary.entropyPacketBits)} bits`);
console.log(`mean baseline age ${summary.meanBaselineAge.toFixed(2)} ticks; sent ${sum.sent}, lost ${sum.lost}, received ${sum.received}, rejected ${sum.rejected}`);
// netsim measures one maximum over every pose the receiver decoded (the stream it plays).
console.log(`max error of any received pose ${maxError.toPrecision(8)} (${worstClip}); largest schema bound ${maxBound.toFixed(4)}`);
if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ summary, clips: rows }, null, 2) + '\n');
