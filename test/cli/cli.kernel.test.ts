// The CLI as users run it: bin/nftlink.js (the compiled TypeScript), exit codes included.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, expect, it } from 'vitest';
import { Netns } from '../helpers/netns.js';
import { BIN as bin } from '../../src/netns/proxy-process.js';

const made: Netns[] = [];
afterAll(() => made.forEach((n) => n.remove()));

function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  if (!existsSync(new URL('../../dist/bundle/cli.js', import.meta.url))) throw new Error('dist/ is missing: run npm run build:ts (scripts/test.sh does)');
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

it('nftlink list prints the namespace ruleset as nft text', () => {
  const ns = Netns.create();
  made.push(ns);
  ns.nftApply('table inet cli {\n chain c {\n  type filter hook input priority 0; policy accept;\n  tcp dport 22 accept\n }\n}\n');
  const r = run(['list', '--netns', ns.name]);
  expect(r.status).toBe(0);
  expect(r.stdout).toContain('table inet cli {');
  expect(r.stdout).toContain('tcp dport 22 accept');
});

it('exit codes: 2 for usage errors, 1 for failures with the reason', () => {
  expect(run(['bogus']).status).toBe(2);
  expect(run(['list', '--table', 'inet']).status).toBe(2);
  const missing = run(['list', '--netns', 'nftlink-no-such-namespace']);
  expect(missing.status).toBe(1);
  expect(missing.stderr).toMatch(/cannot open network namespace .*nftlink-no-such-namespace/);
});

it('--help and help print the usage on stdout with exit 0, and run nothing', () => {
  const proxyHelp = run(['proxy', '--manifests', '/nonexistent', '--help']);
  expect(proxyHelp.status).toBe(0);
  expect(proxyHelp.stdout).toContain('--nodeport-addresses LIST');
  expect(proxyHelp.stderr).toBe('');
  // The benchmarks are not part of the product (npm run bench): no subcommand, none in the usage.
  expect(run(['help']).stdout).not.toMatch(/^\s+bench\b/m);
  expect(run(['bench', '-h']).status).toBe(2);
  expect(run(['help', 'list']).stdout).toContain('list [--netns NAME] [--table FAMILY NAME]');
  expect(run(['help']).status).toBe(0);
  expect(run(['--version']).stdout).toMatch(/^nftlink v\d+\.\d+\.\d+\n$/);
  expect(run(['proxy', '--version']).stdout).toMatch(/^nftlink v\d+\.\d+\.\d+ \(kube-proxy's nftables mode\)\n$/);
  const unknown = run(['help', 'bogus']);
  expect(unknown.status).toBe(2);
  expect(unknown.stderr).toContain('unknown command "bogus"');
});
