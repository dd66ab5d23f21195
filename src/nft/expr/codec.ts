// The contract every expression file implements: how its fields become libnftnl attributes and back.
// Each expression file mirrors one kernel expression (net/netfilter/nft_<name>.c): its fields are the
// kernel's attributes, nothing more, so decoding a dump loses nothing.

import type { WireExpr } from '../netlink/decode/wire-objects.js';
import type { WireWriter } from '../netlink/encode/wire-writer.js';

export interface ExprCodec<E extends { type: string }> {
  /** The type tag in TypeScript. */
  readonly type: E['type'];
  /** The kernel's (and libnftnl's) expression name. */
  readonly name: string;
  /** Writes the attributes (the list is already open). */
  encodeAttrs(w: WireWriter, e: E): void;
  /** Nested expressions (only dynset has them). */
  nested?(e: E): readonly { type: string }[];
  decode(x: WireExpr, decodeNested: (x: WireExpr) => { type: string }): E;
}

export function required<T>(value: T | undefined, expr: string, attr: string): T {
  if (value === undefined) throw new Error(`nftlink: ${expr} expression without its ${attr} attribute`);
  return value;
}

/** A kernel enum's names by number, for decoding (NFT_CT -> { 0: 'state', 1: 'direction', ... }). */
export function namesByNumber<K extends string>(table: Readonly<Record<K, number>>): Readonly<Record<number, K | undefined>> {
  return Object.fromEntries(Object.entries(table).map(([k, v]) => [v, k])) as Record<number, K>;
}

/**
 * The name of a required enum attribute. A number this version has no name for throws: decodeExpr
 * then keeps the expression raw (a newer kernel's key), instead of misreading it.
 */
export function requiredName<K extends string>(names: Readonly<Record<number, K | undefined>>, value: number | undefined, expr: string, attr: string): K {
  const n = required(value, expr, attr);
  const name = names[n];
  if (name === undefined) throw new Error(`nftlink: ${expr} ${attr} ${n} is not supported`);
  return name;
}
