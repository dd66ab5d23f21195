// ClientIP affinity in the slots layout, in O(1) rules per service port and no chain or set per
// endpoint. A service chain with affinity holds two rules:
//
//   meta l4proto tcp dnat ip addr . port to ip saddr . 7 map @pins-0                   (pinned: go there)
//   meta l4proto tcp dnat ip addr . port to numgen random mod 3 offset 65536 map @endpoints-0  (else pick)
//
// and every new connection DNATed to one of its endpoints passes, after the DNAT, through the
// service port's `pin-` chain, which (re)writes the pin and slides its timeout:
//
//   nat-postrouting / filter-input:  ct status dnat ip daddr . meta l4proto . th dport vmap @affinity-endpoints
//   pin-HASH-ns/svc/tcp/port:        update @pins-0 { ip saddr . 7 timeout 3h : ip daddr . th dport }
//
// `7` is the service port's id, an immediate inside the concatenated key (nft's grammar cannot
// write that; netlink can). Why this shape: nft 1.0.6's `nft list ruleset` aborts on a map lookup's
// result feeding a dynset or a second lookup (netlink_delinearize.c, a register of length 0 parsed
// as a concatenation), which rules out pinning a slot or writing the pin from the pick itself; the
// pin is written from the packet after the DNAT instead, from fields nft prints.
//
// A pin whose endpoint is gone would send the client to a dead address: the sync engine deletes
// those pins right after the commit that removed the endpoint (stalePins()), and the pins of a
// service port that is gone with them. Ids are never reused, so a pin missed either way can only
// expire.
//
// Where this cannot apply, the service port keeps kube-proxy's per-endpoint affinity chains (the
// slots layout still picks for the rest): Local traffic policies (the local chain must not follow
// a pin to a remote endpoint, and the pin chain cannot tell which chain picked); and an endpoint
// that another affinity service port already pins to (the dispatch map has one chain per endpoint;
// a key with the address the client used would tell them apart, but nft 1.0.6 cannot list `ct
// original ip daddr` or `ct original proto-dst` inside a concatenation either).

import { types, type NftSet, type SetElement } from '../../../nft/index.js';
import type { ServiceEndpoint, ServicePort } from '../../model/types.js';
import { familyParts } from '../family.js';
import { l4proto } from '../kube-proxy/service.js';
import { pins } from '../names.js';
import { endpointKey } from './allocator.js';
import { nftFamily, type LayoutConfig } from '../types.js';

const { inet_service, integer } = types;

/** The datatype of a service port's id in a pin's key (nft shows it as a mark). */
export const PIN_ID = integer(4, 'host');

/**
 * Service chains whose pins share one pins map: 64, whatever the bucket size (allocator.ts), as the
 * kernel caps a map at 65,535 pins. The first 64 members of a bucket pin in the bucket's own
 * number's map (all there were before buckets grew past 64, so older tables keep their maps), the
 * k-th next 64 in the map numbered bucket + k x PINS_MAP_STRIDE.
 */
const CHAINS_PER_PINS_MAP = 64;
const PINS_MAP_STRIDE = 1_000_000;

/** The pins map (its number: names.ts `pins.map`) of the service chain at `member` of `bucket`. */
export function pinsMapOf(bucket: number, member: number): number {
  return bucket + PINS_MAP_STRIDE * Math.floor(member / CHAINS_PER_PINS_MAP);
}

const dispatchKeys = (proto: string, eps: readonly ServiceEndpoint[]): string[] => eps.map((ep) => `${ep.ip}|${proto}|${ep.port}`);

interface Group {
  id: number;
  /** Its pins map (pinsMapOf). */
  bucket: number;
  /** ip|port of its endpoints */
  endpoints: Set<string>;
  /** the dispatch keys it owns */
  claims: Set<string>;
}

/** A pins map and which of its pins are stale: owned by `id` and pointing outside `live`. */
export interface PinSweep {
  set: NftSet;
  stale(e: SetElement): boolean;
}

export class AffinityPins {
  private readonly groups = new Map<string, Group>();
  /** dispatch key (ip|proto|port) -> the chain that pins it */
  private readonly claims = new Map<string, string>();
  private nextId = 1;
  /** Counts the changes to the groups (placed, moved, released, adopted): while it stays, bucketsInUse() answers the same. */
  groupsVersion = 0;
  /** Groups that lost endpoints since the last sweep: chain -> the endpoints they had. */
  private readonly shrunk = new Map<string, Set<string>>();
  /** Ids given up since the last sweep (service port gone, or moved), per bucket. */
  private readonly abandoned = new Map<number, Set<number>>();

