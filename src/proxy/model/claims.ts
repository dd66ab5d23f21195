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
  const out = new Set<string>();
  for (const sp of ports) {
    const at = ` ${sp.protocol} ${sp.port}`;
    out.add(sp.clusterIP + at);
    for (const ip of sp.externalIPs) out.add(ip + at);
    for (const ip of sp.loadBalancerIPs) out.add(ip + at);
    if (sp.nodePort !== 0) out.add(nodePortKey(sp));
  }
  return [...out];
}

/** The claims of one IP family's services, kept across snapshots. */
export class AddressClaims {
  /** Claim key -> the services claiming it (almost always one). */
  private readonly claimants = new Map<string, Set<string>>();
  /** Service key -> its rank and claim keys. */
  private readonly services = new Map<string, { rank: ClaimRank; keys: string[] }>();

  /**
   * Replaces a service's claims (none when it is gone or has no ports of this family). Returns the
   * other services that won or lost a claim by it: their ports must be built again.
   */
  set(rank: ClaimRank, ports: readonly ServicePort[]): ReadonlySet<string> {
    const old = this.services.get(rank.serviceKey);
    const keys = claimKeys(ports);
    // Most rebuilds are endpoint changes: the same claims, nothing to move.
    if (old ? old.rank.createdAt === rank.createdAt && sameList(old.keys, keys) : keys.length === 0) return NONE;
    const affected = new Set<string>();
    const touched = new Set([...(old?.keys ?? []), ...keys]);
    const winnersBefore = new Map<string, string | undefined>();
    for (const key of touched) winnersBefore.set(key, this.winner(key));
    for (const key of old?.keys ?? []) {
      const set = this.claimants.get(key)!;
      set.delete(rank.serviceKey);
      if (set.size === 0) this.claimants.delete(key);
    }
    if (keys.length === 0) this.services.delete(rank.serviceKey);
    else this.services.set(rank.serviceKey, { rank, keys });
    for (const key of keys) {
      let set = this.claimants.get(key);
      if (!set) this.claimants.set(key, (set = new Set()));
      set.add(rank.serviceKey);
    }
    for (const key of touched) {
      const was = winnersBefore.get(key);
      const now = this.winner(key);
      if (was === now) continue;
      if (was !== undefined && was !== rank.serviceKey) affected.add(was);
      if (now !== undefined && now !== rank.serviceKey) affected.add(now);
    }
    return affected;
  }

  /**
   * The service's ports with what it lost taken out: a port whose ClusterIP another service holds is
   * left out; an external or load balancer IP another holds is dropped from the port, and so is a
   * NodePort (the port then has none, as a LoadBalancer without allocated NodePorts).
   */
  resolve(serviceKey: string, ports: readonly ServicePort[]): { ports: ServicePort[]; lost: LostClaim[] } {
    const lost: LostClaim[] = [];
    const out: ServicePort[] = [];
    for (const sp of ports) {
      const at = ` ${sp.protocol} ${sp.port}`;
      const holder = (address: string): string | undefined => {
        const w = this.winner(address + at);
        return w === undefined || w === serviceKey ? undefined : w;
      };
      const lose = (field: string, address: string, winner: string): void => {
        lost.push({ field, address, protocol: sp.protocol, port: sp.port, winner });
      };
      const clusterHolder = holder(sp.clusterIP);
      if (clusterHolder !== undefined) {
        lose('spec.clusterIP', sp.clusterIP, clusterHolder);
        continue;
      }
      const keep = (list: readonly string[], field: string): readonly string[] => {
        if (list.length === 0) return list;
        const kept = list.filter((ip) => {
          const w = holder(ip);
          if (w !== undefined) lose(field, ip, w);
          return w === undefined;
        });
        return kept.length === list.length ? list : kept;
      };
      const externalIPs = keep(sp.externalIPs, 'spec.externalIPs');
      const loadBalancerIPs = keep(sp.loadBalancerIPs, 'status.loadBalancer.ingress');
      const nodePortWinner = sp.nodePort === 0 ? undefined : this.winner(nodePortKey(sp));
      const nodePortLost = nodePortWinner !== undefined && nodePortWinner !== serviceKey;
      if (nodePortLost) lost.push({ field: 'spec.ports[].nodePort', address: 'every node address', protocol: sp.protocol, port: sp.nodePort, winner: nodePortWinner });
      const unchanged = externalIPs === sp.externalIPs && loadBalancerIPs === sp.loadBalancerIPs && !nodePortLost;
      out.push(unchanged ? sp : { ...sp, externalIPs, loadBalancerIPs, nodePort: nodePortLost ? 0 : sp.nodePort });
    }
    return { ports: out, lost };
  }

  private winner(key: string): string | undefined {
    const set = this.claimants.get(key);
    if (!set) return undefined;
    if (set.size === 1) return set.values().next().value;
    let best: ClaimRank | undefined;
    for (const s of set) {
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
