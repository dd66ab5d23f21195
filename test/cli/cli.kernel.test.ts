// The CLI as users run it: bin/nftlink.js (the compiled TypeScript), exit codes included.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { Netns } from '../helpers/netns.js';
import { BIN as bin } from '../../src/netns/proxy-process.js';

const made: Netns[] = [];
afterAll(() => made.forEach((n) => n.remove()));

function run(args: string[], env?: NodeJS.ProcessEnv): { status: number | null; stdout: string; stderr: string } {
  if (!existsSync(new URL('../../dist/bundle/cli.js', import.meta.url))) throw new Error('dist/ is missing: run npm run build:ts (scripts/test.sh does)');
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 20_000, ...(env ? { env: { ...process.env, ...env } } : {}) });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

it('starts whatever the compile cache directory: one it cannot make means no cache, not a hang', () => {
  // Node 24.22's own mkdir of the cache spins forever under /proc (bin/nftlink.js); a read-only
  // or missing parent fails at once. Each must still run the command.
  for (const dir of ['/proc/self', '/proc/nonexistent', '/dev/null/x', '/nonexistent-nftlink/x']) {
    const r = run(['--version'], { TMPDIR: dir, NODE_COMPILE_CACHE: '' });
    expect(r.status, dir).toBe(0);
    expect(r.stdout, dir).toMatch(/^nftlink v\d+\.\d+\.\d+\n$/);
  }
});

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

/** What a CLI run loaded (test/helpers/loaded-modules.cjs), and how it ended. */
function runLoading(args: string[]): { status: number | null; stderr: string; packages: string[]; builtins: string[] } {
  const reporter = fileURLToPath(new URL('../helpers/loaded-modules.cjs', import.meta.url));
  const r = spawnSync(process.execPath, ['-r', reporter, bin, ...args], { encoding: 'utf8' });
  const line = r.stderr.split('\n').find((l) => l.startsWith('loaded-modules: '));
  if (!line) throw new Error(`no module report: ${r.stderr}`);
  const { packages, builtins } = JSON.parse(line.slice('loaded-modules: '.length)) as { packages: string[]; builtins: string[] };
  return { status: r.status, stderr: r.stderr, packages, builtins };
}

it('proxy --once from JSON manifests loads neither yaml nor node:http and the fetch implementation; YAML manifests load yaml', () => {
  const ns = Netns.create();
  made.push(ns);
  const dir = mkdtempSync(join(tmpdir(), 'nftlink-cli-modules-'));
  try {
    const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { type: 'ClusterIP', clusterIP: '198.18.0.10', clusterIPs: ['198.18.0.10'], ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }] } };
    writeFileSync(join(dir, 'services.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [service] }));
    const flags = ['--hostname-override', 'node-a', '--node-ip', '198.18.255.1', '--cluster-cidr', '198.19.0.0/16', '--service-cidr', '198.18.0.0/24'];
    const once = runLoading(['proxy', '--once', '--manifests', dir, '--netns', ns.name, ...flags]);
    expect(once.status, once.stderr).toBe(0);
    expect(ns.nftList()).toContain('198.18.0.10');
    // The reporter sees what was loaded: the logger is.
    expect(once.packages).toContain('pino');
    expect(once.packages).not.toContain('yaml');
    expect(once.builtins).not.toContain('http');
    expect(once.builtins).not.toContain('internal/deps/undici/undici');

    rmSync(join(dir, 'services.json'));
    writeFileSync(join(dir, 'services.yaml'), 'apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\nspec: {type: ClusterIP, clusterIP: 198.18.0.10, clusterIPs: [198.18.0.10], ports: [{name: http, protocol: TCP, port: 80, targetPort: 8080}]}\n');
    const render = runLoading(['render', '--manifests', dir, ...flags]);
    expect(render.status, render.stderr).toBe(0);
    expect(render.packages).toContain('yaml');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
