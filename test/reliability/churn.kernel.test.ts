// Issue 31, scenario 1 at CI size (`npm run reliability` runs it at 10k services for a minute or
// more): EndpointSlice churn through the informers of the real `nftlink proxy`, against the fake
// API server, while a client connects to stable ClusterIP and NodePort services and to churned
// ones. No connection to a stable service may fail, every churned probed service keeps answering
// (it always has a ready endpoint), and afterwards the kernel equals a clean cold start.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runChurn, type ChurnResult } from '../../bench/reliability/churn.js';
import { ReliabilityNode } from '../../bench/reliability/node.js';
import { requirePrivileges } from '../helpers/netns.js';
import { TEST_LAYOUT } from '../proxy/dataplane/helpers.js';

let node: ReliabilityNode;
let result: ChurnResult;

beforeAll(async () => {
  requirePrivileges();
  node = await ReliabilityNode.create({ services: 300, layout: TEST_LAYOUT, minSyncPeriod: '1s', prefix: 'nlrelc' });
  result = await runChurn(node, { durationS: 15, rate: 50, sampleMs: 1000, countElements: false, clientIntervalMs: 20 });
}, 120_000);

afterAll(async () => {
  await node?.teardown();
});

describe('churn under traffic (CI size: 300 services, 50 slice changes a second for 15 s)', () => {
  it('made the changes it was asked for, and the proxy observed their programming latency', () => {
    // The child's timer rounds down: a change or two short of 750 is the same rate.
    expect(result.changes).toBeGreaterThanOrEqual(0.95 * 15 * 50);
    expect(result.latency.observations).toBeGreaterThan(0);
  });

  it('no connection to a stable ClusterIP or NodePort service failed, nor to a churned service with ready endpoints', () => {
    for (const t of result.targets) expect(t.ok, t.name).toBeGreaterThan(100);
    expect(result.targets.filter((t) => t.failed > 0)).toEqual([]);
  });

  it('the kernel equals a clean cold start of the final objects', () => {
    expect({ onlyKernel: result.model.onlyKernel, onlyColdStart: result.model.onlyColdStart }).toEqual({ onlyKernel: [], onlyColdStart: [] });
    expect(result.model.equal).toBe(true);
  });
});
