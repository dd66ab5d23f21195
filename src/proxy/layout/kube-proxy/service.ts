// The objects of one service port in kube-proxy's nftables layout (Kubernetes 1.37 shapes): the
// service (Cluster policy), local (Local policy), external and firewall chains, the affinity
// endpoint chains, and the elements it adds to the shared maps.

import { fibType, meta, numgen, rule, type Chain, type NftSet, type Rule, type RuleBuilder, type SetElement, type Verdict } from '../../../nft/index.js';
import { cidrContains } from '../../model/cidr.js';
import { categorizeEndpoints, usesClusterEndpoints, usesLocalEndpoints } from '../../model/categorize.js';
import type { ServiceEndpoint, ServicePort } from '../../model/types.js';
import { familyParts } from '../family.js';
import { chainName, CHAIN, COMMENT, elementComment, endpointChainBase, serviceChainBase, SET } from '../names.js';
import { nftFamily, type LayoutConfig, type ServiceObjects } from '../types.js';
import { markForMasquerade } from './base.js';
import { endpointDnat } from './endpoint-dnat.js';
import { oneOrSet } from './one-or-set.js';
import { matchLocalTraffic } from '../local-traffic.js';
import { exactCopy } from '../../exact-array.js';

/** The service port's protocol as nft spells it. */
export const l4proto = (sp: ServicePort): 'tcp' | 'udp' | 'sctp' => sp.protocol.toLowerCase() as 'tcp' | 'udp' | 'sctp';

const NO_SETS: readonly NftSet[] = Object.freeze([]);

/** What a picker may add besides its chain's rules. */
export interface PickerContext {
  /** An element in one of the layout's shared sets or maps. */
  put(set: string, e: SetElement): void;
  /** A chain of this service port (named by the picker), with its rules. */
  addChain(name: string, rules: RuleBuilder[]): void;
}

/**
 * A picker's answer that the service port gets no chain of its own: what went to it goes to
 * `sharedChain` instead. Only for a port reached through its ClusterIP alone (a shared chain
 * finds the endpoints by the packet's destination address).
 */
export interface SharedChain {
  sharedChain: string;
}

/**
 * Another way to pick an endpoint in a service's cluster or local chain (the slots layout's). It
 * returns the chain's rules, or a chain shared with other service ports to send its traffic to
 * instead; undefined keeps kube-proxy's way for this chain. `chain()` names the chain: its name is
 * a hash (names.ts), made only when asked for, so a port whose traffic goes to a shared chain costs none.
 */
export type EndpointPicker = (sp: ServicePort, chain: () => string, endpoints: readonly ServiceEndpoint[], ctx: PickerContext) => RuleBuilder[] | SharedChain | undefined;

/** The chains of a service port that pick an endpoint. */
type PickingChain = 'cluster' | 'local';

