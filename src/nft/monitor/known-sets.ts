// The sets a monitor knows: an element event names its set only, and its keys are decoded with the
// set's types; a rule's lookup of an anonymous set gets that set (and its elements) inline. Seeded
// from a dump when the monitor starts, then kept by the set events themselves.

import type { NftSet, Ruleset } from '../objects.js';
import { setKey } from '../netlink/decode/ruleset-decoder.js';

export class KnownSets {
  /** family\0table\0name -> set, as the ruleset decoder keys them (attachInline reads this map). */
  readonly byKey = new Map<string, NftSet>();
  private readonly doomed: NftSet[] = [];

  get(family: string, table: string, name: string): NftSet | undefined {
    return this.byKey.get(setKey(family, table, name));
  }

  /**
   * Whether a set is anonymous. Kernel fact (6.18): a DELSET event carries only the set's table,
   * name and handle, without its flags; so the set as it was added (or dumped) counts, and nft's
   * name for anonymous sets, __set%d.
   */
  anonymous(s: NftSet): boolean {
    return s.anonymous === true || this.get(s.family, s.table, s.name)?.anonymous === true || /^__set\d+$/.test(s.name);
  }

  /**
   * The sets of a dump, with the anonymous ones its rules' lookups hold (so that their deletion is
   * known for what it is). The events that came since know better: known sets are kept.
   */
  seed(rs: Ruleset): void {
    const anonymous = rs.rules.flatMap((r) => r.exprs.flatMap((e) => (e.type === 'lookup' && e.inline ? [{ ...e.inline, family: r.family, table: r.table, name: e.set }] : [])));
    for (const s of [...rs.sets, ...anonymous]) {
      const k = setKey(s.family, s.table, s.name);
      if (!this.byKey.has(k)) this.byKey.set(k, { ...s, elements: s.anonymous ? (s.elements ?? []) : [] });
    }
  }

  /** Forgets every set (after a loss: sets may have come and gone unseen). */
  clear(): void {
    this.byKey.clear();
    this.doomed.length = 0;
  }

  /** NEWSET. A set keeps no elements here, except an anonymous one (for its rule's lookup). */
  added(s: NftSet): NftSet {
    const known: NftSet = { ...s, elements: [] };
    this.byKey.set(setKey(s.family, s.table, s.name), known);
    return known;
  }

  /** A DELSET event's set (table, name, handle) as it was known, with its types; else as the event gives it. */
  described(s: NftSet): NftSet {
    const known = this.get(s.family, s.table, s.name);
    if (!known || (s.handle !== undefined && known.handle !== undefined && known.handle !== s.handle)) return s;
    const { elements: _e, ...bare } = known;
    return bare;
  }

  /**
   * DELSET: forgotten once its transaction ends, since the events of its elements' deletion (a
   * table deleted with its sets) may come after it.
   */
  deleted(s: NftSet): void {
    this.doomed.push(s);
  }

  endTransaction(): void {
    for (const s of this.doomed) {
      const k = setKey(s.family, s.table, s.name);
      // Deleted and added again in one transaction: the new one stays.
      if (this.byKey.get(k)?.handle === s.handle || s.handle === undefined) this.byKey.delete(k);
    }
    this.doomed.length = 0;
  }
}
