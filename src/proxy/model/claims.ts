// Which Service gets an address and port that several claim. Every ClusterIP, external IP and load
// balancer IP of a service port becomes one key of the layouts' dispatch map ("address . protocol .
// port"), and every NodePort one of the NodePort map ("protocol . port"), so two services claiming
// the same one cannot both be programmed. The API server never
// gives two Services one ClusterIP or NodePort, but manifest files can, and external IPs are not
// checked by it at all. The winner must not depend on history (which was read first: a restart reads in another
// order than the objects were created): it is the oldest Service by metadata.creationTimestamp,
// then the first by namespace/name, as kube-proxy's and the API server's notion of "who was there
// first" would have it. A Service without a creationTimestamp (hand-written manifests) counts as
// newer than any with one.

import { exactCopy } from '../exact-array.js';
import type { ServicePort } from './types.js';

/** What orders Services for a claim: older first, then by "namespace/name". */
export interface ClaimRank {
  /** metadata.creationTimestamp in ms since the epoch; Infinity when absent or unreadable. */
  createdAt: number;
  /** "namespace/name". */
  serviceKey: string;
}

/** A claim this service lost, with the service that holds it. */
export interface LostClaim {
  field: string;
  address: string;
  protocol: string;
  port: number;
  winner: string;
}

/** metadata.creationTimestamp as ms since the epoch, Infinity when absent or not a date. */
export function creationTime(text: string | undefined): number {
  const ms = text === undefined ? NaN : Date.parse(text);
  return Number.isFinite(ms) ? ms : Infinity;
}

function before(a: ClaimRank, b: ClaimRank): boolean {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt;
  return a.serviceKey < b.serviceKey;
}

/** A NodePort is every node address's: its key stands for all of them. */
function nodePortKey(sp: ServicePort): string {
  return `nodes ${sp.protocol} ${sp.nodePort}`;
}

/** "address protocol port" of every address a service's ports claim (and its NodePort), each once. */
function claimKeys(ports: readonly ServicePort[]): string[] {
  const out: string[] = [];
  for (const sp of ports) {
    const at = ` ${sp.protocol} ${sp.port}`;
    out.push(sp.clusterIP + at);
    for (const ip of sp.externalIPs) out.push(ip + at);
    for (const ip of sp.loadBalancerIPs) out.push(ip + at);
    if (sp.nodePort !== 0) out.push(nodePortKey(sp));
  }
  // A service may claim one key twice (an external IP equal to its ClusterIP): once is enough.
  return out.length === 1 ? out : [...new Set(out)];
}

/** The claims of one IP family's services, kept across snapshots. */
export class AddressClaims {
  /**
   * Claim key -> the service claiming it, or the services when several do. Almost every key has
   * one claimant: a string then, no Set (at 10k services a Set per key cost more than the rest of
   * the claims together).
   */
  private readonly claimants = new Map<string, string | Set<string>>();
  /** Service key -> its rank and claim keys. */
  private readonly services = new Map<string, { rank: ClaimRank; keys: string[] }>();

  /** Whether the service claims anything (of this family). */
  holdsAny(serviceKey: string): boolean {
    return this.services.has(serviceKey);
  }

  /**
   * Replaces a service's claims (none when it is gone or has no ports of this family). Returns the
   * other services that won or lost a claim by it: their ports must be built again.
   */
  set(rank: ClaimRank, ports: readonly ServicePort[]): ReadonlySet<string> {
    const serviceKey = rank.serviceKey;
    const old = this.services.get(serviceKey);
    const keys = claimKeys(ports);
    // Most rebuilds are endpoint changes: the same claims, nothing to move.
    if (old ? old.rank.createdAt === rank.createdAt && sameList(old.keys, keys) : keys.length === 0) return NONE;
    let affected: Set<string> | undefined;
    const moved = (was: string | undefined, now: string | undefined): void => {
      if (was === now) return;
      affected ??= new Set();
      if (was !== undefined && was !== serviceKey) affected.add(was);
      if (now !== undefined && now !== serviceKey) affected.add(now);
    };
    if (old) {
      for (const key of old.keys) {
        const held = this.claimants.get(key)!;
        if (typeof held === 'string') {
          this.claimants.delete(key);
          continue;
        }
        const was = this.winner(key);
        held.delete(serviceKey);
        if (held.size === 1) this.claimants.set(key, held.values().next().value!);
        moved(was, this.winner(key));
      }
    }
    if (keys.length === 0) this.services.delete(serviceKey);
    // Kept as long as the service is: exactly its size (see exactCopy).
    else this.services.set(serviceKey, { rank, keys: exactCopy(keys) });
    for (const key of keys) {
      const held = this.claimants.get(key);
      if (held === undefined) {
        this.claimants.set(key, serviceKey);
        continue;
      }
      const was = this.winner(key);
      if (typeof held === 'string') this.claimants.set(key, new Set([held, serviceKey]));
      else held.add(serviceKey);
      moved(was, this.winner(key));
    }
    return affected ?? NONE;
  }

