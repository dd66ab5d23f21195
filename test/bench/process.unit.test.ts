import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseProcessArgs, parseSizes } from '../../bench/process/args.js';
import type { ProcessRun } from '../../bench/process/cases.js';
import { syncedTotals } from '../../bench/process/cases.js';
import { clusterAddress, endpointAddress, NODE_IP, serviceObjects } from '../../bench/process/manifests.js';
import { categorize, packageOf } from '../../bench/process/profile-summary.js';
import { churnTargets, FLOORS_FOR_SLOPE, processMedians, processTargets, renderChurn, renderDeltas, slope } from '../../bench/process/report.js';
import { EndpointChurn } from '../../bench/process/churn-state.js';
import type { ChurnResult, DeltaResult } from '../../bench/process/churn.js';
import { nftDelta, splitElements } from '../../bench/process/nft-delta.js';

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
    // Only the full run draws docs/bench/'s chart; a run of chosen sizes draws its own beside its JSON.
    expect(parseProcessArgs([]).chart).toBe('docs/bench/process.svg');
    expect(parseProcessArgs(['--sizes', '10000x5']).chart).toBe('bench-results/process.svg');
    expect(parseProcessArgs(['--sizes', 'none', '--out', '/tmp/churn.json']).chart).toBe('/tmp/churn.svg');
    expect(parseProcessArgs(['--sizes', '10000x5', '--chart', 'docs/bench/process.svg']).chart).toBe('docs/bench/process.svg');
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
    run('node reads', '-', 0.15),
  ];

  it('puts the ratios and the floor on the medians', () => {
    const [m] = processMedians(runs);
    expect(m!.layout).toBe('slots');
    expect(m!.floorS).toBeCloseTo(0.39);
    expect(m!.kubeProxyNft!.wall).toBe(5);
  });

  it('puts node reading the manifests on the kernel\'s time, and the 2.5x targets beside it', () => {
    const [m] = processMedians(runs);
    expect(m!.readS).toBe(0.15);
    expect(m!.readFloorS).toBeCloseTo(0.5);
    const t = processTargets([m!]).find((x) => x.target.includes('10k x 5: proxy --once >= 2.5x'))!;
    // nft -f 1.6 s over kernel 0.35 + reads 0.15: no Node process that reads first beats it 3.2x.
    expect(t.value).toContain('at most 1.600 / (0.350 + 0.150) = 3.20x');
    const at100k = processMedians(runs.map((r) => ({ ...r, services: 100_000 })));
    expect(processTargets(at100k).find((x) => x.target.startsWith('slots 100k x 5: proxy --once >= 2.5x'))?.pass).toBe(true);
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

describe('churn', () => {
  it('keeps every endpoint its own address on its service\'s target port through replacements, additions and removals', () => {
    const churn = new EndpointChurn(2000, 5);
    const kinds = new Map<string, number>();
    for (let t = 0; t < 400; t++) {
      for (const i of churn.pick(50)) {
        const k = churn.change(i);
        kinds.set(k, (kinds.get(k) ?? 0) + 1);
      }
    }
    const seen = new Set<number>();
    let dup = 0;
    let otherPort = 0;
    for (let i = 0; i < 2000; i++) {
      const eps = churn.endpointsOf(i);
      expect(eps.length).toBeGreaterThanOrEqual(1);
      expect(eps.length).toBeLessThanOrEqual(10);
      for (const k of eps) {
        if (seen.has(k)) dup++;
        seen.add(k);
        if (endpointAddress(k).port !== endpointAddress(i * 5).port) otherPort++;
      }
    }
    expect(dup).toBe(0);
    expect(otherPort).toBe(0);
    expect([...kinds.keys()].sort()).toEqual(['added', 'removed', 'replaced']);
  });

  it('picks distinct services, the same ones for the same seed', () => {
    const a = new EndpointChurn(100, 5).pick(50);
    expect(new Set(a).size).toBe(50);
    expect(new EndpointChurn(100, 5).pick(50)).toEqual(a);
  });

  it('fits a least-squares slope', () => {
    expect(slope([{ x: 0, y: 100 }, { x: 1, y: 102 }, { x: 2, y: 104 }])).toBeCloseTo(2);
    expect(slope([{ x: 0, y: 5 }])).toBeNaN();
  });
});

describe('the nft -f delta between two renders', () => {
  const before = [
    'add table ip t { comment "x"; }',
    'add map ip t m { type ipv4_addr : verdict; }',
    'add set ip t s { type ipv4_addr; }',
    'add chain ip t a',
    'add rule ip t a counter',
    'add chain ip t gone',
    'add rule ip t gone drop',
    'add element ip t s { 10.0.0.1, 10.0.0.2 }',
    'add element ip t m { 10.0.0.1 : goto a, 10.0.0.2 : goto gone }',
  ].join('\n');
  const after = [
    'add table ip t { comment "x"; }',
    'add map ip t m { type ipv4_addr : verdict; }',
    'add set ip t s { type ipv4_addr; }',
    'add chain ip t a',
    'add rule ip t a accept',
    'add chain ip t new',
    'add rule ip t new drop',
    'add element ip t s { 10.0.0.1, 10.0.0.3 }',
    'add element ip t m { 10.0.0.1 : goto a, 10.0.0.2 : goto new }',
  ].join('\n');

  it('adds new chains, rewrites changed ones, replaces elements by key, deletes what is gone last', () => {
    expect(nftDelta(before, after).split('\n').filter(Boolean)).toEqual([
      'add chain ip t new',
      'flush chain ip t a',
      'add rule ip t a accept',
      'add rule ip t new drop',
      'delete element ip t s { 10.0.0.2 }',
      'delete element ip t m { 10.0.0.2 }',
      'add element ip t s { 10.0.0.3 }',
      'add element ip t m { 10.0.0.2 : goto new }',
      'flush chain ip t gone',
      'delete chain ip t gone',
    ]);
  });

  it('is empty between equal texts, and refuses what render does not write', () => {
    expect(nftDelta(before, before)).toBe('');
    expect(() => nftDelta('flush ruleset', before)).toThrow(/not a render statement/);
  });

  it('splits elements at the commas outside quotes and braces', () => {
    expect(splitElements('1.2.3.4 comment "a, b", 5 : { x, y }, 6')).toEqual(['1.2.3.4 comment "a, b"', '5 : { x, y }', '6']);
  });
});

describe('churn options and targets', () => {
  it('parses the churn options', () => {
    const o = parseProcessArgs(['--sizes', 'none', '--informers', '--churn-seconds', '300', '--churn-size', '10000x5', '--churn-sources', 'informers', '--delta-changes', '20']);
    expect(o.sizes).toEqual([]);
    expect(o.informers).toBe(true);
    expect(o.churnSeconds).toBe(300);
    expect(o.churnSources).toEqual(['informers']);
    expect(o.deltaChanges).toBe(20);
    expect(() => parseProcessArgs(['--churn-sources', 'etcd'])).toThrow(/unknown source "etcd"/);
  });

  it('judges churn memory on the max and the slope, and the churn ratio on the medians', () => {
    const churn: ChurnResult = {
      source: 'informers', layout: 'slots', services: 10_000, endpoints: 5, seconds: 120, servicesPerTick: 50, intervalMs: 200, ticks: 600, changes: 30_000, firstSyncS: 2, firstSyncRssMB: 150,
      samples: [{ s: 0, rssMB: 150, fileMB: 50 }, { s: 60, rssMB: 152, fileMB: 51 }, { s: 120, rssMB: 154, fileMB: 53 }],
      syncMs: [10, 20, 30], syncOperations: [5, 5, 5], compactionMs: [240, 310],
    };
    const delta: DeltaResult = { layout: 'slots', services: 10_000, endpoints: 5, syncMs: [2, 3, 4], syncOperations: [4, 4, 4], nftWall: [0.1, 0.08, 0.12], nftUser: [0, 0, 0], nftSys: [0, 0, 0], deltaStatements: 4 };
    const ts = churnTargets([churn, { ...churn, samples: churn.samples.map((s) => ({ ...s, rssMB: s.rssMB + s.s })) }], [delta]);
    expect(ts.map((t) => t.pass)).toEqual([false, false, true]);
    expect(ts[0]!.value).toBe('max 154 MB, samples 2.00 MB/min');
    expect(ts[2]!.value).toBe('3.00 / 100.0 ms = 1/33.3');
    // The proxy's heap collections under churn: how many, and the longest pause.
    const table = renderChurn([churn, { ...churn, compactionMs: [] }]).split('\n');
    expect(table[0]).toMatch(/slope MB\/min\s+anon slope\s+late slope\s+floor slope\s+samples/);
    expect(table[0]).toMatch(/GCs\s+GC pause ms$/);
    // The RSS grew 2 MB a minute, its pages of files 1.5: the anonymous part 0.5; over the second
    // half (the samples at 60 and 120 s) 2 as well.
    expect(table[1]).toMatch(/\s2\.00\s+0\.50\s+2\.00\s+-\s+3\s/);
    expect(table[1]).toMatch(/\s2\s+310$/);
    expect(table[2]).toMatch(/\s0\s+-$/);
    // The churn ratio's commit column: the median of the syncs' commits, '-' for a run saved without them.
    // With enough collections, what each left is judged, not the samples' sawtooth.
    // Samples that end on a peak of the sawtooth: 9 MB/min, over floors that grow by 0.5.
    const sawtooth = { ...churn, samples: [0, 30, 60, 90].map((t, i) => ({ s: t, rssMB: 150 + (i % 2) * 20 + t / 60, fileMB: 50 })) };
    const floors = (perMin: number) => [0, 20, 40, 60, 80, 100].map((t) => ({ s: t, rssMB: 140 + (t / 60) * perMin }));
    const [flat, leaking, few] = churnTargets([{ ...sawtooth, floors: floors(0.5) }, { ...sawtooth, floors: floors(1.5) }, { ...sawtooth, floors: floors(0.5).slice(0, FLOORS_FOR_SLOPE - 1) }], []);
    expect(flat).toMatchObject({ pass: true, value: 'max 172 MB, after each of 6 collections 0.50 MB/min (samples 9.00)' });
    expect(leaking!.pass).toBe(false);
    expect(few).toMatchObject({ pass: false, value: 'max 172 MB, samples 9.00 MB/min' });
    expect(renderChurn([{ ...sawtooth, floors: floors(0.5) }]).split('\n')[1]).toMatch(/\s9\.00\s+9\.00\s+41\.00\s+0\.50\s+4\s/);
    const deltas = renderDeltas([{ ...delta, syncCommitMs: [1.5, 0.5, 1] }, delta]).split('\n');
    expect(deltas[0]).toMatch(/ops p50\s+commit p50 ms\s+nft -f p50 ms/);
    expect(deltas[1]).toMatch(/\s4\s+1\.00\s+100\.0\s/);
    expect(deltas[2]).toMatch(/\s4\s+-\s+100\.0\s/);
  });
});
