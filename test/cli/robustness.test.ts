/**
 * Robustness of the built CLI (`node dist/cli/main.js`; `npm test` builds first): corrupt
 * `.bpk` files fail fast with one line and exit 2, a batch survives a bad input, SIGINT
 * never leaves a partial or temp file behind, and the output bytes do not depend on the
 * number of jobs or on the process.
 *
 * Every spawn and every wait has a generous time limit (the guard against a hang: the
 * process is then killed and the test fails saying so), and every test has a finite
 * timeout; the assertions are on exit codes, output and files, never on timings. No
 * process outlives its test (afterEach kills what is left).
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { compress } from '../../src/compress/index.js';
import { readBvh } from '../../src/readers/bvh.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { HEADER, VERSION } from '../../src/runtime/format.js';
import { CLI, FIXTURES, WAIT_MS, killStartedClis, startCli } from './run-cli.js';

const SMALL_FIXTURES = [
  'dataset-1_dash_normal_001.bvh',
  'dataset-1_byebye_angry_001.bvh',
  'dataset-1_run_active_001.bvh',
];

/**
 * A corrupt-file command must exit by itself within this: the "within a second" promise,
 * checked only as an upper guard on the exit (a process still running then is killed and
 * the test fails on its signal), with room for a loaded CI machine.
 */
const FAST_EXIT_MS = 10_000;
/** Upper bound for a whole batch (a handful of small inputs: seconds, even on a loaded machine). */
const BATCH_MS = 60_000;
/** Per-test limit: generous but finite; above every wait the test makes. */
const TEST_MS = 120_000;

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `bonepress <args>`; kills it after `timeoutMs` (then `signal` is SIGKILL). */
async function run(args: readonly string[], timeoutMs: number): Promise<Run> {
  const cli = startCli(args);
  const { code, signal } = await cli.waitForExit(timeoutMs);
  return { code, signal, stdout: cli.stdout, stderr: cli.stderr };
}

