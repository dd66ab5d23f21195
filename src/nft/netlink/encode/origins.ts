// Where each wire message came from, so that the kernel's errors name the caller's operation and element.

import type { WireKind } from '../wire-format.js';

/**
 * Where each wire message came from: the caller's operation index, and for interval element
 * messages, wire element index -> caller element index (-1: nft's leading interval marker). Kept as
 * plain numbers, not an object per message: a cold-start part holds 20k messages while the next is
 * planned.
 */
export class WireOrigins {
  private ops: number[] = [];
  /** The kind of object each message carries: an operation's messages may differ (a rule's inline sets). */
  private kinds: WireKind[] = [];
  private readonly elementMaps = new Map<number, Int32Array>();
  /** For the messages of a rule's inline set: the index of the rule's expression that holds it. */
  private readonly inlineExprs = new Map<number, number>();
  /** For the later messages of a long element list: the caller's index of their first element. */
  private readonly elementBases = new Map<number, number>();

  get length(): number {
    return this.ops.length;
  }
  push(op: number, kind: WireKind, elements?: Int32Array, inlineExpr?: number): void {
    if (elements) this.elementMaps.set(this.ops.length, elements);
    if (inlineExpr !== undefined) this.inlineExprs.set(this.ops.length, inlineExpr);
    this.ops.push(op);
    this.kinds.push(kind);
  }
  /** The last message pushed holds the caller's elements from `first` on. */
  setElementBase(first: number): void {
    this.elementBases.set(this.ops.length - 1, first);
  }
  /** Forgets the messages from `length` on (an operation that failed to encode). */
  truncate(length: number): void {
    for (let i = length; i < this.ops.length; i++) {
      this.elementMaps.delete(i);
      this.inlineExprs.delete(i);
      this.elementBases.delete(i);
    }
    this.ops.length = length;
    this.kinds.length = length;
  }
  /** The caller's operation of wire message i. */
  op(i: number): number | undefined {
    return this.ops[i];
  }
  kind(i: number): WireKind | undefined {
    return this.kinds[i];
  }
  inlineExpr(i: number): number | undefined {
    return this.inlineExprs.get(i);
  }
  /** The caller's index of element `element` of wire message i. */
  callerElement(i: number, element: number): number {
    const map = this.elementMaps.get(i);
    if (map) return map[element] ?? -1;
    return (this.elementBases.get(i) ?? 0) + element;
  }
  copy(): WireOrigins {
    const c = new WireOrigins();
    c.ops = this.ops.slice();
    c.kinds = this.kinds.slice();
    for (const [k, v] of this.elementMaps) c.elementMaps.set(k, v);
    for (const [k, v] of this.inlineExprs) c.inlineExprs.set(k, v);
    for (const [k, v] of this.elementBases) c.elementBases.set(k, v);
    return c;
  }
}
