// Service chains no longer wanted are flushed at once (nothing jumps to them after that commit) and
// deleted at least STALE_CHAIN_DELAY_MS later, in a transaction of their own: before Linux 6.2 a
// chain that a just-deleted map element pointed to stays busy for a moment (EBUSY).

import { Transaction, type NftConnection } from '../../nft/index.js';
import type { KernelView } from './kernel-view.js';

/** How long a flushed chain waits before it is deleted. */
export const STALE_CHAIN_DELAY_MS = 1000;

export class StaleChains {
  /** Chain name -> when its flush committed. */
  private readonly flushedAt = new Map<string, number>();

  constructor(private readonly now: () => number) {}

  has(name: string): boolean {
    return this.flushedAt.has(name);
  }

  get size(): number {
    return this.flushedAt.size;
  }

  /** A plan that flushed these chains and wrote those committed. */
  committed(flushed: readonly string[], written: Iterable<string>): void {
    for (const name of flushed) this.flushedAt.set(name, this.now());
    if (this.flushedAt.size) for (const name of written) this.flushedAt.delete(name);
  }

  /**
   * Deletes the chains flushed long enough ago, in their own transaction. Throws (and forgets them
   * all) when the kernel refuses: something still refers to them, or they are gone already, which
   * only a full sync can tell.
   */
  async deleteDue(nft: NftConnection, view: KernelView): Promise<number> {
    const due = [...this.flushedAt].filter(([, at]) => this.now() - at >= STALE_CHAIN_DELAY_MS).map(([name]) => name);
    if (!due.length) return 0;
    const tx = new Transaction();
    for (const name of due) {
      const known = view.chains.get(name);
      if (known) tx.delete({ chain: known.chain });
    }
    try {
      if (tx.size) await nft.commit(tx);
    } catch (err) {
      this.flushedAt.clear();
      throw err;
    }
    for (const name of due) {
      this.flushedAt.delete(name);
      view.chains.delete(name);
    }
    return tx.size;
  }
}
