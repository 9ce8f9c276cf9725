/**
 * The project's import rules, checked on the source text: the runtime stays browser-safe
 * and free of the compressor, adapters depend on the runtime only, and nothing depends on
 * the CLI.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');

/** Every .ts file under `dir`, recursively. */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (path.endsWith('.ts') && !path.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Strips comments so an import mentioned in a doc comment does not count. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/**
 * Module specifiers a file loads: static imports and re-exports (`import … from`,
 * `export … from`, side-effect `import '…'`, type-only ones included) and dynamic
 * `import('…')`.
 */
function importsOf(text: string): string[] {
  const code = withoutComments(text);
  const specs: string[] = [];
  const patterns = [
    /\b(?:import|export)\s+(?:type\s+)?[^'";]*?\sfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
    /\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const re of patterns) for (const m of code.matchAll(re)) specs.push(m[1]);
  return specs;
}

/** What a specifier points at: a path relative to src/ (`runtime/bits.ts`) or a package name (`gl-matrix`, `node:fs`). */
function target(
  file: string,
  spec: string,
): { kind: 'src'; path: string } | { kind: 'outside'; path: string } | { kind: 'package'; name: string } {
  if (spec.startsWith('.')) {
    const abs = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
    const rel = relative(SRC, abs);
    if (rel.startsWith('..')) return { kind: 'outside', path: relative(ROOT, abs) };
    return { kind: 'src', path: rel.split(sep).join('/') };
  }
  if (spec.startsWith('node:')) return { kind: 'package', name: spec };
  const parts = spec.split('/');
  return { kind: 'package', name: spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0] };
}

const NODE_BUILTINS = new Set([
  'fs',
  'path',
  'url',
  'os',
  'crypto',
  'worker_threads',
  'child_process',
  'stream',
  'util',
  'events',
  'buffer',
  'process',
  'module',
  'http',
  'https',
  'zlib',
  'assert',
  'perf_hooks',
  'readline',
  'tty',
  'net',
]);

function isNodeOnly(name: string): boolean {
  return name.startsWith('node:') || NODE_BUILTINS.has(name.split('/')[0]);
}

const files = sourceFiles(SRC).map((path) => ({
  path,
  rel: relative(SRC, path).split(sep).join('/'),
  imports: importsOf(readFileSync(path, 'utf8')),
}));

/** Violations of `allowed` among the imports of files under `folder` (a src/ prefix such as `runtime/`). */
function violations(prefix: string, allowed: (t: ReturnType<typeof target>) => boolean): string[] {
  const out: string[] = [];
  for (const f of files) {
    if (!f.rel.startsWith(prefix)) continue;
    for (const spec of f.imports) if (!allowed(target(f.path, spec))) out.push(`src/${f.rel} imports '${spec}'`);
  }
  return out;
}

describe('importsOf', () => {
  it('finds static, type-only, re-exported, side-effect and dynamic imports, and ignores comments', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      "import {\n  c,\n  d,\n} from 'gl-matrix';",
      "export { e } from './e.js';",
      "export * from './f.js';",
      "import './side-effect.js';",
      "const g = await import('node:fs');",
      "// import { no } from 'node:path';",
      "/* import { no } from 'three'; */",
      "const url = 'http://example.com'; // not an import",
    ].join('\n');
    expect(importsOf(text).sort()).toEqual(
      ['../b.js', './a.js', './e.js', './f.js', './side-effect.js', 'gl-matrix', 'node:fs'].sort(),
    );
  });
});

