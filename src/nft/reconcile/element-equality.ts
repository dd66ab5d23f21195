// Two elements of one set carry the same payload when what the kernel would hold beside their key
// is the same: map data (values, or a verdict), comment and timeout. Compared value by value, with
// no text built: the sync engine asks this of every element a changed service port keeps. A
// different spelling of the same value ("80" for 80) counts as different, which only costs the
// caller the slower path (ElementStore compares the encoded payloads).

import type { SetElement } from '../objects.js';
import type { Scalar } from '../types/datatypes.js';
import { isVerdict } from '../types/verdict.js';

function sameScalars(a: readonly Scalar[] | undefined, b: readonly Scalar[] | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Same data, comment, timeout and interval end (the key is the caller's to compare). */
export function samePayload(a: SetElement, b: SetElement): boolean {
  if (a.comment !== b.comment || a.timeout !== b.timeout || !sameScalars(a.keyEnd, b.keyEnd)) return false;
  const x = a.value;
  const y = b.value;
  if (x === y) return true;
  if (x === undefined || y === undefined) return false;
  if (!isVerdict(x) || !isVerdict(y)) return !isVerdict(x) && !isVerdict(y) && sameScalars(x, y);
  return x.kind === y.kind && ('chain' in x ? x.chain : undefined) === ('chain' in y ? y.chain : undefined);
}

/** The same key values and the same payload: the same element, told without encoding anything. */
export function sameElement(a: SetElement, b: SetElement): boolean {
  return sameScalars(a.key, b.key) && samePayload(a, b);
}