export function serviceObjects(cfg: LayoutConfig, sp: ServicePort, endpoints: readonly ServiceEndpoint[], picker?: EndpointPicker): ServiceObjects {
  const family = nftFamily(cfg.family);
  const table = cfg.table;
  const { l3, addr, natFamily } = familyParts(cfg.family);
  const p = l4proto(sp);
  const r = (): RuleBuilder => rule(family);
  const cat = categorizeEndpoints(endpoints, sp);
  // The chains' names share a hashed part, made when a chain is first named (see EndpointPicker).
  let hashed: string | undefined;
  const named = (kind: keyof typeof chainName): string => chainName[kind]((hashed ??= serviceChainBase(sp)));

  const hasCluster = usesClusterEndpoints(sp) && cat.clusterEndpoints.length > 0;
  const hasLocal = usesLocalEndpoints(sp) && cat.localEndpoints.length > 0;
  const internal: PickingChain | undefined = sp.internalTrafficPolicy === 'Local' ? (hasLocal ? 'local' : undefined) : hasCluster ? 'cluster' : undefined;
  const externalEndpoints = sp.externalTrafficPolicy === 'Local' ? cat.localEndpoints : cat.clusterEndpoints;
  const externalChain = sp.external && cat.hasAnyEndpoints ? named('external') : undefined;
  const firewallChain = sp.loadBalancerIPs.length && sp.loadBalancerSourceRanges.length ? named('firewall') : undefined;
  const affinity = sp.affinityTimeoutSeconds > 0;

  const out: { chain: Chain; rules: Rule[] }[] = [];
  const elements = new Map<string, SetElement[]>();
  const put = (set: string, e: SetElement): void => {
    if (!elements.has(set)) elements.set(set, []);
    elements.get(set)!.push(e);
  };
  const sets: NftSet[] = [];
  const chain = (name: string, rules: RuleBuilder[], comments: (string | undefined)[] = []): void => {
    out.push({ chain: { family, table, name }, rules: rules.map((b, i) => b.rule(table, name, comments[i])) });
  };

  // Endpoint chains exist only for ClientIP affinity: each pins its clients in its own timeout set.
  // Made when kube-proxy's way picks an endpoint (a picker may pin clients its own way).
  let epChain: Map<ServiceEndpoint, { chain: string; set: string }> | undefined;
  const endpointChains = (): Map<ServiceEndpoint, { chain: string; set: string }> => {
    if (epChain) return epChain;
    epChain = new Map();
    for (const ep of cat.allReachableEndpoints) {
      const epBase = endpointChainBase(sp, ep);
      const names = { chain: chainName.endpoint(epBase), set: chainName.affinity(epBase) };
      epChain.set(ep, names);
      sets.push({ family, table, name: names.set, key: [addr], flags: ['dynamic', 'timeout'], timeout: sp.affinityTimeoutSeconds * 1000 });
      chain(names.chain, [r().dynset('update', names.set, l3.saddr), r().match(meta.l4proto, p).dnat({ family: natFamily, addr: ep.ip, port: ep.port })]);
    }
    return epChain;
  };

  /** The rules that send a connection to one of `eps`. */
  const toEndpoints = (eps: readonly ServiceEndpoint[]): RuleBuilder[] => {
    if (affinity) {
      // The affinity shape keeps its numgen vmap for one endpoint too: the 1.37 single-endpoint
      // change is to the DNAT map (docs/kube-proxy-contract.md says what is not established).
      const chains = endpointChains();
      const rules = eps.map((ep) => r().inSet(l3.saddr, chains.get(ep)!.set).goto(chains.get(ep)!.chain));
      rules.push(r().vmap(numgen('random', eps.length), eps.map((ep, i) => ({ key: [i], value: { kind: 'goto', chain: chains.get(ep)!.chain } as Verdict }))));
      return rules;
    }
    // One DNAT rule per service port: direct for one endpoint, through an inline map for more.
    return [endpointDnat(r, p, natFamily, eps)];
  };
  const ctx: PickerContext = { put, addChain: (name, rules) => chain(name, rules) };
  /** Chains a picker did without: the shared chain that takes their traffic. */
  const sharedFor = new Map<PickingChain, string>();
  const pick = (kind: PickingChain, eps: readonly ServiceEndpoint[]): void => {
    const picked = picker?.(sp, () => named(kind), eps, ctx) ?? toEndpoints(eps);
    if (Array.isArray(picked)) chain(named(kind), picked);
    else sharedFor.set(kind, picked.sharedChain);
  };
  if (hasCluster) pick('cluster', cat.clusterEndpoints);
  if (hasLocal) pick('local', cat.localEndpoints);
  /** Where the traffic for one of the port's picking chains goes: that chain, or the shared one. */
  const target = (kind: PickingChain): string => sharedFor.get(kind) ?? named(kind);

  if (externalChain) {
    // A shared chain finds the endpoints by the packet's destination: the service's own address.
    if (sharedFor.size) throw new Error(`nftlink: internal error: service port ${sp.id} is reached from outside, but its endpoints were given to a shared chain`);
    const rules: RuleBuilder[] = [];
    const comments: (string | undefined)[] = [];
    if (sp.externalTrafficPolicy === 'Cluster') {
      rules.push(markForMasquerade(r(), cfg), r().goto(target('cluster')));
      comments.push(undefined, undefined);
    } else {
      // Local policy keeps the client's address, but pods and the node itself may use any endpoint.
      if (hasCluster) {
        const fromPods = matchLocalTraffic(r(), cfg);
        if (fromPods) {
          rules.push(fromPods.goto(target('cluster')));
          comments.push(COMMENT.shortCircuitPods);
        }
        rules.push(markForMasquerade(r().match(fibType('saddr'), 'local'), cfg), r().match(fibType('saddr'), 'local').goto(target('cluster')));
        comments.push(COMMENT.masqueradeLocal, COMMENT.shortCircuitLocal);
      }
      if (hasLocal) {
        rules.push(r().goto(target('local')));
        comments.push(undefined);
      }
    }
    chain(externalChain, rules, comments);
  }

  if (firewallChain) {
    // A node reaching its own LB VIP can come back with the VIP as source: when the ranges allow
    // the node (its primary IP of this family, kube-proxy's nodeIP), let those through too.
    const allowed = [...sp.loadBalancerSourceRanges];
    const primary = cfg.nodeIPs[0];
    if (primary !== undefined && sp.loadBalancerSourceRanges.some((c) => cidrContains(c, primary))) allowed.push(...sp.loadBalancerIPs);
    chain(firewallChain, [r().match(l3.saddr, oneOrSet(allowed), 'neq').drop()]);
  }

  // Elements in the shared maps.
  const goto = (c: string): Verdict => ({ kind: 'goto', chain: c });
  const noEndpoints: Verdict = cat.hasAnyEndpoints ? { kind: 'drop' } : goto(CHAIN.rejectChain);
  // Only the no-endpoint elements carry the port's name.
  let commentText: string | undefined;
  const comment = (): string => (commentText ??= elementComment(sp));

  put(SET.clusterIps, { key: [sp.clusterIP] });
  if (internal) put(SET.serviceIps, { key: [sp.clusterIP, p, sp.port], value: goto(target(internal)) });
  else put(SET.noEndpointServices, { key: [sp.clusterIP, p, sp.port], value: noEndpoints, comment: comment() });

  for (const ext of [...sp.externalIPs, ...sp.loadBalancerIPs]) {
    if (externalChain) put(SET.serviceIps, { key: [ext, p, sp.port], value: goto(externalChain) });
    if (externalEndpoints.length === 0) put(SET.noEndpointServices, { key: [ext, p, sp.port], value: noEndpoints, comment: comment() });
  }
  if (firewallChain) for (const lb of sp.loadBalancerIPs) put(SET.firewallIps, { key: [lb, p, sp.port], value: goto(firewallChain) });
  if (sp.nodePort) {
    if (externalChain) put(SET.serviceNodeports, { key: [p, sp.nodePort], value: goto(externalChain) });
    if (externalEndpoints.length === 0) put(SET.noEndpointNodeports, { key: [p, sp.nodePort], value: noEndpoints, comment: comment() });
  }
  for (const ep of cat.allReachableEndpoints) put(SET.hairpinConnections, { key: [ep.ip, ep.ip, p, ep.port] });
  if (cfg.localhostNodePorts && sp.nodePort && p !== 'tcp') put(SET.localhostNodeports, { key: [p, sp.nodePort] });

  // These live as long as the service port does (at 10k services, 4 MB of empty slots otherwise).
  elements.forEach((list, set) => elements.set(set, exactCopy(list)));
  return { chains: exactCopy(out), sets: sets.length ? exactCopy(sets) : NO_SETS, elements };
}
