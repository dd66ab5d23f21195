// Room in a Map's table for the keys that will come and go, made once, when the Map is built.
//
// A JavaScript Map in V8 (an ordered hash table; V8 13, Node 24) keeps the slot of a deleted entry
// until its table is full, then rehashes: at the same capacity when at least half of the slots hold
// deleted entries, at twice the capacity otherwise. A Map filled by insertions alone holds more
// than half its capacity live (the table doubles when it fills), so the first rehash under churn,
// keys deleted and others added one by one as endpoints are replaced, doubles it; from then on
// its live keys fill less than half the table and it rehashes in place. The doubling comes minutes
// into a long-running proxy (the hairpin set's table, 50k keys at 10k services: 1.8 -> 3.7 MB).
// Doubling the table once the Map is built (the proxy: after a full sync) takes that memory at the
// start instead of minutes into the churn: the RSS no longer climbs by it later.

/** Tables smaller than this are left to grow when they do: too small to matter. */
const MAP_ROOM_MIN_SIZE = 256;

/** Keys for the padding (element keys are value texts; one that is already there is skipped). */
const PAD_PREFIX = '\u0000room:';

/**
 * Grows the table of `map`, built by insertions, to twice its capacity: enough keys are added to
 * make it rehash while more than half of it is live, and deleted again. The contents and their
 * order are unchanged. Maps under MAP_ROOM_MIN_SIZE keys are left alone.
 */
export function reserveRehashRoom<V>(map: Map<string, V>, pad: V): void {
  const size = map.size;
  if (size < MAP_ROOM_MIN_SIZE) return;
  // The capacity of a table filled by insertions: the smallest power of two that holds them.
  let capacity = 4;
  while (capacity < size) capacity *= 2;
  const extra = capacity - size + 1;
  const added: string[] = [];
  for (let i = 0; added.length < extra; i++) {
    const k = PAD_PREFIX + i;
    if (map.has(k)) continue;
    map.set(k, pad);
    added.push(k);
  }
  for (const k of added) map.delete(k);
}
