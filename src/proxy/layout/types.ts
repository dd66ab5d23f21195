// What a layout produces: pure data, a function of the model and the configuration. The sync
// engine diffs these against what it last committed; nothing here talks to the kernel.

import type { Chain, Family, NftSet, Rule, Ruleset, SetElement, Table } from '../../nft/index.js';
import type { StateSize } from '../model/state-size.js';
import type { IPFamily, ServiceEndpoint, ServicePort, ServicePortId } from '../model/types.js';

/** Pod traffic by the interface it came in on: the bridge itself, or any interface `name*`. */
export interface LocalInterface {
  name: string;
  prefix: boolean;
}

export interface LayoutConfig {
  family: IPFamily;
  table: string;
  /** Pod CIDRs of this family: traffic from outside them to a ClusterIP is masqueraded. */
  clusterCIDRs: readonly string[];
  /** Instead of clusterCIDRs (detectLocalMode BridgeInterface, InterfaceNamePrefix). */
  localInterface?: LocalInterface;
  masqueradeAll: boolean;
  /** The masquerade mark (1 << masqueradeBit, 0x4000 by default). */
  masqueradeMark: number;
  /** Service CIDRs of this family: unallocated addresses in them are dropped (cluster-ips-check). */
  serviceCIDRs: readonly string[];
  /** Node IPs of this family that accept NodePorts, or 'all' (every local address, through fib). */
  nodePortAddresses: readonly string[] | 'all';
  /**
   * This node's IPs of this family, the primary first (--node-ip's order). A firewall chain lets LB
   * VIPs through as sources when a source range holds the primary one, as kube-proxy's nodeIP.
   */
  nodeIPs: readonly string[];
  /**
   * NodePorts on the loopback address of this family are served by the userspace proxy (TCP); the
   * ruleset then rejects UDP and SCTP there, with a counter per protocol.
   */
  localhostNodePorts: boolean;
}

/**
 * Elements a fragment contributes to the layout's shared sets and maps, by set name. Each call
 * builds its own element objects (never shared between service ports): the sync engine tells
 * whose an element is by its object. It may put back, in place of a new element, the equal one the
 * service port contributed before (ElementIndex.contribute), so the lists are the engine's to edit.
 */
export type ElementContributions = ReadonlyMap<string, SetElement[]>;

/** Objects that exist once per table: the table, base and fixed chains, shared sets and maps. */
export interface BaseObjects {
  table: Table;
  chains: Chain[];
  /** Declarations (no elements). */
  sets: NftSet[];
  rules: Rule[];
  elements: ElementContributions;
}

/** A chain with its rules, in order. */
export interface ChainRules {
  chain: Chain;
  rules: Rule[];
}

/** Everything one service port adds. Chains listed with their rules, in order. */
export interface ServiceObjects {
  chains: { chain: Chain; rules: Rule[] }[];
  /** Sets that belong to this service port alone (kube-proxy's affinity sets). */
  sets: readonly NftSet[];
  elements: ElementContributions;
}

export interface Layout {
  readonly name: string;
  base(cfg: LayoutConfig): BaseObjects;
  service(cfg: LayoutConfig, sp: ServicePort, endpoints: readonly ServiceEndpoint[]): ServiceObjects;
  /**
   * Work for a full sync that needs nothing from the kernel, done while the engine reads the table
   * (a restart's dump takes 100+ ms of the addon's thread and the kernel), some service ports at a
   * time: the chain names' hashes. Only ahead of time: service() does what was not done.
   */
  prepare?(ports: readonly ServicePort[]): void;
  // Layouts that keep state (where each service's endpoints live) implement the rest.
  /** Before a full sync: the table as the kernel holds it (empty for a preview). */
  adopt?(kernel: Ruleset): void;
  /**
   * Before a full plan, after adopt(): the size of the state it plans (the slots layout sizes an
   * empty table's buckets by it).
   */
  fitTo?(size: StateSize): void;
  /** The service port is gone, or left out: whatever it held is free. */
  release?(id: ServicePortId): void;
  /** After a full sync planned every service port: forget what nobody claimed. */
  sweep?(): void;
  /**
   * Shared sets a state of this size fills beyond what reading them back is worth (large-sets.ts):
   * a full sync leaves their elements out of its dump and writes them afresh.
   */
  largeSets?(size: StateSize): readonly string[];
  /** Sets shared by many service ports that exist only while used (declarations, no elements). */
  sharedSets?(cfg: LayoutConfig): readonly NftSet[];
  /**
   * Chains shared by many service ports that exist only while used, with their rules (the slots
   * layout's balance chains). A shared chain's rules follow from its name; the array is the same
   * while the chains in use stay the same.
   */
  sharedChains?(cfg: LayoutConfig): readonly ChainRules[];
  /**
   * True for a shared set none of whose keys two service ports ever both contribute (the slots
   * layout's bucket maps: each slot is one service chain's): a cold start writes its elements before
   * keying them (ElementIndex).
   */
  keysNeverShared?(setName: string): boolean;
  /**
   * Elements the packet path wrote that became wrong with this sync (affinity pins to a removed
   * endpoint): the engine dumps each set after the commit and deletes what `stale` picks.
   */
  stalePins?(cfg: LayoutConfig): { set: NftSet; stale(e: SetElement): boolean }[];
}

export function nftFamily(f: IPFamily): Family {
  return f === 'ipv4' ? 'ip' : 'ip6';
}
