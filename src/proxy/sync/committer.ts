// Hands a plan's transactions to the kernel: one at a time and in order, keeping the rule handles
// the kernel echoes back. On a cold start a sealed part commits on the addon's thread while this
// thread plans the next one (2 cores: the kernel's work and ours overlap).

import type { Logger } from '../../logging/logger.js';
import type { NftConnection, Transaction } from '../../nft/index.js';
import type { Plan } from './plan.js';

export class Committer {
  constructor(
    private readonly nft: NftConnection,
    private readonly log: Logger,
    private readonly family: string,
  ) {}

  /**
   * Seals the plan's current transaction and starts committing it once the part before it is
   * committed; returns when this part is in flight (not when it is committed).
   */
  async send(plan: Plan): Promise<void> {
    const tx = plan.seal();
    if (!tx) return;
    await plan.inflight;
    const part = this.commit(plan, tx);
    // Observed by the next await of plan.inflight; never an unhandled rejection meanwhile.
    part.catch(() => {});
    plan.inflight = part;
  }

  /** Commits what is left of the plan, after the part in flight. */
  async finish(plan: Plan): Promise<void> {
    await plan.inflight;
    const tx = plan.seal();
    if (tx) await this.commit(plan, tx);
  }

  private async commit(plan: Plan, tx: Transaction): Promise<void> {
    if (this.log.trace) this.log.trace('transaction', { family: this.family, nft: tx.render() });
    const started = performance.now();
    const result = await this.nft.commit(tx);
    plan.stats.commitMs += performance.now() - started;
    for (const [index, handle] of result.ruleHandles) {
      const at = plan.echoes?.get(plan.committedOps + index);
      const known = at && plan.chainWrites.get(at.chain);
      if (known) (known.handles ??= [])[at.rule] = handle;
    }
    plan.committedOps += tx.size;
  }
}
