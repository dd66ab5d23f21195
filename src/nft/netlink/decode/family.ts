// The family of a decoded object, by the number the kernel gives it.

import { FAMILY_BY_NUMBER, type Family } from '../constants.js';
import type { WireObject } from './wire-objects.js';

export function familyOf(o: WireObject): Family {
  const f = FAMILY_BY_NUMBER[o.family];
  if (!f) throw new Error(`nftlink: unknown family ${o.family} in a dump`);
  return f;
}
