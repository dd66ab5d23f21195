// Every TypeScript example of README.md and docs/, and every program in examples/, compiles as a
// user's strict `module: nodenext` project compiles it, against the package's public entries
// ('nftlink', 'nftlink/testing'). examples.kernel.test.ts runs them.

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compile, docExamples, examplePrograms, extractExamples, repoRoot, writeExamples } from './doc-examples.js';

const examples = docExamples();
const docPaths = writeExamples(examples, 'compile');
const programPaths = examplePrograms().map((p) => join(repoRoot, p));
const diagnostics = compile([...docPaths, ...programPaths]);

describe('the examples of README.md and docs/ compile under strict nodenext', () => {
  it('finds the README example, the guide\'s examples and the programs of examples/', () => {
    expect(examples.some((e) => e.where.startsWith('README.md:'))).toBe(true);
    expect(examples.filter((e) => e.where.startsWith('docs/library.md:')).length).toBeGreaterThan(5);
    expect(programPaths.length).toBeGreaterThanOrEqual(3);
  });
  examples.forEach((ex, i) => {
    it(`${ex.where}${ex.fragment ? ' (fragment)' : ''}`, () => {
      expect(diagnostics.get(docPaths[i]!)).toEqual([]);
    });
  });
  for (const p of programPaths) {
    it(p.slice(repoRoot.length + 1), () => {
      expect(diagnostics.get(p)).toEqual([]);
    });
  }
});

describe('the checker', () => {
  const md = [
    'text',
    '```ts',
    "import { rule } from 'nftlink';",
    "const n: number = 'x';",
    '```',
    '<!-- context: declare const tx: number; -->',
    '  ```ts fragment',
    '  tx.toFixed();',
    '  ```',
    '```sh',
    'echo not ts',
    '```',
    '```ts',
    "console.log('hi');",
    '```',
    '',
    '```text output',
    'hi',
    '```',
  ].join('\n');

  it('takes ts blocks with their line, fragments with the context above them, nothing else', () => {
    const found = extractExamples(md, 'x.md');
    expect(found).toEqual([
      { where: 'x.md:2', fragment: false, code: "import { rule } from 'nftlink';\nconst n: number = 'x';", context: '' },
      { where: 'x.md:7', fragment: true, code: 'tx.toFixed();', context: 'declare const tx: number;' },
      { where: 'x.md:13', fragment: false, code: "console.log('hi');", context: '', output: 'hi' },
    ]);
  });

  it('reports a type error of an example (so a wrong example cannot pass)', () => {
    const paths = writeExamples(extractExamples(md, 'x.md'), 'checker');
    const d = compile(paths);
    expect(d.get(paths[0]!)!.join('\n')).toMatch(/Type 'string' is not assignable to type 'number'/);
    expect(d.get(paths[1]!)).toEqual([]);
    expect(d.get(paths[2]!)).toEqual([]);
  });

  it('refuses a tag it does not know, so a typo cannot turn a program into something unchecked', () => {
    expect(() => extractExamples('```ts fragmnet\nx\n```', 'y.md')).toThrow(/y.md:1: unknown tag "fragmnet"/);
  });
});
