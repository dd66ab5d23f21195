// Runs the stale-flow cleanup (stale.ts) after each successful sync of a family: one native call
// (dump + delete, off the JS thread) per family that has something to clean, on a netlink socket of its
// own in the proxy's namespace, so a long conntrack dump never holds up the nftables socket.
// The baseline is the state the last *successful* sync of that family programmed, so an endpoint
// removed in a sync that failed is still cleaned by the next one that succeeds.

import { loadNative, type NativeBinding, type NativeConntrackFilter, type NativeConntrackResult, type NativeHandle } from '../../native/index.js';
import type { Logger } from '../../logging/logger.js';
import type { IPFamily, ProxyState } from '../model/types.js';
import { flowBaseline, repairedFlowFilters, staleFlowFilters, type FlowBaseline } from './stale.js';

const NFPROTO = { ipv4: 2, ipv6: 10 } as const;

export interface CleanupReport {
  family: IPFamily;
  filters: number;
  result?: NativeConntrackResult;
  error?: Error;
}

export class ConntrackCleaner {
  private native: NativeBinding | undefined;
  private handle: NativeHandle | undefined;
  private readonly baseline = new Map<IPFamily, FlowBaseline>();

  constructor(
    private readonly opts: { netns?: string; log: Logger },
  ) {}

  /**
   * Call after `state` was programmed successfully for its family. Never throws: failures are logged
   * and reported (the flows stay; the next cleanup tries again only for what changes then).
   */
  async synced(state: ProxyState): Promise<CleanupReport> {
    const previous = this.baseline.get(state.family);
    this.baseline.set(state.family, flowBaseline(state));
    const { filters, staleEndpoints, newlyActive } = staleFlowFilters(previous, state);
    return this.delete(state.family, filters, { staleEndpoints, newlyActive });
  }

  /**
   * Call after a sync of `state` repaired what another process did to the tables: deletes the flows
   * made meanwhile that were never DNAT'ed (stale.ts repairedFlowFilters). Never throws.
   */
  async repaired(state: ProxyState): Promise<CleanupReport> {
    return this.delete(state.family, repairedFlowFilters(state), { afterRepair: true });
  }

  private async delete(family: IPFamily, filters: NativeConntrackFilter[], why: Record<string, unknown>): Promise<CleanupReport> {
    const report: CleanupReport = { family, filters: filters.length };
    if (filters.length === 0) return report;
    try {
      if (!this.native || !this.handle) {
        this.native = loadNative();
        this.handle = this.opts.netns === undefined ? this.native.open() : this.native.open(this.opts.netns);
      }
      const result = await this.native.conntrackDelete(this.handle, NFPROTO[family], filters);
      report.result = result;
      const fields = { family, ...why, filters: filters.length, ...result };
      if (result.failed > 0) this.opts.log.error('some stale conntrack flows could not be deleted', fields);
      else this.opts.log.debug('deleted stale conntrack flows', fields);
    } catch (err) {
      report.error = err as Error;
      this.opts.log.error('conntrack cleanup failed', { family, reason: report.error.message });
    }
    return report;
  }

  /** Closes the socket; idempotent. */
  close(): void {
    if (this.native && this.handle) this.native.close(this.handle);
    this.handle = undefined;
  }
}
