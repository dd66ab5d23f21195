// The addon's dump buffers -> a Ruleset. Anonymous sets are attached to the lookups that use them,
// so a decoded rule renders (and re-encodes) with its inline set.

import type { Expr } from '../../expr/index.js';
import type { NftSet, Rule, Ruleset, SetElement } from '../../objects.js';
import { hashableSet } from '../../element-hash.js';
import { withToJSON } from '../../render/json.js';
import { SET_ATTR } from '../attrs.js';
import { ELEMENT_HASHES_ATTR, WireKind } from '../wire-format.js';
import { getBytes, getStr, getU32 } from './attr-values.js';
import { decodeChain } from './chain.js';
import { decodeFlowtable } from './flowtable.js';
import { decodeObject } from './object.js';
import { HashedSetElements, SetElementsDecoder } from './elements.js';
import { familyOf } from './family.js';
import { decodeRule } from './rule.js';
import { decodeSet } from './set.js';
import { decodeTable } from './table.js';
import { WireReader } from './wire-reader.js';

export interface RulesetDecodeOptions {
  /** Each plain set's element identities (NftSet.elementKeys). */
  elementKeys?: boolean;
  /** Sets whose elements are hashed and decoded only when read (DumpOptions.hashElements). */
  hashElements?: (set: NftSet) => boolean;
  /** The addon hashed the named sets' elements (a kind-8 op after each set's elements). */
  nativeElementHashes?: boolean;
  /** The dump left out the expressions of digested rules (DumpOptions.ruleExprs false). */
  ruleExprsOmitted?: boolean;
  /** The dump left out the rules (DumpOptions.chains false): anonymous sets stay among the sets. */
  anonymousSetsListed?: boolean;
}

/** How decoders key named sets: family, table and name. */
export const setKey = (family: string, table: string, name: string): string => `${family}\0${table}\0${name}`;

/**
 * Decodes dump buffers from the addon, one or several (the objects of one generation, in any split:
 * Nftables.dump decodes one while the kernel produces the next). Anonymous sets move into the
 * lookups that bind them when finished.
 */
export class RulesetDecoder {
  private readonly out: Ruleset = { generation: 0, tables: [], chains: [], sets: [], rules: [] };
  private readonly sets = new Map<string, NftSet>();
  // Requests name anonymous sets "__set%d" and tell them apart by transaction id; dumps by name.
  private readonly byId = new Map<number, NftSet>();
  /** The first buffer's: the generation the decoded ruleset is of. */
  private generation: number | undefined;
  /** Each set's elements, over all the objects that carry them (interval markers pair at the end). */
  private readonly elements = new Map<NftSet, SetElementsDecoder>();
  /** The sets whose elements are hashed, not decoded (DumpOptions.hashElements). */
  private readonly hashed = new Map<NftSet, HashedSetElements>();

  constructor(private readonly opts: RulesetDecodeOptions = {}) {}

