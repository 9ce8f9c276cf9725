/**
 * `bonepress netsim <clip>`: streams a clip as pose snapshots through a simulated lossy
 * link (bonepress/net) and reports bits per snapshot of each mode and the largest error of
 * any pose the receiver decoded.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';

import { OptionsError, writePoseDump, type LengthUnit } from '../../index.js';
import {
  NETSIM_DEFAULTS,
  NET_ERROR,
  NetError,
  receivedPosesToClip,
  simulateNetwork,
  type LinkStats,
  type NetsimReport,
} from '../../net/index.js';
import { writeFileAtomic } from '../../node/index.js';
import { declareCommand } from '../command-list.js';
import { EXIT, atFile, type ExitCode } from '../exit-codes.js';
import { readSingleClip } from '../load.js';
import { parseLengthArg, parseMillisecondsArg, parsePositiveArg } from '../parse.js';
import { renderJson } from '../render/json.js';
import { formatDistance, formatRatio, renderFields, renderTable } from '../render/table.js';

/** Options of `netsim` as commander parses them. */
export interface NetsimCliOptions {
  hz?: number;
  loss: number;
  rtt: number;
  jitter: number;
  error: string;
  shell: string;
  seed: number;
  json?: boolean;
  dump?: string;
}

/** What `netsim --json` prints: the report without the poses, plus the verdict. */
export interface NetsimResult extends Omit<NetsimReport, 'receivedTicks' | 'receivedPoses'> {
  file: string;
  /** Poses written to `--dump`, if any. */
  dumpedPoses?: number;
  /** maxError ≤ threshold. */
  pass: boolean;
}

/** Parses a duration in milliseconds: `100ms`, `0.1s` or a bare number of milliseconds. */
export const parseDurationArg = parseMillisecondsArg;

/** Parses a probability in 0..1 (1 excluded). */
export function parseLossArg(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !(n >= 0 && n < 1))
    throw new InvalidArgumentError('expected a probability from 0 up to (not including) 1');
  return n;
}

/** Parses a whole-number seed. */
export function parseSeedArg(value: string): number {
  const n = Number(value);
  if (!/^\s*-?\d+\s*$/.test(value) || !Number.isSafeInteger(n))
    throw new InvalidArgumentError('expected a whole number');
  return n;
}

/** Adds the `netsim` command to `program`. */
export function registerNetsimCommand(program: Command): void {
  declareCommand(program, 'netsim')
    .option('--hz <rate>', "snapshots per second (default: the clip's sample rate)", parsePositiveArg)
    .option('--loss <p>', 'probability that a packet or an ack is lost', parseLossArg, NETSIM_DEFAULTS.loss)
    .addOption(
      new Option('--rtt <time>', 'round-trip time, e.g. 100ms or 0.1s (each way takes half)')
        .argParser(parseDurationArg)
        .default(NETSIM_DEFAULTS.rttMs, `${NETSIM_DEFAULTS.rttMs}ms`),
    )
    .addOption(
      new Option('--jitter <time>', 'extra random one-way delay up to this much (reorders packets)')
        .argParser(parseDurationArg)
        .default(NETSIM_DEFAULTS.jitterMs, `${NETSIM_DEFAULTS.jitterMs}ms`),
    )
    .option(
      '--error <length>',
      'error threshold the snapshot bit counts are derived for',
      parseLengthArg,
      NETSIM_DEFAULTS.error,
    )
    .option('--shell <length>', 'virtual-vertex distance of every bone', parseLengthArg, NETSIM_DEFAULTS.shell)
    .option('--seed <n>', 'seed of the simulated link', parseSeedArg, NETSIM_DEFAULTS.seed)
    .option('--json', 'print one JSON object instead of text')
    .option('--dump <file>', 'write the received poses as pose dump JSON (one per decoded tick, at the send rate)')
    .addHelpText('after', '\nExit status: 0 when every received pose is within --error, 1 above it, 2 on bad input.')
    .action(async (clip: string, options: NetsimCliOptions) => {
      process.exitCode = await runNetsim(clip, options);
    });
}

