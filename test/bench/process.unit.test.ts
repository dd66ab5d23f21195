import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseProcessArgs, parseSizes } from '../../bench/process/args.js';
import type { ProcessRun } from '../../bench/process/cases.js';
import { syncedTotals } from '../../bench/process/cases.js';
import { clusterAddress, endpointAddress, NODE_IP, serviceObjects } from '../../bench/process/manifests.js';
import { categorize, packageOf } from '../../bench/process/profile-summary.js';
import { processMedians, processTargets } from '../../bench/process/report.js';

// The pure pieces of `npm run bench:process`: the manifests it generates stay in 198.18.0.0/15 and
// never repeat an address (the maps refuse duplicates), the proxy's log is read for what it wrote,
// the targets are judged on the medians they name, and the profile's samples land in categories.

describe('manifests', () => {
  it('gives 100k services distinct ClusterIP . port keys in 198.18.0.0/16', () => {
    const keys = new Set<string>();
    let outside = 0;
    for (let i = 0; i < 100_000; i++) {
      const c = clusterAddress(i);
      if (!c.ip.startsWith('198.18.')) outside++;
      keys.add(`${c.ip}:${c.port}`);
    }
    expect(outside).toBe(0);
    expect(keys.size).toBe(100_000);
  });

  it("gives 500k endpoints distinct ip . port values in 198.19.0.0/16, never the node's address", () => {
    const keys = new Set<string>();
    let wrong = 0;
    for (let k = 0; k < 500_000; k++) {
      const e = endpointAddress(k);
      if (e.ip === NODE_IP || !e.ip.startsWith('198.19.')) wrong++;
      keys.add(`${e.ip}:${e.port}`);
    }
    expect(wrong).toBe(0);
    expect(keys.size).toBe(500_000);
  });

  it('writes a Service and its EndpointSlice, named and labelled as the API server would', () => {
    const [svc, slice] = serviceObjects(3, 2) as [{ kind: string; spec: { clusterIP: string } }, { kind: string; metadata: { labels: Record<string, string> }; endpoints: unknown[] }];
    expect(svc.kind).toBe('Service');
    expect(svc.spec.clusterIP).toBe('198.18.0.4');
    expect(slice.kind).toBe('EndpointSlice');
    expect(slice.metadata.labels['kubernetes.io/service-name']).toBe('svc-3');
    expect(slice.endpoints).toHaveLength(2);
  });
});

describe('options', () => {
  it('parses sizes and refuses a malformed one', () => {
    expect(parseSizes('10000x5,5000x50')).toEqual([
      [10_000, 5],
      [5000, 50],
    ]);
    expect(() => parseSizes('10k')).toThrow(/--sizes/);
    expect(parseProcessArgs(['--quick']).runs).toBe(1);
  });
});

describe('the proxy log', () => {
  it("sums the families' synced lines", () => {
    const log = ['{"level":30,"family":"ip","operations":20482,"durationMs":904.5,"msg":"synced"}', '{"level":30,"family":"ip6","operations":47,"durationMs":60,"msg":"synced"}', '{"msg":"node IPs"}'].join('\n');
    expect(syncedTotals(log)).toEqual({ operations: 20529, syncMs: 964.5, families: 2 });
  });
});

describe('report', () => {
  const run = (side: ProcessRun['side'], layout: ProcessRun['layout'], wall: number, extra: Partial<ProcessRun> = {}): ProcessRun => ({ services: 10_000, endpoints: 5, layout, side, run: 0, wall, user: wall / 2, sys: 0.1, rssMB: 100, ...extra });
  const runs: ProcessRun[] = [
    run('proxy', 'slots', 0.55, { operations: 20_000, syncMs: 400, sys: 0.5 }),
    run('restart', 'slots', 0.5, { operations: 0, syncMs: 300 }),
    run('nft -f', 'slots', 1.6),
    run('nft -f', 'kube-proxy', 5),
    run('floor commit', 'slots', 0.5, { commitMs: 350 }),
    run('node -e', '-', 0.04),
  ];

  it('puts the ratios and the floor on the medians', () => {
    const [m] = processMedians(runs);
    expect(m!.layout).toBe('slots');
    expect(m!.floorS).toBeCloseTo(0.39);
    expect(m!.kubeProxyNft!.wall).toBe(5);
  });

  it("takes the proxy's own sys time as the kernel's when one batch costs the kernel more", () => {
    const [m] = processMedians(runs.map((r) => (r.side === 'floor commit' ? { ...r, commitMs: 6000 } : r)));
    expect(m!.oneBatchS).toBe(6);
    expect(m!.kernelS).toBe(0.5);
  });

  it('judges each target on its median', () => {
    const ts = processTargets(processMedians(runs));
    const by = (s: string): boolean | undefined => ts.find((t) => t.target.includes(s))?.pass;
    expect(by('2.5x faster')).toBe(true);
    expect(by('1.5x the floor')).toBe(true);
    expect(by('10x faster')).toBe(false);
    expect(by('restart')).toBe(true);
    expect(by('RSS <= 150')).toBe(true);
  });
});

describe('profile categories', () => {
  const frame = (functionName: string, url = '', lineNumber = 5) => ({ functionName, url, lineNumber });
  it('tells GC, idle, module loading by package, and stages by the innermost rule', () => {
    expect(categorize([frame('(garbage collector)')])).toBe('GC');
    expect(categorize([frame('(idle)')])).toMatch(/^idle/);
    expect(categorize([frame('x', 'file:///r/node_modules/pino/lib/a.js'), frame('', 'file:///r/node_modules/pino/pino.js', 0), frame('moduleEvaluation', 'node:internal/modules/esm/module_job')])).toBe('module loading: pino');
    expect(categorize([frame('parseAllDocuments', 'file:///r/node_modules/yaml/dist/index.js')])).toMatch(/^manifests/);
    expect(packageOf('file:///r/node_modules/@kubernetes/client-node/dist/x.js')).toBe('@kubernetes/client-node');
  });
});

describe('the command line', () => {
  const index = new URL('../../dist-bench/bench/process/index.js', import.meta.url);
  const run = (args: string[]) => {
    if (!existsSync(index)) throw new Error('dist-bench/ is missing: run npm run build:bench (scripts/test.sh does)');
    return spawnSync(process.execPath, [index.pathname, ...args], { encoding: 'utf8' });
  };

  it('--help prints the usage with exit 0 and measures nothing', () => {
    const r = run(['--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^usage: npm run bench:process -- /);
  });

  it('an unknown option fails, naming it', () => {
    const r = run(['--bogus']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('unknown option --bogus');
  });
});