  /** Adds one buffer's objects; returns the generation it was dumped at. */
  add(buf: Uint8Array): number {
    // Each object decoded as soon as it is read (WireReader.object).
    const reader = new WireReader(buf);
    const { genid, count } = reader.header();
    this.generation ??= genid;
    const { out, sets, byId } = this;
    for (let i = 0; i < count; i++) {
      const o = reader.object(i === count - 1);
      switch (o.kind) {
        case WireKind.Table:
          out.tables.push(decodeTable(o));
          break;
        case WireKind.Chain:
          out.chains.push(decodeChain(o));
          break;
        case WireKind.Set: {
          const s = decodeSet(o);
          sets.set(setKey(s.family, s.table, s.name), s);
          const id = getU32(o.attrs, SET_ATTR.ID);
          if (id !== undefined) byId.set(id, s);
          out.sets.push(s);
          break;
        }
        case WireKind.Elements: {
          const family = familyOf(o);
          const id = getU32(o.attrs, SET_ATTR.ID);
          const s = (id !== undefined ? byId.get(id) : undefined) ?? sets.get(setKey(family, getStr(o.attrs, SET_ATTR.TABLE) ?? '', getStr(o.attrs, SET_ATTR.NAME) ?? ''));
          if (!s) break; // elements of a set that was not dumped (the dump raced a delete)
          let hashed = this.hashed.get(s);
          if (!hashed && !this.elements.has(s) && hashableSet(s) && this.opts.hashElements?.(s)) this.hashed.set(s, (hashed = new HashedSetElements(s, this.opts.nativeElementHashes === true)));
          if (hashed) {
            hashed.add(o);
            break;
          }
          let elements = this.elements.get(s);
          if (!elements) {
            const keyed = this.opts.elementKeys === true && !s.anonymous && !(s.flags ?? []).includes('interval');
            elements = new SetElementsDecoder(s, (s.elements ??= []) as SetElement[], keyed ? ((s.elementKeys ??= []) as string[]) : undefined);
            this.elements.set(s, elements);
          }
          elements.add(o);
          break;
        }
        case WireKind.ElementHashes: {
          // Follows the set's elements; a set this decoder does not hash ignores it.
          const s = sets.get(setKey(familyOf(o), getStr(o.attrs, SET_ATTR.TABLE) ?? '', getStr(o.attrs, SET_ATTR.NAME) ?? ''));
          if (s) this.hashed.get(s)?.takeNative(getBytes(o.attrs, ELEMENT_HASHES_ATTR));
          break;
        }
        case WireKind.Rule:
          out.rules.push(decodeRule(o, this.opts.ruleExprsOmitted === true));
          break;
        case WireKind.Object: {
          const obj = decodeObject(o);
          if (obj) (out.objects ??= []).push(obj);
          break;
        }
        case WireKind.Flowtable:
          (out.flowtables ??= []).push(decodeFlowtable(o));
          break;
      }
    }
    return genid;
  }

  finish(): Ruleset {
    const { out, sets, byId } = this;
    out.generation = this.generation ?? 0;
    for (const elements of this.elements.values()) elements.finish();
    this.elements.clear();
    for (const [s, hashed] of this.hashed) this.finishHashed(s, hashed);
    this.hashed.clear();
    for (const r of out.rules) if (r.exprs.length) r.exprs = r.exprs.map((e) => attachInline(e, r, sets, byId));
    if (!this.opts.anonymousSetsListed) out.sets = out.sets.filter((s) => !s.anonymous);
    return withToJSON(out);
  }

  /** A set whose elements were hashed: decoded now if some element is not covered, else on first read. */
  private finishHashed(s: NftSet, hashed: HashedSetElements): void {
    const keyed = this.opts.elementKeys === true;
    const hashes = hashed.finish();
    if (hashes === undefined) {
      const keys = keyed ? [] : undefined;
      s.elements = hashed.decode(keys);
      if (keys) s.elementKeys = keys;
      return;
    }
    s.elementHashes = hashes;
    decodeOnRead(s, hashed, keyed);
  }
}

/**
 * A hashed set gets its hashes, and its elements and identities each decoded when first read: a
 * restart's slots layout reads its bucket maps' elements, and only a set that differs its identities.
 */
function decodeOnRead(s: NftSet, hashed: HashedSetElements, keyed: boolean): void {
  let elements: SetElement[] | undefined;
  let keys: string[] | undefined;
  const lazy = (name: 'elements' | 'elementKeys', get: () => unknown): void => {
    Object.defineProperty(s, name, {
      configurable: true,
      enumerable: true,
      get,
      set: (value: unknown) => Object.defineProperty(s, name, { value, writable: true, enumerable: true, configurable: true }),
    });
  };
  lazy('elements', () => (elements ??= hashed.decode()));
  if (keyed) lazy('elementKeys', () => (keys ??= hashed.identities()));
}

/** Decodes one dump buffer from the addon (RulesetDecoder for several). */
export function decodeRuleset(buf: Uint8Array, opts: RulesetDecodeOptions = {}): Ruleset {
  const d = new RulesetDecoder(opts);
  d.add(buf);
  return d.finish();
}

/** A lookup of an anonymous set, with that set attached as its `inline` set (as nft prints it). */
export function attachInline(e: Expr, r: Rule, sets: Map<string, NftSet>, byId: Map<number, NftSet>): Expr {
  if (e.type !== 'lookup') return e;
  const s = (e.setId !== undefined ? byId.get(e.setId) : undefined) ?? sets.get(setKey(r.family, r.table, e.set));
  if (!s || !s.anonymous) return e;
  const { setId: _id, ...rest } = e;
  return { ...rest, inline: s };
}
