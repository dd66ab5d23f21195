// A single-field interval set's elements, from nft's start and end markers: gathered over every
// object of a dump, paired when all are in. The kernel cuts an element dump into messages without
// regard to pairs (and the addon cuts its parts at message boundaries), so a range's start and its
// end marker may come in different parts: paired part by part, such a range read back as
// `start-255.255.255.255`.

import type { NftSet, SetElement } from '../../objects.js';
import type { Datatype } from '../../types/datatypes.js';
import { compareBytes, rangesFromIntervalElements } from '../../values.js';
import { ELEM_ATTR } from '../attrs.js';
import { NFT_SET_ELEM_F } from '../constants.js';
import { getBytes, getU32 } from './attr-values.js';
import { elementPayload } from './element-payload.js';
import type { WireElement } from './wire-objects.js';

/** Whether a set's elements are nft's interval markers (single-field interval sets). */
export function hasIntervalMarkers(s: NftSet): boolean {
  return s.key.length === 1 && (s.flags ?? []).includes('interval');
}

export class IntervalMarks {
  private readonly type: Datatype;
  private readonly marks: { key: Uint8Array; end: boolean; index: number }[] = [];
  /** The wire elements, by mark index: a range's value, timeout and comment are its start's. */
  private readonly elements: WireElement[] = [];

  constructor(private readonly set: NftSet) {
    this.type = set.key[0]!;
  }

  add(elems: readonly WireElement[]): void {
    for (const e of elems) {
      this.marks.push({
        key: getBytes(e.attrs, ELEM_ATTR.KEY) ?? new Uint8Array(this.type.size),
        end: ((getU32(e.attrs, ELEM_ATTR.FLAGS) ?? 0) & NFT_SET_ELEM_F.interval_end) !== 0,
        index: this.elements.length,
      });
      this.elements.push(e);
    }
  }

  /** The ranges, in key order. */
  finish(): SetElement[] {
    const type = this.type;
    return rangesFromIntervalElements(type, this.marks).map((r) => {
      const out: SetElement = { key: [type.toValue(r.from)] };
      if (compareBytes(r.from, r.to) !== 0) out.keyEnd = [type.toValue(r.to)];
      elementPayload(this.set, this.elements[r.index]!, out);
      return out;
    });
  }
}
