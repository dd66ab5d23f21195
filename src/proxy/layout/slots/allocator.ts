// Where every endpoint group lives in the slots layout: which bucket map, which member range, and
// which endpoint sits in which slot. An endpoint group is one service chain's endpoint list (the
// cluster or the local chain of a service port), named by its chain.
//
// Why it keeps state: a pure function of the model would renumber slots whenever an endpoint comes
// or goes, rewriting elements of unrelated endpoints. Keeping the assignment makes "one endpoint
// replaced" one element replaced, and a count change the tail of the range plus one rule. After a
// restart the assignment is adopted from the kernel (the rules' tags, or their numgen offsets,
// and the maps' elements: rule-tags.ts), so a restart with an unchanged model writes nothing.
//
// Why buckets of bounded size (docs/architecture.md#one-map-bound-by-many-rules): every element
// written into a map is checked against every rule bound to it, and every new binding walks every
// element. A table's sets are a linked list that every rule's lookup-by-name walks, so thousands of
// maps cost as much. The bucket size balances the two for the table's shape (bucketSizeFor).

import type { StateSize } from '../../model/state-size.js';
import { exactCopy } from '../../exact-array.js';

/** How an endpoint is named when endpoints are compared (and in an affinity group): `ip|port`. */
export const endpointKey = (ep: { ip: string; port: number }): string => `${ep.ip}|${ep.port}`;

/** What a slot holds: an endpoint's address and port (the model's endpoint object itself). */
export type SlotEndpoint = Readonly<{ ip: string; port: number }>;

const sameEndpoint = (a: SlotEndpoint, b: SlotEndpoint): boolean => a.ip === b.ip && a.port === b.port;

/** Each endpoint once by ip|port (its first occurrence), in order. */
function byKey(endpoints: readonly SlotEndpoint[]): Map<string, SlotEndpoint> {
  const out = new Map<string, SlotEndpoint>();
  for (const ep of endpoints) {
    const k = endpointKey(ep);
    if (!out.has(k)) out.set(k, ep);
  }
  return out;
}

/**
 * Each endpoint once, in order; a handful compared in place, without key strings or closures. The
 * result becomes a group's kept order, so it is exactly its size (see exactCopy).
 */
function distinct(endpoints: readonly SlotEndpoint[]): SlotEndpoint[] {
  if (endpoints.length > 16) return [...byKey(endpoints).values()];
  const out: SlotEndpoint[] = [];
  for (let i = 0; i < endpoints.length; i++) {
    const ep = endpoints[i]!;
    let seen = false;
    for (let j = 0; j < out.length && !seen; j++) seen = sameEndpoint(out[j]!, ep);
    if (!seen) out.push(ep);
  }
  return exactCopy(out);
}

/**
 * The group already holds exactly these endpoints, slot by slot, each once: a restart's every
 * group (adopted from the kernel) and a service change that left its endpoints alone. Compared in
 * place for the usual handful; larger groups take the general path.
 */
function unchanged(order: readonly (SlotEndpoint | undefined)[], endpoints: readonly SlotEndpoint[]): boolean {
  if (order.length !== endpoints.length || endpoints.length > 16) return false;
  for (let i = 0; i < endpoints.length; i++) {
    const o = order[i];
    if (o === undefined || !sameEndpoint(o, endpoints[i]!)) return false;
    for (let j = 0; j < i; j++) if (sameEndpoint(endpoints[j]!, endpoints[i]!)) return false;
  }
  return true;
}

/**
 * What place() does for a handful of endpoints (at most 16, each once), compared in place instead
 * of by `ip|port` strings (a scaled service's every churn): an endpoint keeps its slot while the
 * slot is inside the new range, the others fill the holes in their order.
 */
function reslotFew(order: readonly (SlotEndpoint | undefined)[], wanted: readonly SlotEndpoint[]): (SlotEndpoint | undefined)[] {
  const n = wanted.length;
  const next = new Array<SlotEndpoint | undefined>(n);
  let placed = 0; // bit j: wanted[j] has its slot
  for (let i = 0; i < Math.min(n, order.length); i++) {
    const old = order[i];
    if (old === undefined) continue;
    for (let j = 0; j < n; j++) {
      if (!(placed & (1 << j)) && sameEndpoint(wanted[j]!, old)) {
        next[i] = wanted[j];
        placed |= 1 << j;
        break;
      }
    }
  }
  let hole = 0;
  for (let j = 0; j < n; j++) {
    if (placed & (1 << j)) continue;
    while (next[hole] !== undefined) hole++;
    next[hole] = wanted[j];
  }
  return next;
}

/** Service chains per bucket map (the bound on bindings per map), at least and at most. */
export const MIN_CHAINS_PER_BUCKET = 64;
export const MAX_CHAINS_PER_BUCKET = 256;
/** Slots reserved for each member of a bucket: the most endpoints one service chain can have. */
export const SLOTS_PER_CHAIN = 1 << 16;

