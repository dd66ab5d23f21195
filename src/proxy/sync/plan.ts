// One sync's plan: the transaction being filled, who each operation belongs to (so that a refusal
// can be pinned on one service port), and what the kernel will hold once it commits. Every write
// goes through a method here that records its owner; nothing else touches the transaction.

import type { Chain, KnownChain, NftSet, Rule, Table, Transaction } from '../../nft/index.js';
import type { ChainRules, ServiceObjects } from '../layout/types.js';
import type { ServicePortId } from '../model/types.js';
import type { Contributor, ElementIndex } from './element-index.js';

/** No shared chains (a layout without them, and every plan before it learns them). */
export const NO_SHARED_CHAINS: readonly ChainRules[] = Object.freeze([]);

export interface PlanStats {
  chainsWritten: number;
  chainsFlushed: number;
  elementsChanged: number;
  /** Milliseconds from handing each transaction to the connection until its commit returned, summed (Committer). */
  commitMs: number;
}

export class Plan {
  /** The transaction being filled (see tx); none until something asks for it. */
  private current: Transaction | undefined;
  /** What the next transaction is expected to grow to: the size of the one sealed before it. */
  private nextExpectedBytes: number | undefined;
  /** Operations sealed before `tx`: the global index of tx's first operation. */
  sealedOps = 0;
  /** Operations the kernel has committed, of those sealed. */
  committedOps = 0;
  /** The sealed transaction in flight. */
  inflight: Promise<void> | undefined;
  /** Rule additions whose handle the kernel echoes back: global operation index -> chain, rule index. */
  echoes: Map<number, { chain: string; rule: number }> | undefined;
  /** Owner of each operation ('' the fixed ruleset, undefined elements: resolved per element). */
  private readonly owners: (Contributor | undefined)[] = [];
  /** Chains this plan writes, as the kernel will hold them. */
  readonly chainWrites = new Map<string, KnownChain>();
  /** Chains this plan flushes for deletion. */
  readonly chainFlushes: string[] = [];
  readonly setAdds: NftSet[] = [];
  readonly setDeletes: string[] = [];
  /** Each planned service port's objects (undefined: it is gone or left out). */
  readonly fragments = new Map<ServicePortId, ServiceObjects | undefined>();
  /** Names of the layout's shared sets in use once this plan commits. */
  shared = new Set<string>();
  /** The layout's shared chains in use once this plan commits (Layout.sharedChains). */
  sharedChains: readonly ChainRules[] = NO_SHARED_CHAINS;
  readonly stats: PlanStats = { chainsWritten: 0, chainsFlushed: 0, elementsChanged: 0, commitMs: 0 };

  constructor(
    /** A transaction, expected to grow to this many bytes (the part before it's, on a cold start). */
    private readonly newTransaction: (expectedBytes?: number) => Transaction,
    /** Cut a new transaction at this size (cold start only). */
    readonly chunkOps?: number,
  ) {}

  /**
   * The transaction being filled. On a cold start the ones before it were sealed and handed to the
   * kernel, and are not kept: a refusal carries its operation (NftCommitError.operation). Made when
   * first asked for: a partial sync seals its one transaction, and a next one made then would be
   * an encoder allocated for nothing at every sync.
   */
  get tx(): Transaction {
    return (this.current ??= this.newTransaction(this.nextExpectedBytes));
  }

  /** Operations planned so far, sealed ones included. */
  get operations(): number {
    return this.sealedOps + (this.current?.size ?? 0);
  }

  /** The owner of an operation, by its index in the whole plan. */
  ownerAt(index: number): Contributor | undefined {
    return this.owners[index];
  }

  private own(owner: Contributor): void {
    this.owners[this.operations] = owner;
  }

  addTable(table: Table): void {
    this.own('');
    this.tx.add({ table });
  }

  addSet(owner: Contributor, set: NftSet): void {
    this.own(owner);
    this.tx.add({ set });
    this.setAdds.push(set);
  }

  deleteSet(owner: Contributor, set: NftSet): void {
    this.own(owner);
    this.tx.delete({ set });
    this.setDeletes.push(set.name);
  }

  addChain(owner: Contributor, chain: Chain): void {
    this.own(owner);
    this.tx.add({ chain });
  }

  deleteChain(owner: Contributor, chain: Chain): void {
    this.own(owner);
    this.tx.delete({ chain });
  }

  flushChain(owner: Contributor, chain: Chain): void {
    this.own(owner);
    this.tx.flush({ chain });
  }

  /** Adds a chain's `index`th rule, asking for its handle when this plan keeps echoes. */
  addRule(owner: Contributor, rule: Rule, index: number): void {
    this.own(owner);
    if (this.echoes) {
      this.echoes.set(this.operations, { chain: rule.chain, rule: index });
      this.tx.add({ rule }, { echo: true });
    } else this.tx.add({ rule });
  }

  replaceRule(owner: Contributor, rule: Rule, handle: number): void {
    this.own(owner);
    this.tx.replace({ rule: { ...rule, handle } });
  }

  /** Queues the element index's pending changes; their owners are found per element on a refusal. */
  queueElements(index: ElementIndex, verdictMaps = true): void {
    // Nothing pending (the other family's sync of one endpoint, a change of rules only): no
    // transaction is made for it (its encoder's buffers are allocated at once).
    if (!index.hasPending) return;
    this.stats.elementsChanged += index.queue(this.tx, verdictMaps);
  }

  /** Hands the current transaction over (to be committed); the next starts when asked for. Undefined if empty. */
  seal(): Transaction | undefined {
    const sealed = this.current;
    if (sealed === undefined || sealed.size === 0) return undefined;
    this.sealedOps += sealed.size;
    this.current = undefined;
    this.nextExpectedBytes = sealed.encodedSize;
    return sealed;
  }
}
