// Conformance with kube-proxy's own unit-test goldens (pkg/proxy/nftables/proxier_test.go; the
// version is in test/fixtures/proxy/upstream/README.md). Each upstream test's fixtures are written
// as manifests plus the fake proxier's settings as flags; `nftlink render --layout kube-proxy`
// renders them, and the result must equal the upstream dump after normalising what cannot matter
// (nft-model.ts) and rewriting it through the listed known differences (known-differences.ts),
// each explained by an upstream change. Anything else that differs fails.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderProxy } from '../../../src/cli/proxy.js';
import { cloneTable, modelLines, parseTable, type TableModel } from './upstream/nft-model.js';
import { KNOWN_DIFFERENCES } from './upstream/known-differences.js';

const DIR = new URL('../../fixtures/proxy/upstream/', import.meta.url).pathname;
const read = (f: string): string => readFileSync(DIR + f, 'utf8');

interface Case {
  test: string;
  manifests: string;
  golden: string;
}
const CASES = JSON.parse(read('cases.json')) as Case[];
// NewFakeProxier's settings (node, node IPs, pod and service CIDRs, nodePortAddresses, mark).
const FLAGS = read('flags').split('\n').filter((l) => l.trim() !== '');
// Upstream prefixes every golden with its baseRules.
const BASE = read('base.nft');

/** Lines only in `a`, lines only in `b`. */
function difference(a: TableModel, b: TableModel): { onlyUpstream: string[]; onlyNftlink: string[] } {
  const la = modelLines(a);
  const lb = modelLines(b);
  const sb = new Set(lb);
  const sa = new Set(la);
  return { onlyUpstream: la.filter((l) => !sb.has(l)), onlyNftlink: lb.filter((l) => !sa.has(l)) };
}

/** How many objects each known difference changed in each golden. */
const explained = new Map<string, number>();

describe('kube-proxy layout against upstream proxier_test.go goldens', () => {
  for (const c of CASES) {
    it(c.test, async () => {
      const upstream = parseTable(BASE + read(c.golden));
      const rendered = parseTable(await renderProxy(['--manifests', DIR + c.manifests, ...FLAGS]));
      // The normalised golden must hold what upstream wrote (a parsing slip would hide a difference).
      expect(upstream.chains.get('services')?.rules.length).toBeGreaterThan(0);
      const expected = cloneTable(upstream);
      for (const d of KNOWN_DIFFERENCES) explained.set(d.id, (explained.get(d.id) ?? 0) + d.apply(expected));
      expect(difference(expected, rendered)).toEqual({ onlyUpstream: [], onlyNftlink: [] });
    });
  }

  it('every known difference explains something, and names its upstream change', () => {
    for (const d of KNOWN_DIFFERENCES) {
      expect(d.upstream, d.id).toMatch(/kubernetes\/kubernetes#\d+|^none: /);
      expect(explained.get(d.id), `${d.id} changed no golden: stale entry`).toBeGreaterThan(0);
    }
  });

  it('without the known differences the goldens differ (the rewrites are what makes them equal)', async () => {
    const c = CASES[0]!;
    const upstream = parseTable(BASE + read(c.golden));
    const rendered = parseTable(await renderProxy(['--manifests', DIR + c.manifests, ...FLAGS]));
    const d = difference(upstream, rendered);
    expect(d.onlyUpstream.length).toBeGreaterThan(0);
    expect(d.onlyNftlink.length).toBeGreaterThan(0);
  });
});
