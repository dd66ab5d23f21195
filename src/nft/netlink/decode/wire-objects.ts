// What the compact format's reader (wire-reader.ts) gives back: objects with their attributes as
// places in the reply buffer (wire-attrs.ts), expressions decoded, elements read on demand.

import type { WireKind } from '../wire-format.js';
import type { WireAttrs } from './wire-attrs.js';

export type { WireAttrs } from './wire-attrs.js';

export interface WireExpr {
  name: string;
  attrs: WireAttrs;
  exprs: WireExpr[];
}

export interface WireElement {
  attrs: WireAttrs;
  exprs: WireExpr[];
}

export interface WireObject {
  msgType: number;
  kind: WireKind;
  nlFlags: number;
  family: number;
  attrs: WireAttrs;
  exprs: WireExpr[];
  /** Elements (kind 4): decoded on demand; a dump of 100,000 elements should not build them twice. */
  readonly elementCount: number;
  readElements(): WireElement[];
  /** The fast path: visits each element's attributes in place (see ElementVisitor). */
  visitElements(visit: ElementVisitor): void;
}

/**
 * Called once per element with the byte offset and length of each attribute id (offset -1: absent)
 * inside `buf`. The arrays are reused between calls. Elements with nested expressions come with
 * them decoded.
 */
export type ElementVisitor = (buf: Uint8Array, offsets: Int32Array, lengths: Int32Array, exprs: WireExpr[]) => void;

export interface WireMessage {
  flags: number;
  genid: number;
  objects: WireObject[];
}
