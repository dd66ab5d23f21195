// Whether the elements contributed to a set are the ones a dump read, told without keying either
// side. A restart asks it of every shared set: keying both sides (a Map of each, then a compare)
// costs what writing the elements does. Here an element becomes one number (element-hash.ts: a
// 53-bit hash of the bytes the kernel holds for it, its key and data as the encoder writes them,
// so that equal values spelled differently hash the same, and its comment and timeout). Sorted and
// de-duplicated (a key two contributors both give is one kernel element), two lists hold the same
// elements when their numbers are equal. A dump can give the kernel's side without decoding its
// elements (DumpOptions.hashElements).
//
// Equal numbers for different contents would make a caller skip a needed write: two different
// elements must hash alike (odds about 2^-53 per pair that differs), or two elements of the same
// side must collide and the kernel lack one of them (about n^2 / 2^54 for the collision, at 120k
// elements under 1e-6, times the odds that the missing element is that one). A caller that must
// be exact keys the elements instead (ElementStore).

import { elementHash, hashableSet, putText, putValues, sortedDistinct, startElement } from '../element-hash.js';
import type { NftSet, SetElement } from '../objects.js';
import { isVerdict } from '../types/verdict.js';
import { valuesLength } from '../values.js';

export { sameElementHashes } from '../element-hash.js';

/**
 * The elements' hashes, sorted and de-duplicated. Undefined when the set or an element is not one
 * this covers (an interval or anonymous set, an element with a range end, values its types refuse:
 * the caller keys the elements instead, and reports those there).
 */
export function elementHashes(set: NftSet, lists: readonly (readonly SetElement[])[]): Float64Array | undefined {
  if (!hashableSet(set)) return undefined;
  let total = 0;
  for (const list of lists) total += list.length;
  const out = new Float64Array(total);
  const keyLength = valuesLength(set.key);
  const data = Array.isArray(set.data) ? set.data : undefined;
  const dataLength = data ? valuesLength(data) : 0;
  let n = 0;
  try {
    for (const list of lists) {
      for (const e of list) {
        if (e.keyEnd !== undefined) return undefined;
        startElement();
        putValues(set.key, e.key, keyLength);
        const v = e.value;
        if (v !== undefined) {
          if (isVerdict(v)) {
            putText(v.kind);
            putText('chain' in v ? v.chain : '');
          } else if (data) putValues(data, v, dataLength);
          else return undefined;
        }
        if (e.comment !== undefined) putText(e.comment);
        if (e.timeout !== undefined) putText(String(e.timeout));
        out[n++] = elementHash();
      }
    }
  } catch {
    return undefined;
  }
  return sortedDistinct(out, n);
}
