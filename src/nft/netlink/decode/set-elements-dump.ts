// A one-set element dump (Nftables.dumpSetElements, the reconciler's resync), decoded against the
// set's declared types as its parts arrive: each part while the kernel produces the next.

import type { NftSet, SetElement } from '../../objects.js';
import { WireKind } from '../wire-format.js';
import { SetElementsDecoder } from './elements.js';
import { WireReader } from './wire-reader.js';

export class SetElementsDump {
  private readonly decoder: SetElementsDecoder;

  constructor(set: NftSet) {
    this.decoder = new SetElementsDecoder(set, []);
  }

  /** Decodes one part; returns the generation it was dumped at. */
  add(part: Uint8Array): number {
    const msg = new WireReader(part).message();
    for (const o of msg.objects) {
      if (o.kind === WireKind.Elements) this.decoder.add(o);
    }
    return msg.genid;
  }

  /** Every element: an interval set's ranges paired over all the parts. */
  finish(): SetElement[] {
    return this.decoder.finish();
  }
}