  /** Whether a service port's chain can pin in O(1) rules (see the header). */
  eligible(sp: ServicePort, chain: string, eps: readonly ServiceEndpoint[]): boolean {
    if (sp.internalTrafficPolicy === 'Local' || (sp.external && sp.externalTrafficPolicy === 'Local')) return false;
    return dispatchKeys(l4proto(sp), eps).every((k) => {
      const owner = this.claims.get(k);
      return owner === undefined || owner === chain;
    });
  }

  /** The chain's id, kept (or first given) across syncs, pinning in map `bucket` (pinsMapOf); records its endpoints and dispatch keys. */
  place(sp: ServicePort, chain: string, bucket: number, eps: readonly ServiceEndpoint[]): number {
    const keys = new Set(eps.map(endpointKey));
    const claims = new Set(dispatchKeys(l4proto(sp), eps));
    let g = this.groups.get(chain);
    if (g && g.bucket !== bucket) {
      this.release(chain);
      g = undefined;
    }
    if (!g) {
      g = { id: this.nextId++, bucket, endpoints: new Set(), claims: new Set() };
      this.groups.set(chain, g);
      this.groupsVersion++;
    }
    if ([...g.endpoints].some((k) => !keys.has(k))) this.shrunk.set(chain, g.endpoints);
    for (const k of g.claims) if (!claims.has(k) && this.claims.get(k) === chain) this.claims.delete(k);
    for (const k of claims) this.claims.set(k, chain);
    g.endpoints = keys;
    g.claims = claims;
    return g.id;
  }

  release(chain: string): void {
    const g = this.groups.get(chain);
    if (!g) return;
    for (const k of g.claims) if (this.claims.get(k) === chain) this.claims.delete(k);
    this.groups.delete(chain);
    this.groupsVersion++;
    this.shrunk.delete(chain);
    if (!this.abandoned.has(g.bucket)) this.abandoned.set(g.bucket, new Set());
    this.abandoned.get(g.bucket)!.add(g.id);
  }

  /**
   * Takes over an id found in the kernel, with the endpoints its slots hold: a restart keeps every
   * pin valid, and still finds the pins of an endpoint removed while it was down.
   */
  adopt(chain: string, id: number, bucket: number, endpoints: readonly (string | undefined)[]): void {
    this.groups.set(chain, { id, bucket, endpoints: new Set(endpoints.filter((k): k is string => k !== undefined)), claims: new Set() });
    this.groupsVersion++;
    if (id >= this.nextId) this.nextId = id + 1;
  }

  /** After adopt(): a group nobody placed again is gone. */
  sweepUnplaced(placed: ReadonlySet<string>): void {
    for (const chain of [...this.groups.keys()]) if (!placed.has(chain)) this.release(chain);
  }

  bucketsInUse(): Set<number> {
    return new Set([...this.groups.values()].map((g) => g.bucket));
  }

  /**
   * The pins to delete, per pins map still in use: those pointing at endpoints their service port
   * lost, and those of ids given up. Clears both lists.
   */
  stalePins(cfg: LayoutConfig): PinSweep[] {
    const live = new Map<number, Map<number, Set<string>>>();
    for (const [chain] of this.shrunk) {
      const g = this.groups.get(chain);
      if (!g) continue;
      if (!live.has(g.bucket)) live.set(g.bucket, new Map());
      live.get(g.bucket)!.set(g.id, g.endpoints);
    }
    const inUse = this.bucketsInUse();
    const buckets = [...new Set([...live.keys(), ...this.abandoned.keys()])].filter((b) => inUse.has(b));
    const gone = new Map(this.abandoned);
    this.shrunk.clear();
    this.abandoned.clear();
    return buckets.map((bucket) => ({
      set: pinsMap(cfg, bucket),
      stale: (e) => {
        const [, id] = e.key as [string, number];
        if (gone.get(bucket)?.has(id)) return true;
        const keep = live.get(bucket)?.get(id);
        const v = e.value as [string, number] | undefined;
        return keep !== undefined && Array.isArray(v) && !keep.has(`${v[0]}|${v[1]}`);
      },
    }));
  }
}

/** The pins map numbered `bucket` (pinsMapOf), its declaration. */
export function pinsMap(cfg: LayoutConfig, bucket: number): NftSet {
  const { addr, natFamily } = familyParts(cfg.family);
  return {
    family: nftFamily(cfg.family),
    table: cfg.table,
    name: pins.map(bucket),
    key: [addr, PIN_ID],
    data: [addr, inet_service],
    flags: ['dynamic', 'timeout'],
    typeof: {
      key: [{ expr: 'payload', protocol: natFamily, field: 'saddr' }, { expr: 'meta', key: 'mark' }],
      data: [{ expr: 'payload', protocol: natFamily, field: 'daddr' }, { expr: 'payload', protocol: 'tcp', field: 'dport' }],
    },
    comment: pins.mapComment,
  };
}
