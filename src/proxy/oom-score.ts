// kube-proxy's oomScoreAdj (--oom-score-adj, default -999): written to the process's own
// /proc/self/oom_score_adj at start-up, so that under memory pressure the kernel's OOM killer takes
// other processes before the one that keeps Services reachable. A failure (no CAP_SYS_RESOURCE for a
// value below the current one, a read-only /proc) is logged, not fatal, as in kube-proxy.

import { readFileSync, writeFileSync } from 'node:fs';
import type { Logger } from '../logging/logger.js';

export function applyOomScoreAdj(value: number, log: Logger, path = '/proc/self/oom_score_adj'): void {
  try {
    const current = Number(readFileSync(path, 'utf8').trim());
    if (current === value) return;
    writeFileSync(path, String(value));
    log.info('set oom_score_adj', { from: current, to: value });
  } catch (err) {
    log.warn('cannot set oom_score_adj', { value, reason: (err as Error).message });
  }
}
