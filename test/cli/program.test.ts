/**
 * The CLI loads only the command it runs (src/cli/program.ts): the help it prints is the
 * help of the program with every command loaded, and a run of `--help` or `--version` loads
 * nothing of the library.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import type { Command } from 'commander';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';

import { COMMANDS } from '../../src/cli/command-list.js';
import { commandNameIn } from '../../src/cli/argv.js';
import { createProgram } from '../../src/cli/program.js';
import { CLI, ROOT, makeTempDir } from './run-cli.js';

const temp = makeTempDir();
afterAll(() => temp.remove());
afterEach(() => vi.restoreAllMocks());

function subcommand(program: Command, name: string): Command {
  const found = program.commands.find((c) => c.name() === name);
  expect(found, name).toBeDefined();
  return found!;
}

describe('commandNameIn', () => {
  it('finds the command after global options, after help, and after --', () => {
    expect(commandNameIn(['compress', 'a.bvh', '-o', 'out/'])).toBe('compress');
    expect(commandNameIn(['-q', '--debug', 'info', 'x.bpk'])).toBe('info');
    expect(commandNameIn(['help', 'verify'])).toBe('verify');
    expect(commandNameIn(['-v', 'help', 'netsim'])).toBe('netsim');
    expect(commandNameIn(['--', 'sample', 'x.bpk'])).toBe('sample');
    expect(commandNameIn(['manifest', 'merge', 'a.json'])).toBe('manifest');
    expect(commandNameIn([])).toBeUndefined();
    expect(commandNameIn(['--help'])).toBeUndefined();
    expect(commandNameIn(['help'])).toBeUndefined();
  });
});

describe('createProgram', () => {
  it('prints the same top-level help with stand-ins as with every command loaded', async () => {
    const all = await createProgram([], { load: 'all' });
    const light = await createProgram([]);
    expect(light.helpInformation()).toBe(all.helpInformation());
    expect(light.commands.map((c) => c.name())).toEqual(COMMANDS.map((e) => e.name));
    for (const entry of COMMANDS) expect(light.helpInformation()).toContain(entry.name);
  });

  it('registers the command it runs in full: its help is the one of the program with every command loaded', async () => {
    const all = await createProgram([], { load: 'all' });
    for (const entry of COMMANDS) {
      const one = await createProgram([entry.name, '--help']);
      expect(subcommand(one, entry.name).helpInformation()).toBe(subcommand(all, entry.name).helpInformation());
      // Every other command is a stand-in without options.
      for (const other of one.commands) if (other.name() !== entry.name) expect(other.options).toEqual([]);
    }
    const manifest = await createProgram(['manifest', 'merge', '--help']);
    expect(subcommand(subcommand(manifest, 'manifest'), 'merge').helpInformation()).toBe(
      subcommand(subcommand(all, 'manifest'), 'merge').helpInformation(),
    );
  });

  it('a stand-in that runs after all loads its command and parses the arguments again', async () => {
    const written: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    const args = ['sample', '--help'];
    const stubs = await createProgram(args, { load: 'none' });
    expect(subcommand(stubs, 'sample').options).toEqual([]);
    await expect(stubs.parseAsync(args, { from: 'user' })).rejects.toMatchObject({
      code: 'commander.helpDisplayed',
      exitCode: 0,
    });
    const all = await createProgram([], { load: 'all' });
    expect(written.join('')).toBe(subcommand(all, 'sample').helpInformation());
  });
});

describe('what a run loads', () => {
  /** The src/ folders (dist/ of the build) and packages whose modules `bonepress <args>` loads. */
  function loadedBy(args: readonly string[]): {
    status: number | null;
    stdout: string;
    loaded: string[];
    urls: string[];
  } {
    const log = join(temp.dir, `loads-${args.join('_').replace(/\W/g, '')}.txt`);
    const hook = `import { appendFileSync } from 'node:fs'; export async function load(url, context, next) { appendFileSync(${JSON.stringify(log)}, url + '\\n'); return next(url, context); }`;
    const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`;
    const run = spawnSync(
      process.execPath,
      ['--import', `data:text/javascript,${encodeURIComponent(register)}`, CLI, ...args],
      { cwd: ROOT, encoding: 'utf8', timeout: 30_000 },
    );
    const root = pathToFileURL(ROOT).href;
    const urls = readFileSync(log, 'utf8')
      .split('\n')
      .filter((u) => u.startsWith(root));
    const loaded = [
      ...new Set(
        urls.map((u) => {
          const rel = u.slice(root.length).split('/');
          // dist/<folder> or dist/<file> of the build; node_modules/<package>.
          return rel[0] === 'dist'
            ? `dist/${rel[1]}`
            : `${rel[0]}/${rel[1].startsWith('@') ? `${rel[1]}/${rel[2]}` : rel[1]}`;
        }),
      ),
    ].sort();
    return { status: run.status, stdout: run.stdout, loaded, urls };
  }

  it('--help and --version load the CLI and commander only', () => {
    for (const args of [['--help'], ['--version']]) {
      const run = loadedBy(args);
      expect(run.status).toBe(0);
      expect(run.stdout.length).toBeGreaterThan(0);
      expect(run.loaded).toEqual(['dist/cli', 'node_modules/commander']);
    }
  });

  it('compress starts its workers before commander and the command load; its help starts none', () => {
    const out = join(temp.dir, 'early-out');
    const run = loadedBy(['compress', 'fixtures/dataset-1_dash_normal_001.bvh', '-o', out, '-q']);
    expect(run.status).toBe(0);
    const first = (part: string): number => run.urls.findIndex((u) => u.includes(part));
    expect(first('/dist/node/worker-pool.js')).toBeGreaterThan(-1);
    expect(first('/node_modules/piscina/')).toBeLessThan(first('/node_modules/commander/'));
    expect(first('/dist/node/worker-pool.js')).toBeLessThan(first('/dist/cli/program.js'));
    const help = loadedBy(['compress', '--help']);
    expect(help.status).toBe(0);
    expect(help.loaded).not.toContain('node_modules/piscina');
  });

  it('a command loads neither the network simulator nor the bench unless it is netsim or bench', () => {
    const info = loadedBy(['info', 'no-such-file.bpk']);
    expect(info.status).toBe(2);
    expect(info.loaded).toContain('dist/runtime');
    expect(info.loaded.filter((d) => d === 'dist/net' || d === 'dist/bench')).toEqual([]);
    const netsimHelp = loadedBy(['netsim', '--help']);
    expect(netsimHelp.status).toBe(0);
    expect(netsimHelp.loaded).toContain('dist/net');
    expect(netsimHelp.loaded).not.toContain('dist/bench');
  });
});
