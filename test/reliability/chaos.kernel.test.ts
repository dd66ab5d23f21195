// Issue 31, scenario 3 at CI size (`npm run reliability` runs it larger): kill -9 of the real
// `nftlink proxy` at random moments of a cold start, of partial syncs under churn, of the delayed
// deletion of stale chains and of the affinity pin sweep, 12 trials (the report runs 20 or more).
// After each, the restarted proxy must converge to exactly what a clean cold start of the same
// objects programs (compared by canonical dump), and a client connecting to the stable services across the kill and the
// restart (all but the cold-start trials, whose tables were deleted on purpose) sees no failure.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runChaos, TRIAL_KINDS, type ChaosResult } from '../../bench/reliability/chaos.js';
import { ReliabilityNode } from '../../bench/reliability/node.js';
import { requirePrivileges } from '../helpers/netns.js';
import { TEST_LAYOUT } from '../proxy/dataplane/helpers.js';

let node: ReliabilityNode;
let result: ChaosResult;
// A fixed seed: a failure names its trial, and the same kill moments replay it.
const SEED = 31;

beforeAll(async () => {
  requirePrivileges();
  node = await ReliabilityNode.create({ services: 100, layout: TEST_LAYOUT, minSyncPeriod: '1s', prefix: 'nlrelk' });
  result = await runChaos(node, { trials: 12, convergeTimeoutMs: 20_000, staleBatch: 15, clientIntervalMs: 20, seed: SEED });
}, 240_000);

afterAll(async () => {
  await node?.teardown();
});

describe('kill -9 at random moments, 12 trials (CI size: 100 services)', () => {
  it('ran every kind of trial', () => {
    expect(result.trials).toHaveLength(12);
    expect(new Set(result.trials.map((t) => t.kind))).toEqual(new Set(TRIAL_KINDS));
  });

  it('every restart converged to the clean cold start of the same objects', () => {
    const notEqual = result.trials.filter((t) => !t.equal).map((t) => ({ trial: t.trial, kind: t.kind, killAfterMs: t.killAfterMs, onlyKernel: t.onlyKernel, onlyColdStart: t.onlyColdStart }));
    expect(notEqual).toEqual([]);
  });

  it('no client connection to a stable service failed across a kill and its restart', () => {
    const running = result.trials.filter((t) => t.kind !== 'cold');
    for (const t of running) expect(t.attempts, `trial ${t.trial}`).toBeGreaterThan(0);
    expect(running.filter((t) => t.failed > 0).map((t) => ({ trial: t.trial, kind: t.kind, failed: t.failed, failures: t.failures }))).toEqual([]);
  });
});
