// Issue 31, scenario 7: hostile HTTP clients against the running proxy's health server (from the
// client namespace) and metrics server (the node's loopback): 1,000 slow connections held open
// while /livez must answer within 1 s (the liveness probe's functional limit, not a speed figure),
// oversized headers answered 431, garbage bytes 400, a small body answered and a 64 MB one
// cut off after 256 kB (src/server/request-body.ts), and every file descriptor given back afterwards.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHostile, type HostileResult } from '../../bench/reliability/hostile.js';
import { ReliabilityNode } from '../../bench/reliability/node.js';
import { requirePrivileges } from '../helpers/netns.js';
import { TEST_LAYOUT } from '../proxy/dataplane/helpers.js';

let node: ReliabilityNode;
let r: HostileResult;

beforeAll(async () => {
  requirePrivileges();
  node = await ReliabilityNode.create({ services: 8, layout: TEST_LAYOUT, minSyncPeriod: '1s', prefix: 'nlrelh' });
  r = await runHostile(node, 1000);
}, 120_000);

afterAll(async () => {
  await node?.teardown();
});

describe('hostile HTTP clients on the health and metrics servers', () => {
  it('holds 1,000 slow connections while /livez answers 200 within 1 s and /metrics answers', () => {
    expect(r.held).toBe(1000);
    expect(r.fds.held).toBeGreaterThanOrEqual(r.fds.baseline + 1000);
    for (const a of r.livez) {
      expect(a.status).toBe(200);
      expect(a.ms).toBeLessThan(1000);
    }
    expect(r.metrics.map((a) => a.status)).toEqual([200, 200, 200]);
  });

  it('answers a 100 kB header with 431 and garbage bytes with 400, and closes those connections', () => {
    for (const a of [r.oversized.healthz, r.oversized.metrics]) {
      expect(a.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large');
      expect(a.closed).toBe(true);
    }
    for (const a of [r.garbage.healthz, r.garbage.metrics]) {
      expect(a.statusLine).toBe('HTTP/1.1 400 Bad Request');
      expect(a.closed).toBe(true);
    }
  });

  it('answers a request with a small body, and closes one with a 64 MB body instead of reading it all', () => {
    expect(r.smallBody.statusLine).toBe('HTTP/1.1 200 OK');
    // The endpoints take no body: reading (and dropping) one as long as a client likes is work for
    // nothing. The answer may be lost to the reset the close causes; the body is never read whole.
    expect(r.largeBody.healthz.closed).toBe(true);
    expect(r.largeBody.healthz.bodyMB).toBeLessThan(64);
  });

  it('gives every file descriptor back, and /livez still answers', () => {
    expect(r.fds.after).toBeLessThanOrEqual(r.fds.baseline);
    expect(r.livezAfter.map((a) => a.status)).toEqual([200, 200, 200]);
  });
});
