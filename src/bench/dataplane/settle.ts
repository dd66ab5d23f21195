// Waiting for the machine to go quiet before measuring. Loading 10k services, and tearing down the
// namespaces of the previous size, leaves kernel work behind (netns cleanup, RCU callbacks in
// kworkers) that runs for seconds after the call returned; on a 2-core machine it would land in the
// first shape's connects.

import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

function cpuTimes(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  // cpu user nice system idle iowait irq softirq steal ...
  const f = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  const idle = f[3]! + f[4]!;
  return { busy: total - idle, total };
}

/**
 * Resolves once the whole machine was at most `maxBusy` busy (0..1) over one `windowMs` window, or
 * after `timeoutMs`. Returns the busy fraction of the last window.
 */
export async function settle(maxBusy = 0.1, windowMs = 500, timeoutMs = 30_000): Promise<number> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const a = cpuTimes();
    await sleep(windowMs);
    const b = cpuTimes();
    const busy = (b.busy - a.busy) / Math.max(1, b.total - a.total);
    if (busy <= maxBusy || Date.now() >= end) return busy;
  }
}