/** Lines of `text` without a trailing empty one. */
function lines(text: string): string[] {
  const all = text.split('\n');
  if (all[all.length - 1] === '') all.pop();
  return all;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Asserts `r` is a clean failure: exit 2, exactly one stderr line `bonepress: <file>: <problem>`, no stack. */
function expectOneLineFailure(r: Run, file: string, what: string): string {
  expect(r.signal, `${what}: killed after ${FAST_EXIT_MS} ms (hung?)`).toBeNull();
  expect(r.code, `${what}: stderr ${r.stderr}`).toBe(2);
  const errLines = lines(r.stderr);
  expect(errLines, `${what}: stderr`).toHaveLength(1);
  expect(errLines[0], what).toMatch(new RegExp(`^bonepress: ${escapeRegExp(file)}: \\S`));
  expect(r.stderr, what).not.toMatch(/^\s+at /m);
  expect(r.stderr, what).not.toContain('internal error');
  expect(r.stdout, what).toBe('');
  return errLines[0].slice(`bonepress: ${file}: `.length);
}

/** Files in `dir` (none when it does not exist). */
function listDir(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

/** Asserts `dir` holds only `.bpk` files, each complete (opens with its checksum verified); returns their names. */
function expectOnlyCompleteClips(dir: string, what: string): string[] {
  const names = listDir(dir);
  const strays = names.filter((n) => !n.endsWith('.bpk') || n.startsWith('.'));
  expect(strays, `${what}: partial or temp files left in the output folder`).toEqual([]);
  for (const name of names) {
    const bytes = readFileSync(join(dir, name));
    expect(
      () =>
        CompressedClip.open(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), { verifyChecksum: true }),
      `${what}: ${name}`,
    ).not.toThrow();
  }
  return names;
}

let work: string;
let validBpk: string;

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (npm test runs the build)`);
  work = mkdtempSync(join(tmpdir(), 'bonepress-robustness-'));
  const clip = readBvh(readFileSync(join(FIXTURES, SMALL_FIXTURES[0]), 'utf8'), SMALL_FIXTURES[0]);
  validBpk = join(work, 'valid.bpk');
  writeFileSync(validBpk, compress(clip).bytes);
});

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

// No CLI started by a test outlives it, whatever the test did.
afterEach(killStartedClis, 20_000);

// ---------------------------------------------------------------------------------------

describe('CLI robustness: corrupt .bpk files', () => {
  /** Named corruptions of the valid file, each written next to it; returns [name, path, expected text in the problem]. */
  function corruptFiles(): [string, string, RegExp][] {
    const valid = new Uint8Array(readFileSync(validBpk));
    const write = (name: string, bytes: Uint8Array | string): string => {
      const path = join(work, name);
      writeFileSync(path, bytes);
      return path;
    };
    const patched = (edit: (view: DataView, out: Uint8Array) => void): Uint8Array => {
      const out = valid.slice();
      edit(new DataView(out.buffer), out);
      return out;
    };
    const dir = join(work, 'folder.bpk');
    mkdirSync(dir, { recursive: true });
    return [
      ['empty', write('empty.bpk', new Uint8Array(0)), /smaller than/],
      [
        'random bytes',
        write(
          'random.bpk',
          Uint8Array.from({ length: 300 }, (_, i) => (i * 151 + 7) & 0xff),
        ),
        /not a bonepress clip|bad magic/,
      ],
      ['truncated header', write('header.bpk', valid.slice(0, HEADER.SIZE - 1)), /smaller than/],
      ['truncated in half', write('half.bpk', valid.slice(0, valid.byteLength >> 1)), /truncated/],
      [
        'one bit flipped',
        write(
          'flipped.bpk',
          patched((_, out) => {
            out[out.byteLength - 9] ^= 0x10;
          }),
        ),
        /checksum/,
      ],
      [
        'bad magic',
        write(
          'magic.bpk',
          patched((v) => v.setUint32(HEADER.MAGIC, 0x12345678, true)),
        ),
        /bad magic/,
      ],
      [
        'version 0',
        write(
          'old.bpk',
          patched((v) => v.setUint16(HEADER.VERSION, 0, true)),
        ),
        /no longer supported/,
      ],
      [
        'a newer version',
        write(
          'new.bpk',
          patched((v) => v.setUint16(HEADER.VERSION, VERSION + 1, true)),
        ),
        /newer than this build/,
      ],
      [
        'a BVH file',
        write('text.bpk', readFileSync(join(FIXTURES, SMALL_FIXTURES[0]))),
        /not a bonepress clip|bad magic/,
      ],
      ['a folder', dir, /directory/],
      ['a missing file', join(work, 'missing.bpk'), /no such file/],
    ];
  }

  it('info exits 2 at once with one line "bonepress: <file>: <problem>" and no stack trace', {
    timeout: TEST_MS,
  }, async () => {
    for (const [what, path, problem] of corruptFiles()) {
      const r = await run(['info', path], FAST_EXIT_MS);
      expect(expectOneLineFailure(r, path, `info on ${what}`), `info on ${what}`).toMatch(problem);
    }
  });

  it('sample exits 2 at once with one line "bonepress: <file>: <problem>" and no stack trace', {
    timeout: TEST_MS,
  }, async () => {
    for (const [what, path, problem] of corruptFiles()) {
      const r = await run(['sample', path, '--time', '0.5'], FAST_EXIT_MS);
      expect(expectOneLineFailure(r, path, `sample on ${what}`), `sample on ${what}`).toMatch(problem);
    }
  });

  it('sample at hostile times prints finite values (exit 0); a non-numeric time or an unknown bone is one line (exit 2)', {
    timeout: TEST_MS,
  }, async () => {
    for (const time of ['0', '-0', '1e308', '-1e308', '5e-324', '123456789']) {
      for (const [loop, rounding] of [
        ['clamp', 'none'],
        ['wrap', 'nearest'],
        ['wrap', 'ceil'],
      ]) {
        const r = await run(
          ['sample', validBpk, '--time', time, '--loop', loop, '--rounding', rounding, '--json'],
          FAST_EXIT_MS,
        );
        expect(r.code, `--time ${time} --loop ${loop}: ${r.stderr}`).toBe(0);
        const result = JSON.parse(r.stdout) as {
          bones: { rotation: number[]; translation: number[]; scale: number[] }[];
        };
        for (const bone of result.bones) {
          for (const v of [...bone.rotation, ...bone.translation, ...bone.scale])
            expect(Number.isFinite(v), `--time ${time}`).toBe(true);
        }
      }
    }
    for (const time of ['nan', 'Infinity', 'abc', '']) {
      const r = await run(['sample', validBpk, '--time', time], FAST_EXIT_MS);
      expect(r.signal).toBeNull();
      expect(r.code, `--time "${time}"`).toBe(2);
      // A usage error: its line, then commander's hint to run --help.
      expect(lines(r.stderr)[0], `--time "${time}"`).toMatch(/^bonepress: .*--time/);
      expect(r.stderr).not.toMatch(/^\s+at /m);
    }
    const r = await run(['sample', validBpk, '--time', '0', '--bone', 'no-such-bone'], FAST_EXIT_MS);
    expectOneLineFailure(r, validBpk, 'unknown bone');
  });
});

// ---------------------------------------------------------------------------------------

describe('CLI robustness: a batch with bad inputs', () => {
  /** Good fixtures copied into `dir`, plus bad inputs; returns [good, bad] paths. */
  function batchInputs(dir: string): [string[], string[]] {
    mkdirSync(dir, { recursive: true });
    const good = SMALL_FIXTURES.map((f) => {
      const path = join(dir, f);
      copyFileSync(join(FIXTURES, f), path);
      return path;
    });
    const text = readFileSync(join(FIXTURES, SMALL_FIXTURES[0]), 'utf8');
    const bad: string[] = [];
    const write = (name: string, content: string | Uint8Array) => {
      const path = join(dir, name);
      writeFileSync(path, content);
      bad.push(path);
    };
    write('truncated.bvh', text.split('\n').slice(0, 40).join('\n'));
    write('nan.bvh', text.replace(/\n(-?[\d.]+) /, '\nnan '));
    write(
      'garbage.bvh',
      Uint8Array.from({ length: 2000 }, (_, i) => (i * 31 + 11) & 0xff),
    );
    write('huge-frames.bvh', text.replace(/Frames:\s*\d+/, 'Frames: 2000000000'));
    write('empty.bvh', '');
    return [good, bad];
  }

  for (const jobs of ['1', '2']) {
    it(`reports each bad input on one line, writes every good one and exits 2 (--jobs ${jobs})`, {
      timeout: TEST_MS,
    }, async () => {
      const dir = join(work, `batch-${jobs}`);
      const [good, bad] = batchInputs(dir);
      const out = join(dir, 'out');
      const missing = join(dir, 'missing.bvh');
      const inputs = [bad[0], good[0], bad[1], good[1], bad[2], good[2], bad[3], bad[4], missing];
      const r = await run(['compress', ...inputs, '-o', out, '--jobs', jobs], BATCH_MS);
      expect(r.signal, `killed after ${BATCH_MS} ms (hung?); stderr:\n${r.stderr}`).toBeNull();
      expect(r.code, r.stderr).toBe(2);
      const errLines = lines(r.stderr);
      for (const path of [...bad, missing]) {
        const mine = errLines.filter((l) => l.startsWith(`bonepress: ${path}: `));
        expect(mine, `stderr for ${basename(path)}:\n${r.stderr}`).toHaveLength(1);
      }
      expect(errLines, r.stderr).toHaveLength(bad.length + 1);
      expect(r.stderr).not.toMatch(/^\s+at /m);
      expect(r.stderr).not.toContain('internal error');
      const written = expectOnlyCompleteClips(out, 'batch');
      expect(written).toEqual(good.map((p) => basename(p, '.bvh') + '.bpk').sort());
    });
  }

  it('a clean batch of more than 10 inputs on 2 jobs prints nothing on stderr and exits 0', {
    timeout: TEST_MS,
  }, async () => {
    // stderr carries one line per failure and nothing else, so scripts can rely on it.
    const dir = join(work, 'batch-clean');
    mkdirSync(dir, { recursive: true });
    const inputs = Array.from({ length: 12 }, (_, i) => {
      const path = join(dir, `copy${i}.bvh`);
      copyFileSync(join(FIXTURES, SMALL_FIXTURES[0]), path);
      return path;
    });
    const r = await run(['compress', ...inputs, '-o', join(dir, 'out'), '--jobs', '2'], BATCH_MS);
    expect(r.signal, `killed after ${BATCH_MS} ms (hung?); stderr:\n${r.stderr}`).toBeNull();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(expectOnlyCompleteClips(join(dir, 'out'), 'clean batch')).toHaveLength(inputs.length);
  });

  it('--json lists every failure with its file, code and message, and the written clips', {
    timeout: TEST_MS,
  }, async () => {
    const dir = join(work, 'batch-json');
    const [good, bad] = batchInputs(dir);
    const out = join(dir, 'out');
    const r = await run(['compress', ...good, ...bad, '-o', out, '--jobs', '2', '--json'], BATCH_MS);
    expect(r.signal, `killed after ${BATCH_MS} ms (hung?); stderr:\n${r.stderr}`).toBeNull();
    expect(r.code, r.stderr).toBe(2);
    const report = JSON.parse(r.stdout) as {
      clips: { file: string; output: string }[];
      failures: { file: string; code: string; message: string }[];
      total: { files: number; failures: number };
    };
    expect(report.failures.map((f) => f.file)).toEqual(bad);
    for (const f of report.failures) {
      expect(f.code, f.file).toMatch(/^[A-Z_]+$/);
      expect(f.code, f.file).not.toBe('INTERNAL');
      expect(f.message.length, f.file).toBeGreaterThan(0);
      expect(f.message, f.file).not.toContain(f.file);
      // The message on stderr and in JSON agree.
      expect(r.stderr).toContain(`bonepress: ${f.file}: ${f.message}`);
    }
    expect(report.clips.map((c) => c.file)).toEqual(good);
    expect(report.total.files).toBe(good.length + bad.length);
    expect(report.total.failures).toBe(bad.length);
    for (const c of report.clips) expect(existsSync(c.output), c.output).toBe(true);
    expectOnlyCompleteClips(out, 'json batch');
  });
});

// ---------------------------------------------------------------------------------------

describe('CLI robustness: SIGINT in the middle of a batch', () => {
  /**
   * Enough inputs that the batch runs far longer than the signal needs to arrive (seconds
   * of work after the first output, even on a fast machine): symlinks to every fixture,
   * under distinct names.
   */
  const MANY = 400;
  function manyInputs(dir: string, count = MANY): string[] {
    mkdirSync(dir, { recursive: true });
    const fixtures = readdirSync(FIXTURES)
      .filter((f) => f.endsWith('.bvh'))
      .sort();
    const inputs: string[] = [];
    for (let copy = 0; inputs.length < count; copy++) {
      for (const f of fixtures) {
        if (inputs.length >= count) break;
        const path = join(dir, `c${copy}_${f}`);
        symlinkSync(join(FIXTURES, f), path);
        inputs.push(path);
      }
    }
    return inputs;
  }

  /** The first complete `.bpk` in `dir` (sorted), if any. */
  function firstBpk(dir: string): string | undefined {
    return listDir(dir).find((n) => n.endsWith('.bpk') && !n.startsWith('.'));
  }

  const cases: { jobs: string; when: 'first output' | 'early'; signals: number }[] = [
    { jobs: '2', when: 'first output', signals: 1 },
    { jobs: '1', when: 'first output', signals: 1 },
    { jobs: '2', when: 'early', signals: 1 },
    { jobs: '2', when: 'first output', signals: 2 },
  ];

  for (const { jobs, when, signals } of cases) {
    const title =
      signals === 1
        ? `--jobs ${jobs}, SIGINT ${when === 'early' ? 'as soon as the output folder exists' : 'once the first .bpk appears'}: exit 130, only complete .bpk files, nothing finished is lost`
        : `--jobs ${jobs}, SIGINT twice: exits at once (130, or by the re-raised SIGINT), and still no partial .bpk`;
    it(title, { timeout: TEST_MS }, async () => {
      const dir = join(work, `sigint-${jobs}-${when.replace(' ', '-')}-${signals}`);
      const inputs = manyInputs(join(dir, 'in'));
      const out = join(dir, 'out');
      const cli = startCli(['compress', ...inputs, '-o', out, '--jobs', jobs]);

      let seen: string | undefined;
      if (when === 'first output') {
        await cli.waitUntil(() => firstBpk(out) !== undefined, 'the first .bpk', WAIT_MS);
        seen = firstBpk(out);
      } else {
        // The CLI creates the folder after installing its signal handlers: the earliest meaningful moment.
        await cli.waitUntil(() => existsSync(out), 'the output folder', WAIT_MS);
      }

      if (cli.exit !== undefined) {
        // The process ended before the signal could be sent (the batch is sized so that this
        // takes a badly starved test process): then it must have been a clean, complete run.
        console.warn(`${title}: the batch ended before SIGINT was sent; checked as a complete run instead`);
        expect(cli.exit.code, `ended before SIGINT: ${cli.describe()}`).toBe(0);
        expect(expectOnlyCompleteClips(out, title)).toEqual(inputs.map((p) => basename(p, '.bvh') + '.bpk').sort());
        return;
      }

      cli.kill('SIGINT');
      if (signals > 1) cli.kill('SIGINT');
      const exit = await cli.waitForExit(WAIT_MS);
      expect(exit.timedOut, `the CLI did not exit within ${WAIT_MS} ms of SIGINT, killed: ${cli.describe()}`).toBe(
        false,
      );
      expect(cli.stderr).not.toMatch(/^\s+at /m);
      if (signals === 1) {
        expect(exit.signal, cli.describe()).toBeNull();
        expect(exit.code, cli.describe()).toBe(130);
        // No temp file, no partial file: only complete clips.
        const kept = expectOnlyCompleteClips(out, title);
        expect(kept.length, 'the batch was cut short').toBeLessThan(inputs.length);
        if (seen) expect(kept, 'a finished .bpk was removed').toContain(seen);
        expect(cli.stderr).toMatch(/interrupted/);
      } else {
        // A second signal ends the process at once by re-raising SIGINT (its default action);
        // two signals sent back to back may also arrive as one, and that one exits 130.
        expect(
          exit.code === 130 || (exit.code === null && exit.signal === 'SIGINT'),
          `neither exit 130 nor ended by SIGINT: ${cli.describe()}`,
        ).toBe(true);
        // Temp files may stay (documented), but every .bpk is whole.
        for (const name of listDir(out).filter((n) => n.endsWith('.bpk') && !n.startsWith('.'))) {
          const bytes = readFileSync(join(out, name));
          expect(
            () => CompressedClip.open(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)),
            name,
          ).not.toThrow();
        }
      }
    });
  }
});

// ---------------------------------------------------------------------------------------

describe('CLI robustness: determinism', () => {
  it('the same bytes with --jobs 1 and --jobs 2, and from two separate processes', { timeout: TEST_MS }, async () => {
    const dir = join(work, 'determinism');
    const inputs = SMALL_FIXTURES.map((f) => join(FIXTURES, f));
    const outs = ['jobs1-a', 'jobs2', 'jobs1-b'].map((n) => join(dir, n));
    for (const [out, jobs] of [
      [outs[0], '1'],
      [outs[1], '2'],
      [outs[2], '1'],
    ]) {
      const r = await run(['compress', ...inputs, '-o', out, '--jobs', jobs, '--json'], BATCH_MS);
      expect(r.signal, `--jobs ${jobs}: killed after ${BATCH_MS} ms (hung?); stderr:\n${r.stderr}`).toBeNull();
      expect(r.code, r.stderr).toBe(0);
    }
    const names = listDir(outs[0]);
    expect(names).toHaveLength(inputs.length);
    for (const other of outs.slice(1)) expect(listDir(other)).toEqual(names);
    for (const name of names) {
      const reference = readFileSync(join(outs[0], name));
      for (const other of outs.slice(1))
        expect(readFileSync(join(other, name)).equals(reference), `${name} in ${basename(other)}`).toBe(true);
    }
  });
});