/**
 * The bucket size for a table written afresh with a state of `size`. Per table, the kernel spends
 * about (rules x maps / 2) on lookups by name (each service chain's rule finds its map in the
 * table's list of sets: nft_lookup_init) and (elements x chains per bucket) on checking each
 * bucket element against the map's bindings (nft_add_set_elem; Linux 6.18). With S service ports
 * of e endpoints in buckets of c chains that is S^2 a / 2c + S e c b, least at c = sqrt(S a / 2 e b);
 * perf at 100k x 5 puts a, a set passed, at about 26 ns and b, a binding checked, at about 10 ns:
 * c = sqrt(1.3 S / e). Either side of it the cost rises slowly (half or twice the size costs a
 * quarter more of the two), so it is rounded to the nearest power of two between the bounds: 64
 * (the size chosen at 10k x 5, and the floor, so that a table born small and grown large is no
 * worse off than before tables were sized) and 256. 10k x 5 and 30k x 5 take 64, 10k x 1 and
 * 100k x 5 128, 45k x 1 256; measured in docs/decisions.md.
 */
export function bucketSizeFor(size: StateSize): number {
  const perPort = size.servicePorts > 0 ? Math.max(1, size.endpoints / size.servicePorts) : 1;
  const best = Math.sqrt((1.3 * size.servicePorts) / perPort);
  const c = 2 ** Math.round(Math.log2(Math.max(1, best)));
  return Math.min(MAX_CHAINS_PER_BUCKET, Math.max(MIN_CHAINS_PER_BUCKET, c));
}

export interface Placement {
  bucket: number;
  /** The first slot: numgen's offset. */
  base: number;
  /** Endpoints in slot order: slot base + i holds order[i]. */
  order: readonly SlotEndpoint[];
}

interface Group {
  bucket: number;
  member: number;
  /**
   * The endpoint objects themselves, not `ip|port` strings: the model holds them anyway, and a
   * string per endpoint was most of the allocator's memory (5 MB at 10k services x 5).
   */
  order: (SlotEndpoint | undefined)[];
  /** Placed (or confirmed) since the last adopt(): groups nobody claims are released by sweep(). */
  claimed: boolean;
}

export class SlotAllocator {
  private readonly groups = new Map<string, Group>();
  /** Members in use, per bucket. */
  private readonly members: Set<number>[] = [];
  /** No bucket below this one has a free member (so a cold start places 30k chains in linear time). */
  private lowestFree = 0;
  /** Per bucket, no member below this one is free (so filling a bucket is linear, not quadratic). */
  private readonly lowestFreeMember: number[] = [];
  /**
   * Counts the changes to which buckets are in use (a bucket's first member taken, its last one
   * given back): while it stays, bucketsInUse() would answer the same. Every sync asks what is in
   * use (SlotsLayout.sharedSets), and a pass over hundreds of buckets, from caches gone cold
   * between syncs, was a tenth of a one-endpoint sync's planning.
   */
  bucketsVersion = 0;
  /** Service chains per bucket map: the table's (sizeFromTable, sizeForState), or the one given. */
  private chainsPerBucket: number;
  /** Adopted members from this on are no range of ours (rebuilt): the size given, else the largest size a table gets. */
  private readonly memberLimit: number;

  /** `fixedBucketSize`: service chains per bucket map, whatever the table; without it each table gets its own (sizeFromTable, sizeForState). */
  constructor(private readonly fixedBucketSize?: number) {
    this.chainsPerBucket = fixedBucketSize ?? MIN_CHAINS_PER_BUCKET;
    this.memberLimit = fixedBucketSize ?? MAX_CHAINS_PER_BUCKET;
  }

  /** Service chains per bucket map now. */
  get bucketSize(): number {
    return this.chainsPerBucket;
  }

  /** Forgets everything (before adopting the kernel's state). */
  reset(): void {
    this.groups.clear();
    this.members.length = 0;
    this.bucketsVersion++;
    this.lowestFree = 0;
    this.lowestFreeMember.length = 0;
  }

  /**
   * Records a group as the kernel holds it (slots whose element is missing are undefined). Keeps
   * `order` itself (a restart adopts 10k of them): the caller gives it up.
   */
  adopt(group: string, bucket: number, member: number, order: (SlotEndpoint | undefined)[]): void {
    const used = (this.members[bucket] ??= new Set());
    if (used.has(member) || member >= this.memberLimit) return; // two rules claiming one range: rebuild it
    if (used.size === 0) this.bucketsVersion++;
    used.add(member);
    this.groups.set(group, { bucket, member, order, claimed: false });
  }

  /**
   * After adopting: the table keeps the bucket size it was written with (the smallest power of two
   * above its highest member, at least the floor), so that a restart moves nothing even when the
   * state's shape has changed since. An empty table has the floor until sizeForState.
   */
  sizeFromTable(): void {
    if (this.fixedBucketSize !== undefined) return;
    let highest = -1;
    this.groups.forEach((g) => {
      if (g.member > highest) highest = g.member;
    });
    let c = MIN_CHAINS_PER_BUCKET;
    while (c <= highest) c *= 2;
    this.chainsPerBucket = c;
  }

