// The proxy's connection, counting the transactions it commits. The table watch (table-watch.ts)
// subscribes to the kernel's ruleset events only once the first sync is done: while anyone listens,
// the kernel builds an event for every object of every commit and queues a copy on each listening
// socket, and a cold start writes tens of thousands of objects (docs/decisions.md). Until then
// the watch tells an outside commit from ours by the ruleset's generation: every transaction that
// changes something moves it on by one (Linux 6.18 nf_tables_commit; the fake does the same), so
// the generation read before the first sync plus the transactions counted here is what the kernel
// says when nobody else committed.

import type { CommitOptions, CommitResult, DumpOptions, MonitoringConnection, MonitorOptions, NftMonitor, NftSet, Ruleset, SetElement, Transaction, TransactionOptions } from '../../nft/index.js';

export class CountedConnection implements MonitoringConnection {
  /**
   * Transactions committed through this connection that reached the kernel: not empty (nothing is
   * sent) and not refused (the kernel then changes nothing). One whose every operation was a no-op
   * leaves the generation where it was and is counted all the same: the watch then sees a
   * difference and repairs (a full sync that finds nothing to write). Only such a commit of ours
   * together with as many outside ones would hide those, until the periodic full sync.
   */
  commits = 0;

  constructor(private readonly nft: MonitoringConnection) {}

  transaction(opts?: TransactionOptions): Transaction {
    return this.nft.transaction(opts);
  }

  async commit(tx: Transaction, opts?: CommitOptions): Promise<CommitResult> {
    const sent = tx.size > 0;
    const result = await this.nft.commit(tx, opts);
    if (sent) this.commits++;
    return result;
  }

  check(tx: Transaction): Promise<void> {
    return this.nft.check(tx);
  }

  dump(opts?: DumpOptions): Promise<Ruleset> {
    return this.nft.dump(opts);
  }

  dumpSetElements(set: NftSet): Promise<{ generation: number; elements: readonly SetElement[] }> {
    return this.nft.dumpSetElements(set);
  }

  generation(): Promise<number> {
    return this.nft.generation();
  }

  monitor(opts?: MonitorOptions): NftMonitor {
    return this.nft.monitor(opts);
  }

  close(): void {
    this.nft.close();
  }
}
