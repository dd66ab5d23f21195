// What the kernel holds of one table, as far as the sync knows: read from a dump, then kept current
// by the plans that commit. Declarations only for sets: their elements go to the element index.

import { knownChain, rulesByChain, type Family, type KnownChain, type NftConnection, type NftSet } from '../../nft/index.js';
import type { Layout } from '../layout/types.js';
import type { StateSize } from '../model/state-size.js';
import type { Plan } from './plan.js';

/**
 * Service ports from which a full sync reads its table's rules chain by chain
 * (DumpOptions.perChainRules): one dump of them is quadratic in the kernel, a request per chain
 * costs a round trip each; where they cross: docs/decisions.md.
 */
export const PER_CHAIN_RULES_FROM = 50_000;

/**
 * A set's elements as the dump read them: their identities, and for sets the dump hashed
 * (DumpOptions.hashElements) their hashes, the elements then decoded only when first read.
 */
export type DumpedElements = Pick<NftSet, 'elements' | 'elementKeys' | 'elementHashes'> & {
  /** Left out of the dump (Layout.largeSets): its contents are unknown, and written afresh. */
  omitted?: true;
};

export class KernelView {
  table = false;
  readonly chains = new Map<string, KnownChain>();
  readonly sets = new Map<string, NftSet>();
  /** The dump's elements, until the next full plan hands them to the element index. */
  elements: Map<string, DumpedElements> | undefined;
  /**
   * Names of anonymous sets start with this: the generation the table was read at, unique among
   * every writer of the table so far, and short (see src/nft/netlink/encode/request-encoder.ts).
   */
  anonymousSetPrefix: string | undefined;

  /** Counts the changes apply() made to `sets` (the only changes to it after read()). */
  setsVersion = 0;

  /** An empty table (nothing read: `nftlink render`, or the model of a table about to be created). */
  static empty(): KernelView {
    return new KernelView();
  }

  /**
   * Reads the table back (chains with their rules, sets with elements); the layout adopts what it
   * finds. For a state of `size`: the sets the layout finds too large to read are left out
   * (Layout.largeSets), and a large table's rules are read chain by chain (PER_CHAIN_RULES_FROM).
   */
  static async read(nft: NftConnection, family: Family, table: string, layout: Layout, size?: StateSize): Promise<KernelView> {
    const omit = (size && layout.largeSets?.(size)) ?? [];
    const perChainRules = size !== undefined && size.servicePorts >= PER_CHAIN_RULES_FROM;
    // Inline sets' elements left out: their rules compare by digest (most of a restart's kernel time
    // in the kube-proxy layout, which has an inline map per service with two or more endpoints).
    // Our rules' expressions left out too, for the same reason in JavaScript: they compare by
    // digest, and the slots layout adopts from their tags (rule-tags.ts).
    // Every set hashed, by the addon on its thread: the element index compares them by hashes
    // (ElementIndex.compareDump). A set's elements are decoded only when read: the slots layout's
    // adopt reads its bucket maps' to take over the slot assignment, and a set that differs is keyed.
    const rs = await nft.dump({ family, table, elementKeys: true, anonymousElements: false, ruleExprs: false, hashElements: () => true, ...(omit.length ? { omitElementsOf: omit } : {}), perChainRules });
    const view = new KernelView();
    view.table = rs.tables.length > 0;
    const rules = rulesByChain(rs.rules);
    for (const c of rs.chains) view.chains.set(c.name, knownChain(c, rules.get(c.name) ?? []));
    view.anonymousSetPrefix = `${rs.generation.toString(36)}_`;
    layout.adopt?.(rs);
    // The element index keeps what it needs of the elements; the view keeps none (at 10k services
    // holding the dump's 150k decoded elements for the process's life cost 100+ MB).
    view.elements = new Map();
    for (const s of rs.sets) {
      view.sets.set(s.name, declaration(s));
      // A set left out of the dump is written afresh; `in`, not a read: reading a hashed set's
      // elements decodes them.
      if (omit.includes(s.name)) view.elements.set(s.name, { omitted: true });
      else if ('elements' in s) view.elements.set(s.name, s);
    }
    return view;
  }

  /** The plan committed: the table, its chains (flushed ones now empty) and its sets as it left them. */
  apply(plan: Plan): void {
    this.table = true;
    plan.chainWrites.forEach((c, name) => this.chains.set(name, c));
    for (const s of plan.setAdds) this.sets.set(s.name, s);
    for (const name of plan.setDeletes) this.sets.delete(name);
    if (plan.setAdds.length || plan.setDeletes.length) this.setsVersion++;
    for (const name of plan.chainFlushes) {
      const known = this.chains.get(name);
      if (known) this.chains.set(name, knownChain(known.chain, []));
    }
  }
}

/** The set without what the dump read of its elements (not read here: see DumpedElements). */
function declaration(s: NftSet): NftSet {
  const decl: Record<string, unknown> = {};
  for (const k of Object.keys(s)) if (k !== 'elements' && k !== 'elementKeys' && k !== 'elementHashes') decl[k] = (s as unknown as Record<string, unknown>)[k];
  return decl as unknown as NftSet;
}