  /** Before a full plan places anything: a table that holds no group (a cold start) gets the size for `size` (bucketSizeFor). */
  sizeForState(size: StateSize): void {
    if (this.fixedBucketSize !== undefined || this.groups.size > 0) return;
    this.chainsPerBucket = bucketSizeFor(size);
  }

  /**
   * Places a group's endpoints, moving as few as possible: an endpoint keeps its slot while the slot
   * is inside the new range, new endpoints fill the holes in slot order.
   */
  place(group: string, endpoints: readonly SlotEndpoint[]): Placement {
    if (endpoints.length > SLOTS_PER_CHAIN) {
      throw new RangeError(`${endpoints.length} endpoints: the slots layout takes at most ${SLOTS_PER_CHAIN} per service chain`);
    }
    let g = this.groups.get(group);
    if (!g) {
      const { bucket, member } = this.freeMember();
      g = { bucket, member, order: [], claimed: true };
      this.groups.set(group, g);
    }
    g.claimed = true;
    if (g.order.length === 0) {
      // A new group (every cold start, 10k times): the endpoints in their order.
      g.order = distinct(endpoints);
      return { bucket: g.bucket, base: g.member * SLOTS_PER_CHAIN, order: g.order as SlotEndpoint[] };
    }
    if (unchanged(g.order, endpoints)) {
      g.order = endpoints.slice();
      return { bucket: g.bucket, base: g.member * SLOTS_PER_CHAIN, order: g.order as SlotEndpoint[] };
    }
    if (endpoints.length <= 16 && g.order.length <= 16) {
      g.order = reslotFew(g.order, distinct(endpoints));
      return { bucket: g.bucket, base: g.member * SLOTS_PER_CHAIN, order: g.order as SlotEndpoint[] };
    }
    // By ip|port: the same endpoint (a new object after an EndpointSlice update, or one adopted from the kernel) keeps its slot.
    const wanted = byKey(endpoints);
    const n = wanted.size;
    const next: (SlotEndpoint | undefined)[] = new Array<SlotEndpoint | undefined>(n);
    const kept = new Set<string>();
    for (let i = 0; i < Math.min(n, g.order.length); i++) {
      const old = g.order[i];
      const k = old && endpointKey(old);
      if (k !== undefined && wanted.has(k) && !kept.has(k)) {
        next[i] = wanted.get(k);
        kept.add(k);
      }
    }
    let hole = 0;
    for (const [k, ep] of wanted) {
      if (kept.has(k)) continue;
      while (next[hole] !== undefined) hole++;
      next[hole] = ep;
      kept.add(k);
    }
    g.order = next;
    return { bucket: g.bucket, base: g.member * SLOTS_PER_CHAIN, order: next as SlotEndpoint[] };
  }

  release(group: string): void {
    const g = this.groups.get(group);
    if (!g) return;
    this.groups.delete(group);
    const used = this.members[g.bucket];
    if (used?.delete(g.member) && used.size === 0) this.bucketsVersion++;
    if (g.bucket < this.lowestFree) this.lowestFree = g.bucket;
    if (g.member < (this.lowestFreeMember[g.bucket] ?? 0)) this.lowestFreeMember[g.bucket] = g.member;
  }

  /** Releases adopted groups that no service claimed (their chains are stale). */
  sweep(): void {
    this.groups.forEach((g, name) => {
      if (!g.claimed) this.release(name);
    });
  }

  /**
   * After adopting a table whose buckets churn left sparse: gives up the groups of the buckets
   * above what the groups need (plus a quarter), so that the next placements pack them into the
   * free members below. Returns the groups given up (their chains get a new rule and elements).
   */
  compact(): string[] {
    const needed = Math.ceil(this.groups.size / this.chainsPerBucket);
    const used = this.bucketsInUse();
    if (used.length <= needed + Math.max(1, Math.ceil(needed / 4))) return [];
    const moved: string[] = [];
    for (const [name, g] of this.groups) if (g.bucket >= needed) moved.push(name);
    for (const name of moved) this.release(name);
    return moved;
  }

  /** Buckets with at least one member, ascending. */
  bucketsInUse(): number[] {
    const out: number[] = [];
    this.members.forEach((m, i) => {
      if (m && m.size > 0) out.push(i);
    });
    return out;
  }

  /** The lowest bucket with a free member: new groups fill the first buckets, so emptied high buckets can go. */
  private freeMember(): { bucket: number; member: number } {
    for (let bucket = this.lowestFree; ; bucket++) {
      const used = (this.members[bucket] ??= new Set());
      if (used.size >= this.chainsPerBucket) {
        if (bucket === this.lowestFree) this.lowestFree++;
        continue;
      }
      let member = this.lowestFreeMember[bucket] ?? 0;
      while (used.has(member)) member++;
      if (used.size === 0) this.bucketsVersion++;
      used.add(member);
      this.lowestFreeMember[bucket] = member + 1;
      return { bucket, member };
    }
  }
}