  /**
   * The service's ports with what it lost taken out: a port whose ClusterIP another service holds is
   * left out; an external or load balancer IP another holds is dropped from the port, and so is a
   * NodePort (the port then has none, as a LoadBalancer without allocated NodePorts).
   */
  resolve(serviceKey: string, ports: readonly ServicePort[]): { ports: readonly ServicePort[]; lost: LostClaim[] } {
    if (this.holdsAll(serviceKey, ports)) return { ports, lost: [] };
    let lost: LostClaim[] | undefined;
    let out: ServicePort[] | undefined;
    ports.forEach((sp, i) => {
      const at = ` ${sp.protocol} ${sp.port}`;
      const holder = (key: string): string | undefined => {
        const w = this.winner(key);
        return w === serviceKey ? undefined : w;
      };
      const lose = (field: string, address: string, winner: string, port = sp.port): void => {
        (lost ??= []).push({ field, address, protocol: sp.protocol, port, winner });
      };
      const keep = (list: readonly string[], field: string): readonly string[] => {
        if (list.length === 0) return list;
        const kept = list.filter((ip) => {
          const w = holder(ip + at);
          if (w !== undefined) lose(field, ip, w);
          return w === undefined;
        });
        return kept.length === list.length ? list : kept;
      };
      const clusterHolder = holder(sp.clusterIP + at);
      let now: ServicePort | undefined = sp;
      if (clusterHolder !== undefined) {
        lose('spec.clusterIP', sp.clusterIP, clusterHolder);
        now = undefined;
      } else {
        const externalIPs = keep(sp.externalIPs, 'spec.externalIPs');
        const loadBalancerIPs = keep(sp.loadBalancerIPs, 'status.loadBalancer.ingress');
        const nodePortHolder = sp.nodePort === 0 ? undefined : holder(nodePortKey(sp));
        if (nodePortHolder !== undefined) lose('spec.ports[].nodePort', 'every node address', nodePortHolder, sp.nodePort);
        if (externalIPs !== sp.externalIPs || loadBalancerIPs !== sp.loadBalancerIPs || nodePortHolder !== undefined) {
          now = { ...sp, externalIPs, loadBalancerIPs, nodePort: nodePortHolder !== undefined ? 0 : sp.nodePort };
        }
      }
      // The list is copied only once a port differs: almost always, the ports are returned as they came.
      if (now !== sp && !out) out = ports.slice(0, i);
      if (out && now) out.push(now);
    });
    return { ports: out ?? ports, lost: lost ?? [] };
  }

  /** Whether the service alone claims every key of its ports (all but always): nothing to resolve. */
  private holdsAll(serviceKey: string, ports: readonly ServicePort[]): boolean {
    for (const sp of ports) {
      const at = ` ${sp.protocol} ${sp.port}`;
      if (this.claimants.get(sp.clusterIP + at) !== serviceKey) return false;
      for (const ip of sp.externalIPs) if (this.claimants.get(ip + at) !== serviceKey) return false;
      for (const ip of sp.loadBalancerIPs) if (this.claimants.get(ip + at) !== serviceKey) return false;
      if (sp.nodePort !== 0 && this.claimants.get(nodePortKey(sp)) !== serviceKey) return false;
    }
    return true;
  }

  private winner(key: string): string | undefined {
    const held = this.claimants.get(key);
    if (held === undefined || typeof held === 'string') return held;
    let best: ClaimRank | undefined;
    for (const s of held) {
      const rank = this.services.get(s)!.rank;
      if (!best || before(rank, best)) best = rank;
    }
    return best?.serviceKey;
  }
}

const NONE: ReadonlySet<string> = new Set();

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The one line a lost claim is reported with: the field, the address and port, and who holds it. */
export function lostClaimReason(c: LostClaim): string {
  const what = c.field === 'spec.clusterIP' ? 'this port is left out' : 'left out of this port';
  return `${c.field}: ${c.address} port ${c.port}/${c.protocol} is also claimed by Service ${c.winner}, which is older (or as old and first by namespace/name): ${what}`;
}
