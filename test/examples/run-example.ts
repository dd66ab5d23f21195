// The programs of examples/ are run as a user runs them: `node examples/NAME.ts ARGS` (type
// stripping; 'nftlink' resolves by name to the built package, dist/) inside a namespace of the test.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Netns } from '../helpers/netns.js';
import { repoRoot } from '../docs/doc-examples.js';

export function runExample(ns: Netns, program: string, args: readonly string[], input?: string): string {
  if (!existsSync(join(repoRoot, 'dist', 'bundle', 'index.js'))) throw new Error('dist/ is missing: npm run build:ts');
  return ns.exec(process.execPath, [join(repoRoot, 'examples', program), ...args], input);
}

/** A pod-like host for servePod and probe: the namespace with its addresses. */
export function host(ns: Netns, ipv4: string, ipv6: string) {
  return { ns, name: ns.name, ipv4, ipv6, servers: [] };
}

/** The same, for a program whose exit code tells something: its code and output, without throwing. */
export function runExampleStatus(ns: Netns, program: string, args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('ip', ['netns', 'exec', ns.name, process.execPath, join(repoRoot, 'examples', program), ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