describe('import rules', () => {
  it('finds the source tree', () => {
    expect(files.some((f) => f.rel === 'runtime/clip.ts')).toBe(true);
    expect(files.some((f) => f.rel.startsWith('compress/'))).toBe(true);
    const decoder = files.find((f) => f.rel === 'runtime/clip.ts')!;
    expect(decoder.imports).toContain('./format.js');
    expect(target(decoder.path, './format.js')).toEqual({ kind: 'src', path: 'runtime/format.ts' });
  });

  it('src/runtime/** imports only src/runtime/**, the shared leaf src/shared/** and gl-matrix (nothing Node-only)', () => {
    expect(
      violations(
        'runtime/',
        (t) =>
          (t.kind === 'src' && (t.path.startsWith('runtime/') || t.path.startsWith('shared/'))) ||
          (t.kind === 'package' && t.name === 'gl-matrix'),
      ),
    ).toEqual([]);
  });

  it("src/runtime/** has no import cycle (type-only imports included, but the sampler's type of the clip that creates it), and decode-layout.ts is a leaf", () => {
    const runtime = files.filter((f) => f.rel.startsWith('runtime/'));
    const edges = new Map(
      runtime.map((f) => [
        f.rel,
        f.imports
          .map((spec) => target(f.path, spec))
          .flatMap((t) => (t.kind === 'src' && t.path.startsWith('runtime/') ? [t.path] : [])),
      ]),
    );
    // ClipSampler.clip is typed as CompressedClip, whose createSampler makes it: a type-only
    // reference, erased from the built JavaScript.
    edges.set(
      'runtime/sampler.ts',
      edges.get('runtime/sampler.ts')!.filter((path) => path !== 'runtime/clip.ts'),
    );
    expect(edges.get('runtime/decode-layout.ts')).toEqual([]);
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...path.slice(path.indexOf(file)), file].join(' → '));
        return;
      }
      state.set(file, 'open');
      for (const next of edges.get(file) ?? []) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of edges.keys()) visit(file, []);
    expect(cycles).toEqual([]);
  });

  it('src/shared/** is a leaf: it imports nothing, not even each other', () => {
    expect(files.some((f) => f.rel.startsWith('shared/'))).toBe(true);
    expect(violations('shared/', () => false)).toEqual([]);
  });

  it("one error base class: every error class in src/ extends BonepressError (src/shared/errors.ts) or another such class; only the CLI's FileScopedError wrapper extends Error", () => {
    const classes = new Map<string, { base: string; file: string }>();
    for (const f of files) {
      for (const m of withoutComments(readFileSync(f.path, 'utf8')).matchAll(/\bclass\s+(\w+)\s+extends\s+(\w+)/g))
        classes.set(m[1], { base: m[2], file: f.rel });
    }
    const rootOf = (name: string): string => {
      let at = name;
      for (let i = 0; i < 10 && classes.has(at) && at !== 'BonepressError'; i++) at = classes.get(at)!.base;
      return at;
    };
    const errorClasses = [...classes.entries()].filter(([name]) => /Error$/.test(name) && name !== 'BonepressError');
    expect(errorClasses.length).toBeGreaterThan(10);
    const outside = errorClasses
      .filter(([name]) => rootOf(name) !== 'BonepressError')
      .map(([name, c]) => `src/${c.file}: ${name} extends ${c.base}`);
    expect(outside).toEqual(['src/cli/exit-codes.ts: FileScopedError extends Error']);
  });

  it("node/failure.ts reads an error's code and message from the base class: no instanceof test of a subclass", () => {
    const failure = files.find((f) => f.rel === 'node/failure.ts')!;
    const tested = [...withoutComments(readFileSync(failure.path, 'utf8')).matchAll(/instanceof\s+(\w+)/g)].map(
      (m) => m[1],
    );
    expect(tested.filter((name) => name !== 'BonepressError' && name !== 'Error')).toEqual([]);
  });

  it('src/clip/** is a leaf of the library: it imports only src/clip/** and src/shared/** (nothing from runtime, compress, readers, node or cli, and no package)', () => {
    expect(files.some((f) => f.rel === 'clip/raw-clip.ts')).toBe(true);
    expect(
      violations('clip/', (t) => t.kind === 'src' && (t.path.startsWith('clip/') || t.path.startsWith('shared/'))),
    ).toEqual([]);
  });

  it('src/adapters/** imports only the runtime, each other and its engine: three.js files three and no Babylon file, Babylon files @babylonjs and no three.js file', () => {
    expect(files.some((f) => f.rel === 'adapters/babylon.ts')).toBe(true);
    const engine = (rel: string) =>
      /^adapters\/babylon/.test(rel) ? 'babylon' : /^adapters\/three/.test(rel) ? 'three' : 'shared';
    const packages = { babylon: ['@babylonjs/core', '@babylonjs/loaders'], three: ['three'], shared: [] as string[] };
    const bad: string[] = [];
    for (const f of files.filter((x) => x.rel.startsWith('adapters/'))) {
      const own = engine(f.rel);
      for (const spec of f.imports) {
        const t = target(f.path, spec);
        const ok =
          t.kind === 'src'
            ? t.path.startsWith('runtime/') ||
              (t.path.startsWith('adapters/') && [own, 'shared'].includes(engine(t.path)))
            : t.kind === 'package' && packages[own].includes(t.name);
        if (!ok) bad.push(`src/${f.rel} imports '${spec}'`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('nothing outside src/cli/ imports src/cli/**', () => {
    const bad = files
      .filter((f) => !f.rel.startsWith('cli/'))
      .flatMap((f) =>
        f.imports
          .filter((spec) => {
            const t = target(f.path, spec);
            return t.kind === 'src' && t.path.startsWith('cli/');
          })
          .map((spec) => `src/${f.rel} imports '${spec}'`),
      );
    expect(bad).toEqual([]);
  });

  it('nothing in src/ imports from outside src/ (tests, bench scripts)', () => {
    expect(violations('', (t) => t.kind !== 'outside')).toEqual([]);
  });

  it("src/cli/** uses the library only through its entry points (bonepress, bonepress/node, bonepress/runtime, bonepress/net, and the bench engine's index)", () => {
    const entries = new Set([
      'index.ts',
      'node/index.ts',
      'node/internal.ts',
      'runtime/index.ts',
      'net/index.ts',
      'bench/index.ts',
    ]);
    expect(
      violations(
        'cli/',
        (t) => t.kind === 'package' || (t.kind === 'src' && (t.path.startsWith('cli/') || entries.has(t.path))),
      ),
    ).toEqual([]);
  });

  it('src/index.ts loads the glTF reader only on first use (no static import or re-export of readers/gltf.ts but types)', () => {
    const index = files.find((f) => f.rel === 'index.ts');
    expect(index).toBeDefined();
    const code = withoutComments(readFileSync(index!.path, 'utf8'));
    const eager = [...code.matchAll(/^\s*(?:import|export)\s+(?!type\b)[^'";]*?\sfrom\s*['"]([^'"]+)['"]/gm)].map(
      (m) => m[1],
    );
    expect(eager.filter((spec) => /readers\/gltf\.js$/.test(spec))).toEqual([]);
  });

  it('nothing src/index.ts loads eagerly (static value imports, followed through every module) is readers/gltf.ts or @gltf-transform', () => {
    const valueImports = (file: string): string[] => {
      const code = withoutComments(readFileSync(file, 'utf8'));
      return [
        ...[...code.matchAll(/^\s*(?:import|export)\s+(?!type\b)[^'";]*?\sfrom\s*['"]([^'"]+)['"]/gm)].map((m) => m[1]),
        ...[...code.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm)].map((m) => m[1]),
      ];
    };
    const seen = new Set<string>();
    const packages = new Set<string>();
    const queue = [join(SRC, 'index.ts')];
    while (queue.length > 0) {
      const file = queue.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      for (const spec of valueImports(file)) {
        const t = target(file, spec);
        if (t.kind === 'src') queue.push(join(SRC, t.path));
        else if (t.kind === 'package') packages.add(t.name);
      }
    }
    const loaded = [...seen].map((f) => relative(SRC, f).split(sep).join('/'));
    expect(loaded).toContain('compress/index.ts');
    expect(loaded.filter((f) => f === 'readers/gltf.ts')).toEqual([]);
    expect([...packages].filter((name) => name.startsWith('@gltf-transform'))).toEqual([]);
  });

  it('src/index.ts (when present) imports nothing Node-only, and nothing from bench/, cli/ or node/', () => {
    const index = files.find((f) => f.rel === 'index.ts');
    if (!index) return;
    const bad = index.imports.filter((spec) => {
      const t = target(index.path, spec);
      if (t.kind === 'package') return isNodeOnly(t.name) || t.name === 'piscina';
      return t.kind !== 'src' || /^(bench|cli|node)\//.test(t.path);
    });
    expect(bad).toEqual([]);
  });

  it('the compressor, readers and clip model are browser-safe too (Node code lives in node/, cli/ and bench/)', () => {
    const bad: string[] = [];
    for (const f of files) {
      if (/^(node|cli|bench)\//.test(f.rel)) continue;
      for (const spec of f.imports) {
        const t = target(f.path, spec);
        if (t.kind === 'package' && (isNodeOnly(t.name) || t.name === 'piscina'))
          bad.push(`src/${f.rel} imports '${spec}'`);
        if (t.kind === 'src' && /^(node|cli|bench)\//.test(t.path)) bad.push(`src/${f.rel} imports '${spec}'`);
      }
    }
    expect(bad).toEqual([]);
  });
});
