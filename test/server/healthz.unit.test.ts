import { afterEach, describe, expect, it } from 'vitest';
import { HealthzServer, isNodeBeingDeleted, SyncHealthTracker, type HealthState } from '../../src/server/healthz.js';

const SYNC_PERIOD = 30_000;
const T0 = Date.parse('2025-01-01T00:00:00Z');

let server: HealthzServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

async function serve(state: () => HealthState, now: () => number): Promise<string> {
  server = new HealthzServer({ address: '127.0.0.1:0', syncPeriodMs: SYNC_PERIOD, state, now });
  const addr = await server.start();
  return `http://127.0.0.1:${addr.port}`;
}

describe('healthz server', () => {
  it('is healthy with nothing queued, and reports the current time as lastUpdated', async () => {
    const base = await serve(() => ({ lastSyncAt: T0 - 5_000, oldestQueuedAt: undefined, nodeBeingDeleted: false }), () => T0);
    const res = await fetch(`${base}/healthz`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ lastUpdated: '2025-01-01T00:00:00.000Z', currentTime: '2025-01-01T00:00:00.000Z', nodeEligible: true });
    const live = await fetch(`${base}/livez`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ lastUpdated: '2025-01-01T00:00:00.000Z', currentTime: '2025-01-01T00:00:00.000Z' });
    expect((await fetch(`${base}/other`)).status).toBe(404);
  });

  it('is unhealthy once a queued change is older than 2 × syncPeriod', async () => {
    let now = T0;
    const state: HealthState = { lastSyncAt: T0 - 100_000, oldestQueuedAt: T0, nodeBeingDeleted: false };
    const base = await serve(() => state, () => now);
    now = T0 + 2 * SYNC_PERIOD - 1;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    now = T0 + 2 * SYNC_PERIOD;
    const res = await fetch(`${base}/healthz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ lastUpdated: new Date(T0 - 100_000).toISOString(), nodeEligible: true });
    expect((await fetch(`${base}/livez`)).status).toBe(503);
  });

  it('fails /healthz but not /livez while the node is being deleted', async () => {
    const base = await serve(() => ({ lastSyncAt: T0, oldestQueuedAt: undefined, nodeBeingDeleted: true }), () => T0);
    const res = await fetch(`${base}/healthz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ nodeEligible: false });
    expect((await fetch(`${base}/livez`)).status).toBe(200);
  });

  it('knows a node being deleted by its deletionTimestamp or the autoscaler taint', () => {
    expect(isNodeBeingDeleted({ metadata: { name: 'n' } })).toBe(false);
    expect(isNodeBeingDeleted({ metadata: { name: 'n', deletionTimestamp: '2025-01-01T00:00:00Z' } })).toBe(true);
    expect(isNodeBeingDeleted({ spec: { taints: [{ key: 'ToBeDeletedByClusterAutoscaler', effect: 'NoSchedule' }] } })).toBe(true);
  });
});

describe('SyncHealthTracker', () => {
  it('keeps the oldest unprogrammed change across failed syncs until one succeeds', () => {
    let now = T0;
    let pendingSince: number | undefined = T0;
    const tracker = new SyncHealthTracker(() => ({ oldestQueuedAt: pendingSince }), () => now);
    expect(tracker.state().oldestQueuedAt).toBe(T0);
    // The sync takes the change from the tracker and fails: the change is still unprogrammed.
    pendingSince = undefined;
    now = T0 + 1_000;
    tracker.syncDone({ error: new Error('EBUSY'), queuedSince: T0 });
    expect(tracker.state().oldestQueuedAt).toBe(T0);
    pendingSince = T0 + 2_000;
    expect(tracker.state().oldestQueuedAt).toBe(T0);
    now = T0 + 3_000;
    tracker.syncDone({ queuedSince: T0 + 2_000 });
    pendingSince = undefined;
    expect(tracker.state()).toEqual({ lastSyncAt: T0 + 3_000, oldestQueuedAt: undefined, nodeBeingDeleted: false });
    tracker.node('update', { metadata: { deletionTimestamp: '2025-01-01T00:00:00Z' } });
    expect(tracker.state().nodeBeingDeleted).toBe(true);
  });
});
