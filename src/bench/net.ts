/**
 * The network bench behind `npm run bench:net` (docs/net.md): the cube scene served to
 * many clients (world snapshots) and the corpus poses through the pose snapshot codec.
 *
 *   npm run bench:net [-- --json] [--clients 64] [--seconds 60] [--corpus dir] [--limit n]
 *     [--loss 0.05] [--rtt 100] [--seed 1] [--playout 100] [--skip-poses] [--skip-cubes]
 *
 * Default corpus: the development corpus beside the repository when present (bench/README.md),
 * else fixtures/. Lengths: cubes in metres, poses in the clips' unit (cm for BVH). Sender
 * time is the process's CPU time (user + system, so the garbage collector's threads count
 * too).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { readBvh } from '../readers/bvh.js';
import { simulateNetwork } from '../net/netsim.js';
import { createSnapshotSchema } from '../net/schema.js';
import { simulateWorld, type WorldNetsimReport } from '../net/world-netsim.js';

/** The corpus part of the bench. Bits are means over every sent snapshot. */
export interface PoseBenchResult {
  corpus: string;
  clips: number;
  snapshots: number;
  /** Verified entropy-coded stream, body bits per snapshot. */
  bitsPerSnapshot: number;
  plainBitsPerSnapshot: number;
  absoluteBitsPerSnapshot: number;
  /** Largest virtual-vertex error of any received pose, cm. */
  maxErrorCm: number;
  rejected: number;
}

/** Options of {@link benchPoses}. */
export interface PoseBenchOptions {
  corpus: string;
  limit?: number;
  loss: number;
  rttMs: number;
  seed: number;
  hz: number;
}

/** Every BVH clip of `corpus` through `simulateNetwork` at 0.1 cm / 3 cm. */
export function benchPoses(o: PoseBenchOptions): PoseBenchResult {
  const files = readdirSync(o.corpus)
    .filter((f) => f.toLowerCase().endsWith('.bvh'))
    .sort()
    .slice(0, o.limit ?? Infinity);
  let ticks = 0,
    entropy = 0,
    plain = 0,
    absolute = 0,
    maxError = 0,
    rejected = 0;
  for (const file of files) {
    const clip = readBvh(readFileSync(join(o.corpus, file), 'utf8'), file);
    if (clip.unit !== 'cm') throw new Error(`${file}: the pose bench expects clips in cm, got ${clip.unit}`);
    const schema = createSnapshotSchema(clip, { error: '0.1cm', shell: '3cm' });
    const r = simulateNetwork(clip, { hz: o.hz, loss: o.loss, rttMs: o.rttMs, seed: o.seed, schema });
    ticks += r.ticks;
    entropy += r.entropyBitsPerSnapshot! * r.ticks;
    plain += r.deltaBitsPerSnapshot * r.ticks;
    absolute += r.absoluteBitsPerSnapshot * r.ticks;
    maxError = Math.max(maxError, r.maxError);
    rejected += r.plain.rejected + r.entropy!.rejected;
  }
  return {
    corpus: o.corpus,
    clips: files.length,
    snapshots: ticks,
    bitsPerSnapshot: entropy / ticks,
    plainBitsPerSnapshot: plain / ticks,
    absoluteBitsPerSnapshot: absolute / ticks,
    maxErrorCm: maxError,
    rejected,
  };
}

/** What `--json` prints. */
export interface NetBenchOutput {
  cubes?: {
    kbps: number;
    steadyKbps: number;
    maxCornerErrorM: number;
    senderMsPerClientTick: number;
    clients: number;
    interpolatedMaxErrorM: number;
    detail: WorldNetsimReport;
    /** A run where client 0 loses 10 consecutive acks: packets it was sent against an empty world after joining (0: no stall). */
    ackOutage: { absoluteAfterJoin: number; maxBaselineAge: number };
    /**
     * Sender time with every client's packet coded on its own (no sharing between clients
     * of one baseline), over the first `seconds / 6`, and over that run after its first second.
     */
    unsharedSenderMsPerClientTick: number;
    unsharedSteadySenderMsPerClientTick: number;
  };
  poses?: PoseBenchResult;
}

function flag(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
}

