// The TypeScript examples of README.md and docs/*.md, and the programs in examples/, as a user's
// project sees them: each compiled on its own under strict `module: nodenext`, importing 'nftlink'
// and 'nftlink/testing' by the package's name. The tests compile them all (examples.unit.test.ts)
// and run every complete one in a fresh network namespace (examples.kernel.test.ts).
//
// A fenced block tagged ```ts (or ```typescript) is a complete program: it must compile and run
// (exit 0). A block tagged ```ts fragment is a piece of a program: it is compiled, not run, with
// the declarations of an HTML comment just above it (`<!-- context: declare const nft: Nftables; -->`,
// invisible on the rendered page) in front, so it still type-checks. A complete program followed
// (after blank lines only) by a ```text output block must print exactly that block.

import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface DocExample {
  /** Where it is written: `docs/library.md:42` (the line of the opening fence). */
  where: string;
  /** A complete program (run by the kernel test) or a fragment (compiled only). */
  fragment: boolean;
  /** The code as the reader sees it. */
  code: string;
  /** Declarations compiled in front of a fragment (from its `<!-- context: ... -->` comment). */
  context: string;
  /** What the program prints (its stdout without the last newline), from a ```text output block after it. */
  output?: string;
}

const FENCE = /^(\s*)(```+|~~~+)\s*(\S*)\s*(.*)$/;
const CONTEXT = /<!--\s*context:\s*([\s\S]*?)-->\s*$/;

/** The ts/typescript blocks of one markdown text, with the indentation of their fence removed. */
export function extractExamples(markdown: string, file: string): DocExample[] {
  const lines = markdown.split('\n');
  const out: DocExample[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang, rest] = open as unknown as [string, string, string, string, string];
    let end = i + 1;
    while (end < lines.length && !lines[end]!.trim().startsWith(fence)) end++;
    if (lang === 'ts' || lang === 'typescript') {
      const words = rest.split(/\s+/).filter(Boolean);
      const unknownWord = words.find((w) => w !== 'fragment');
      if (unknownWord) throw new Error(`${file}:${i + 1}: unknown tag "${unknownWord}" on a ts block (only "fragment" is known)`);
      const code = lines.slice(i + 1, end).map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.trimStart())).join('\n');
      const before = lines.slice(Math.max(0, i - 12), i).join('\n');
      const context = CONTEXT.exec(before)?.[1]?.trim() ?? '';
      const ex: DocExample = { where: `${file}:${i + 1}`, fragment: words.includes('fragment'), code, context };
      const output = outputBlock(lines, end + 1);
      if (output !== undefined) {
        if (ex.fragment) throw new Error(`${ex.where}: a fragment is not run, so it cannot have an output block`);
        ex.output = output;
      }
      out.push(ex);
    }
    i = end;
  }
  return out;
}

/** The text of a ```text output block starting at `from` after blank lines, if there is one. */
function outputBlock(lines: readonly string[], from: number): string | undefined {
  let i = from;
  while (i < lines.length && lines[i]!.trim() === '') i++;
  const open = FENCE.exec(lines[i] ?? '');
  if (!open || open[3] !== 'text' || open[4]!.trim() !== 'output') return undefined;
  const indent = open[1]!;
  let end = i + 1;
  while (end < lines.length && !lines[end]!.trim().startsWith(open[2]!)) end++;
  return lines.slice(i + 1, end).map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.trimStart())).join('\n');
}

/** Every example of README.md and docs/*.md (docs/api, the generated reference, left out). */
export function docExamples(root = repoRoot): DocExample[] {
  const files = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  return files.flatMap((f) => extractExamples(readFileSync(join(root, f), 'utf8'), f));
}

/** The programs of examples/ (each folder of the examples the test of its own runs). */
export function examplePrograms(root = repoRoot): string[] {
  return readdirSync(join(root, 'examples'))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => `examples/${f}`);
}

/**
 * Where the examples are written: inside the package, so that 'nftlink' resolves to it by name
 * (Node's self-reference through package.json `exports`). One folder per test file (`use`), since
 * test files run in parallel.
 */
export const examplesDir = (use: string): string => join(repoRoot, 'build', 'doc-examples', use);

/** Writes each example as a module of its own in examplesDir(use); returns their paths, in order. */
export function writeExamples(examples: readonly DocExample[], use: string): string[] {
  const dir = examplesDir(use);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return examples.map((ex) => {
    const name = ex.where.replace(/[^A-Za-z0-9]+/g, '-') + '.ts';
    const path = join(dir, name);
    // A block without import or export would be a script sharing one global scope with the others.
    const isModule = /^\s*(import|export)\s/m.test(ex.code) || /^\s*(import|export)\s/m.test(ex.context);
    const head = ex.context ? `${ex.context}\n` : '';
    writeFileSync(path, `${head}${ex.code}\n${isModule ? '' : 'export {};\n'}`);
    return path;
  });
}

/**
 * The options of a user's strict ESM project, with 'nftlink' mapped to the package's source entries
 * (the same exports dist/index.d.ts declares, without needing a build): erasableSyntaxOnly, so that
 * Node runs the file as it is (type stripping).
 */
export const userCompilerOptions: ts.CompilerOptions = {
  strict: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2023.d.ts'],
  types: ['node'],
  noEmit: true,
  skipLibCheck: true,
  erasableSyntaxOnly: true,
  allowImportingTsExtensions: true,
  baseUrl: repoRoot,
  paths: { nftlink: ['src/index.ts'], 'nftlink/testing': ['src/testing/index.ts'] },
};

/**
 * The same options with 'nftlink' resolved as a dependent resolves it: by the package's name,
 * through package.json `exports`, to the built declarations (dist/index.d.ts; needs a build).
 */
export const builtPackageOptions: ts.CompilerOptions = (({ paths: _paths, baseUrl: _baseUrl, ...rest }) => ({ ...rest, skipLibCheck: false }))(userCompilerOptions);

/** Compiles the files together (each its own module); the diagnostics of these files, as text. */
export function compile(paths: readonly string[], options = userCompilerOptions): Map<string, string[]> {
  const program = ts.createProgram({ rootNames: [...paths], options });
  const byFile = new Map<string, string[]>(paths.map((p) => [p, []]));
  const host: ts.FormatDiagnosticsHost = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => repoRoot, getNewLine: () => '\n' };
  const global = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()].map((d) => ts.formatDiagnostic(d, host).trim());
  for (const [path, list] of byFile) {
    const sf = program.getSourceFile(path);
    if (!sf) throw new Error(`${path} is not in the program`);
    // This file's diagnostics only: the checker then looks at src/ only as far as the file uses it.
    const own = [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)];
    list.push(...global, ...own.map((d) => ts.formatDiagnostic(d, host).trim()));
  }
  return byFile;
}