/**
 * Runs `netsim`: prints the report and returns {@link EXIT.OK} when every received pose is
 * within the threshold, {@link EXIT.CHECK_FAILED} otherwise. Throws (scoped to the file at
 * fault) on bad input.
 */
export async function runNetsim(file: string, options: NetsimCliOptions): Promise<ExitCode> {
  const clip = await readSingleClip(file);
  const report = await atFile(file, () => {
    try {
      return simulateNetwork(clip, {
        ...(options.hz !== undefined ? { hz: options.hz } : {}),
        loss: options.loss,
        rttMs: options.rtt,
        jitterMs: options.jitter,
        seed: options.seed,
        error: options.error,
        shell: options.shell,
        keepPoses: options.dump !== undefined,
      });
    } catch (error) {
      // A bad option reaches the library only as a NetError: report it as the input problem it is.
      if (error instanceof NetError && error.code === NET_ERROR.BAD_ARGUMENT) throw new OptionsError(error.message);
      throw error;
    }
  });
  let dumpedPoses: number | undefined;
  if (options.dump !== undefined) {
    const dump = options.dump;
    dumpedPoses = report.receivedTicks?.length ?? 0;
    await atFile(dump, () => writeFileAtomic(dump, writePoseDump(receivedPosesToClip(report, clip))));
  }
  const { receivedTicks: _ticks, receivedPoses: _poses, ...rest } = report;
  const result: NetsimResult = {
    file,
    ...rest,
    ...(dumpedPoses !== undefined ? { dumpedPoses } : {}),
    pass: report.maxError <= report.threshold,
  };
  process.stdout.write(options.json ? renderJson(result) : renderNetsim(result, options));
  return result.pass ? EXIT.OK : EXIT.CHECK_FAILED;
}

function renderNetsim(r: NetsimResult, o: NetsimCliOptions): string {
  const unit: LengthUnit = r.unit;
  const fields = renderFields([
    ['clip', r.file],
    ['bones', String(r.boneCount)],
    ['snapshots', `${r.ticks} at ${r.hz} Hz`],
    ['link', `loss ${o.loss}, RTT ${o.rtt} ms${o.jitter > 0 ? `, jitter ${o.jitter} ms` : ''}, seed ${o.seed}`],
    [
      'packets',
      `${r.sent} sent, ${r.lost} lost, ${r.received} received${r.plain.rejected > 0 ? `, ${r.plain.rejected} rejected` : ''}`,
    ],
    ['baseline age', `${r.plain.meanBaselineAge.toFixed(2)} ticks on average (${r.plain.deltas} deltas)`],
  ]);
  const row = (mode: string, bits: number, packet?: LinkStats): string[] => [
    mode,
    bits.toFixed(1),
    formatRatio(r.rawBitsPerSnapshot / bits),
    packet ? packet.packetBitsPerSnapshot.toFixed(1) : '',
  ];
  const body = [
    row('raw', r.rawBitsPerSnapshot),
    row('absolute', r.absoluteBitsPerSnapshot),
    row('delta', r.deltaBitsPerSnapshot, r.plain),
  ];
  if (r.entropy && r.entropyBitsPerSnapshot !== undefined)
    body.push(row('entropy', r.entropyBitsPerSnapshot, r.entropy));
  const table = renderTable(
    [
      { header: 'mode' },
      { header: 'bits/snapshot', align: 'right' },
      { header: 'ratio', align: 'right' },
      { header: 'packet bits', align: 'right' },
    ],
    { body },
  );
  const verdict = renderFields([
    ['max error', `${formatDistance(r.maxError, unit)} (bound ${formatDistance(r.errorBound, unit)})`],
    ['threshold', formatDistance(r.threshold, unit)],
    [
      'interpolated view',
      `${formatDistance(r.interpolatedMaxError, unit)} max error at render times, ${NETSIM_DEFAULTS.playoutDelayMs} ms playout delay`,
    ],
    ...(r.dumpedPoses !== undefined ? [['dump', `${r.dumpedPoses} poses to ${o.dump}`] as const] : []),
    ['result', r.pass ? 'PASS' : 'FAIL: a received pose is above the threshold'],
  ]);
  return `${fields}\n${table}\n${verdict}`;
}
