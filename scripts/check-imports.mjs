#!/usr/bin/env node
// Checks that imports between the top-level folders of src/ go one way (docs/architecture.md):
// no cycle between folders, every folder-to-folder import one of ALLOWED's, and code outside the
// library reaching it only through its entries (src/nft/index.ts, src/native/index.ts). Reads the
// relative imports of every .ts file; no dependency, so it runs before anything is installed.
//
//   node scripts/check-imports.mjs [SRC_DIR]     (default: src) exit 0, or 1 with the offending files

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** What each top-level folder (or file, by its name without .ts) of src/ may import. */
export const ALLOWED = {
  cli: ['server', 'config', 'proxy', 'k8s', 'nft', 'native', 'logging', 'package-root', 'on-demand'],
  server: ['proxy', 'k8s', 'logging', 'on-demand'],
  config: ['proxy', 'k8s', 'nft', 'logging', 'on-demand'],
  proxy: ['k8s', 'nft', 'native', 'logging', 'on-demand'],
  k8s: ['logging', 'on-demand'],
  logging: [],
  testing: ['nft'],
  nft: ['native'],
  native: ['package-root'],
  netns: ['package-root'],
  demo: ['index', 'netns', 'proxy', 'nft', 'package-root'],
  index: ['nft'],
  'package-root': [],
  'on-demand': [],
};

/** Library folders that code outside the library reaches only through their entry file. */
export const ENTRIES = {
  nft: { entry: 'nft/index.ts', insiders: ['testing'] },
  native: { entry: 'native/index.ts', insiders: ['nft', 'testing'] },
};

/** Files allowed to import library internals directly (paths under src/): none. */
export const ENTRY_EXCEPTIONS = [];

const IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

function tsFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return tsFiles(path);
    return e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The top-level folder of a path relative to src/ ('proxy/model/x.ts' -> 'proxy'; 'index.ts' -> 'index'). */
function topOf(rel) {
  const [first, ...rest] = rel.split('/');
  return rest.length ? first : first.replace(/\.ts$/, '');
}

/** Every import of one top-level folder from another, as { from, to, file, target } (paths relative to src). */
export function folderImports(srcDir) {
  const root = resolve(srcDir);
  const out = [];
  for (const path of tsFiles(root)) {
    const file = relative(root, path).split(sep).join('/');
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      if (/^\s*(\/\/|\*)/.test(line)) continue;
      for (const m of line.matchAll(IMPORT)) {
        const target = relative(root, resolve(dirname(path), m[1].replace(/\.js$/, '.ts'))).split(sep).join('/');
        if (target.startsWith('..')) continue;
        const from = topOf(file);
        const to = topOf(target);
        if (from !== to) out.push({ from, to, file, target });
      }
    }
  }
  return out;
}

/** The folders on a cycle: Tarjan's strongly connected components of more than one folder. */
function cycles(edges) {
  const next = new Map();
  for (const { from, to } of edges) {
    if (!next.has(from)) next.set(from, new Set());
    next.get(from).add(to);
  }
  let counter = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  const visit = (v) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) components.push(new Set(component));
    }
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return components;
}

/** The problems of a source tree, one line each (empty: the imports go one way). */
export function checkImports(srcDir, allowed = ALLOWED) {
  const edges = folderImports(srcDir);
  const problems = [];
  for (const component of cycles(edges)) {
    const pairs = edges.filter((e) => component.has(e.from) && component.has(e.to));
    problems.push(`cycle between ${[...component].sort().join(', ')}:`, ...pairs.map((e) => `  ${e.file} -> ${e.target}`));
  }
  for (const e of edges) {
    if (!(e.from in allowed)) problems.push(`${e.file}: folder "${e.from}" is not in the list of allowed imports (scripts/check-imports.mjs)`);
    else if (!allowed[e.from].includes(e.to)) problems.push(`${e.file} -> ${e.target}: "${e.from}" may not import "${e.to}"`);
    const library = ENTRIES[e.to];
    if (library && e.target !== library.entry && !library.insiders.includes(e.from) && !ENTRY_EXCEPTIONS.some((x) => e.file.startsWith(x))) {
      problems.push(`${e.file} -> ${e.target}: outside the library, import ${library.entry}`);
    }
  }
  return [...new Set(problems)];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const problems = checkImports(process.argv[2] ?? 'src');
  if (problems.length) {
    process.stderr.write(`check-imports: imports between the folders of src/ must go one way\n${problems.join('\n')}\n`);
    process.exit(1);
  }
  process.stdout.write('check-imports: ok\n');
}