function main(argv: string[]): void {
  const json = argv.includes('--json');
  const here = fileURLToPath(new URL('.', import.meta.url));
  const shared = resolve(here, '../../../shared/data/bandai-ds1');
  const corpus = resolve(flag(argv, 'corpus', existsSync(shared) ? shared : resolve(here, '../../fixtures')));
  const loss = Number(flag(argv, 'loss', '0.05')),
    rttMs = Number(flag(argv, 'rtt', '100')),
    seed = Number(flag(argv, 'seed', '1'));
  const out: NetBenchOutput = {};
  if (!argv.includes('--skip-cubes')) {
    const clients = Number(flag(argv, 'clients', '64')),
      seconds = Number(flag(argv, 'seconds', '60'));
    const playoutDelayMs = Number(flag(argv, 'playout', '100'));
    // CPU time of the process (user + system), so that other load on the machine does not count.
    const cpuMs = () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    const r = simulateWorld({
      clients,
      seconds,
      loss,
      rttMs,
      seed,
      playoutDelayMs,
      ackOutage: { from: 20 * 60, count: 10 },
      clock: cpuMs,
    });
    const unshared = simulateWorld({
      clients,
      seconds: seconds / 6,
      loss,
      rttMs,
      seed,
      playoutDelayMs,
      clock: cpuMs,
      viewClients: 0,
      session: { shareMessages: false },
    });
    out.cubes = {
      kbps: r.kbps,
      steadyKbps: r.steadyKbps,
      maxCornerErrorM: r.maxCornerErrorM,
      senderMsPerClientTick: r.senderMsPerClientTick,
      clients: r.clients,
      interpolatedMaxErrorM: r.interpolatedMaxErrorM,
      detail: r,
      ackOutage: { absoluteAfterJoin: r.client0AbsoluteAfterJoin, maxBaselineAge: r.client0MaxBaselineAge },
      unsharedSenderMsPerClientTick: unshared.senderMsPerClientTick,
      unsharedSteadySenderMsPerClientTick: unshared.steadySenderMsPerClientTick,
    };
    if (!json) {
      const f = (x: number, d = 2) => x.toFixed(d);
      console.log(
        `cube scene: ${r.entities} entities (900 cubes + player), ${r.ticks} ticks at ${r.hz} Hz, ${r.clients} clients, loss ${loss} each way, RTT ${rttMs} ms, seed ${seed}`,
      );
      console.log(
        `  payload per client      ${f(r.kbps)} kbps over the whole run (${f(r.steadyKbps)} kbps after the first second; ${f(r.bitsPerSnapshot, 1)} bits per snapshot)`,
      );
      console.log(
        `  max cube-corner error   ${(r.maxCornerErrorM * 1000).toFixed(3)} mm in every snapshot sent (precision ${r.precisionM * 1000} mm); received ≠ sent: ${r.mismatched}`,
      );
      console.log(
        `  sender CPU              ${r.senderMsPerClientTick.toFixed(4)} ms per client per tick (quantise once + ${r.clients} deltas, shared per baseline); ${unshared.senderMsPerClientTick.toFixed(4)} ms coding each client on its own (first ${seconds / 6} s; ${unshared.steadySenderMsPerClientTick.toFixed(4)} ms after its first second)`,
      );
      console.log(
        `  interpolated view       max corner error ${(r.interpolatedMaxErrorM * 1000).toFixed(3)} mm at ${r.frames} render times (${playoutDelayMs} ms playout; ${r.extrapolatedFrames} extrapolated or held)`,
      );
      console.log(
        `  packets                 sent ${r.sent}, received ${r.received}, rejected ${r.rejected}, fragmented ${r.fragmentedMessages}; mean baseline age ${f(r.meanBaselineAge)} ticks; cubes moving ${f(r.meanAwake, 1)}`,
      );
      console.log(
        `  10 acks lost (client 0) snapshots against an empty world after joining: ${r.client0AbsoluteAfterJoin}; largest baseline age ${r.client0MaxBaselineAge} ticks`,
      );
    }
  }
  if (!argv.includes('--skip-poses')) {
    const limit = Number(flag(argv, 'limit', 'Infinity'));
    const p = benchPoses({ corpus, limit, loss, rttMs, seed, hz: 60 });
    out.poses = p;
    if (!json) {
      console.log(`poses: ${p.clips} clips of ${p.corpus}, ${p.snapshots} snapshots at 60 Hz, 0.1 cm at a 3 cm shell`);
      console.log(
        `  entropy (verified) ${p.bitsPerSnapshot.toFixed(1)} bits per snapshot; plain delta ${p.plainBitsPerSnapshot.toFixed(1)}; absolute ${p.absoluteBitsPerSnapshot.toFixed(1)}`,
      );
      console.log(`  max error of any received pose ${p.maxErrorCm.toPrecision(8)} cm; rejected ${p.rejected}`);
    }
  }
  if (json) console.log(JSON.stringify(out, null, 2));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
