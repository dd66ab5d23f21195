// The proxy's view of the cluster between syncs, like kube-proxy's ServiceChangeTracker and
// EndpointsChangeTracker (pkg/proxy/servicechangetracker.go, endpointschangetracker.go): source
// events update the current objects and mark their service as pending; snapshot() rebuilds only
// the pending services, produces the ProxyState of each family and what changed since the previous
// snapshot, and clears the pending marks.
//
// Each family's ProxyState is one object for the tracker's life, updated in place by each snapshot
// (the pending services' entries only): copying its two Maps per snapshot cost about 1.3 ms each
// at 10k services, more than the rest of a one-endpoint sync, and every copy was a large object
// that only a full collection frees (the heap grew by about 1 MB a second under churn). A consumer
// reads a state during the sync it was handed to; one that keeps something for later copies it.

import { ANNOTATION_LAST_CHANGE_TRIGGER_TIME, type EndpointSlice, type Node, type Service } from '../../k8s/objects.js';
import type { EventType, SourceHandler } from '../source/source.js';
import { flat } from '../flat-string.js';
import { AddressClaims, lostClaimReason } from './claims.js';
import { indexPort, unindexPort, type IndexedPorts } from './port-index.js';
import { mergeEndpoints, readEndpointSlice, sliceServiceKey, type EndpointSliceInfo, type EndpointSliceReadResult } from './endpoints.js';
import { hasClusterIPOf, IP_FAMILIES, readService, servicePortsOfFamily, type ServiceReadResult } from './service.js';
import type { StateSize } from './state-size.js';
import type { InvalidObject, IPFamily, ProxyState, ServiceEndpoint, ServicePort, ServicePortId, StateChange } from './types.js';

export interface ChangeTrackerOptions {
  /** The node this proxy runs on: endpoints with this nodeName are local. */
  nodeName: string;
  /** Clock, for tests. */
  now?: () => number;
}

export interface PendingChanges {
  /** Services whose Service object changed since the last snapshot (kube-proxy's service_changes_pending). */
  services: number;
  /** Services whose EndpointSlices changed since the last snapshot (endpoint_changes_pending). */
  endpoints: number;
  /** Date.now() when the oldest of these arrived (the healthz "queued update" time); undefined when none. */
  oldestQueuedAt: number | undefined;
}

export interface ChangeTotals {
  /** Service events that changed something (kube-proxy's sync_proxy_rules_service_changes_total). */
  services: number;
  /** EndpointSlice events that changed something (endpoint_changes_total). */
  endpoints: number;
}

export interface TrackerSnapshot {
  /** The tracker's states, as of this snapshot: the next snapshot updates them in place. */
  states: Record<IPFamily, ProxyState>;
  change: Record<IPFamily, StateChange>;
  /**
   * Milliseconds each family's state took to bring up to date: part of its sync's duration, as
   * kube-proxy's sync latency includes its service and endpoints map updates.
   */
  modelMs: Record<IPFamily, number>;
  /** Objects rejected since the last snapshot: each object version is reported once. */
  invalid: InvalidObject[];
  /** When the oldest change included in this snapshot arrived; undefined when nothing changed. */
  queuedSince: number | undefined;
  /**
   * last-change-trigger-time annotations (ms since the epoch) of the EndpointSlice changes included,
   * for the network-programming latency histogram.
   */
  lastChangeTriggerTimes: number[];
}

interface ServiceRecord {
  /** As the source named it (undefined: it names none). */
  version: string | undefined;
  read: ServiceReadResult;
}

interface SliceRecord {
  version: string | undefined;
  /** The Service it belongs to, when its label names one. */
  serviceKey: string | undefined;
  read: EndpointSliceReadResult;
}

/** One family's state while it is rebuilt, plus which ids came from which Service. */
interface FamilyState {
  /** Updated in place (see the top of the file). */
  state: { family: IPFamily; services: Map<ServicePortId, ServicePort>; endpoints: Map<ServicePortId, readonly ServiceEndpoint[]> } & IndexedPorts;
  idsByService: Map<string, ServicePortId[]>;
  /** Who holds each address and port several Services claim. */
  claims: AddressClaims;
  /** Service key -> the lost claims last reported for it (each is reported once, while it lasts). */
  reportedLost: Map<string, Set<string>>;
}

/** The Node label that zone hints are matched against (v1.LabelTopologyZone). */
export const LABEL_TOPOLOGY_ZONE = 'topology.kubernetes.io/zone';

export class ChangeTracker implements Pick<SourceHandler, 'service' | 'endpointSlice' | 'node'> {
  private readonly nodeName: string;
  /** This node's zone label ('' until its Node object says, as kube-proxy's empty topology labels). */
  private zone = '';
  private readonly now: () => number;
  /** Trigger times from before the tracker started measure other proxies' work, not ours (kube-proxy's trackerStartTime). */
  private readonly startedAt: number;

  private readonly services = new Map<string, ServiceRecord>();
  private readonly slices = new Map<string, SliceRecord>();
  /**
   * Service key -> the keys of its slices: one key as itself, several as a Set. Most services have
   * one slice, and a Set for each cost 1.5 MB at 10k services (as in claims.ts).
   */
  private readonly slicesByService = new Map<string, string | Set<string>>();

  private readonly pendingServices = new Set<string>();
  private readonly pendingEndpoints = new Set<string>();
  private oldestQueuedAt: number | undefined;
  private readonly totals: ChangeTotals = { services: 0, endpoints: 0 };
  private readonly triggerTimes = new Map<string, number[]>();

  /** Object key ("Service ns/name") -> version last reported invalid. */
  private readonly reportedInvalid = new Map<string, string | undefined>();
  private readonly pendingInvalid = new Map<string, InvalidObject>();

  private families: Record<IPFamily, FamilyState>;
  /** Set by forget(): the objects are gone, and no snapshot may be built from what is left. */
  private forgotten = false;

  constructor(options: ChangeTrackerOptions) {
    this.nodeName = options.nodeName;
    this.now = options.now ?? Date.now;
    this.startedAt = this.now();
    this.families = { ipv4: emptyFamilyState('ipv4'), ipv6: emptyFamilyState('ipv6') };
  }

  /** A Service event; `version` as the source names it (SourceHandler), if it can. */
  service(type: EventType, svc: Service, version?: string): void {
    if (this.forgotten) return;
    const key = objectKey(svc.metadata);
    const existing = this.services.get(key);
    if (type === 'delete') {
      if (!existing) return;
      this.services.delete(key);
      this.forgetInvalid(`Service ${key}`);
    } else {
      if (version !== undefined && existing?.version === version) return; // a resync
      const read = readService(svc);
      this.services.set(key, { version, read });
      this.noteValidity(`Service ${key}`, version, 'invalid' in read ? read.invalid : undefined);
    }
    this.totals.services++;
    this.markPending(this.pendingServices, key);
  }

  /** An EndpointSlice event; `version` as the source names it (SourceHandler), if it can. */
  endpointSlice(type: EventType, slice: EndpointSlice, version?: string): void {
    if (this.forgotten) return;
    const key = objectKey(slice.metadata);
    const existing = this.slices.get(key);
    if (type === 'delete') {
      if (!existing) return;
      this.unindexSlice(key, existing);
      this.slices.delete(key);
      this.forgetInvalid(`EndpointSlice ${key}`);
      // kube-proxy drops the trigger times on deletion: the annotation dates the slice's last
      // update, not the deletion, so it would measure the wrong thing.
      if (existing.serviceKey) {
        this.triggerTimes.delete(existing.serviceKey);
        this.markEndpointsPending(existing.serviceKey);
      }
      return;
    }
    if (version !== undefined && existing?.version === version) return; // a resync
    const before = existing && 'slice' in existing.read ? existing.read.slice : undefined;
    const read = readEndpointSlice(slice, before);
    // The strings of a slice that stays with its Service are the ones the tracker holds already
    // (its index's entry, the record's service key): each event's copies would otherwise stay
    // beside them, one more set per churned slice.
    const serviceKey = sliceServiceKey(slice);
    const record: SliceRecord = { version, serviceKey: existing !== undefined && serviceKey === existing.serviceKey ? existing.serviceKey : serviceKey, read };
    this.slices.set(key, record);
    const moved = existing?.serviceKey !== record.serviceKey;
    if (moved) {
      if (existing) this.unindexSlice(key, existing);
      this.indexSlice(key, record);
    }
    this.noteValidity(`EndpointSlice ${key}`, version, 'invalid' in read ? read.invalid : undefined);
    // A slice that moved to another service changes both.
    if (moved && existing?.serviceKey) this.markEndpointsPending(existing.serviceKey);
    if (record.serviceKey) {
      this.recordTriggerTime(record.serviceKey, slice);
      this.markEndpointsPending(record.serviceKey);
    }
  }

  /**
   * This node's Node object: its zone decides which zone-hinted endpoints Cluster traffic takes
   * (kube-proxy's NodeTopologyConfig). A new zone recomputes every service.
   */
  node(type: EventType, node: Node): void {
    if (this.forgotten || node.metadata?.name !== this.nodeName) return;
    const zone = type === 'delete' ? '' : (node.metadata?.labels?.[LABEL_TOPOLOGY_ZONE] ?? '');
    if (zone === this.zone) return;
    this.zone = zone;
    for (const key of this.services.keys()) this.markEndpointsPending(key);
  }

  pendingChanges(): PendingChanges {
    return { services: this.pendingServices.size, endpoints: this.pendingEndpoints.size, oldestQueuedAt: this.oldestQueuedAt };
  }

  changeTotals(): ChangeTotals {
    return { ...this.totals };
  }

  /**
   * The sizes the next snapshot's states will have, counted from the objects held before it builds
   * them: a restart reads the kernel back with options for its size (KernelView.read), and can start
   * that read first this way. An upper bound: a Service port whose address another Service holds,
   * and an endpoint in two slices, count.
   */
  sizes(): Record<IPFamily, StateSize> {
    const out: Record<IPFamily, StateSize> = { ipv4: { servicePorts: 0, endpoints: 0 }, ipv6: { servicePorts: 0, endpoints: 0 } };
    for (const { read } of this.services.values()) {
      if (!('service' in read)) continue;
      for (const family of IP_FAMILIES) if (hasClusterIPOf(read.service, family)) out[family].servicePorts += read.service.ports.length;
    }
    for (const { read } of this.slices.values()) {
      if ('slice' in read) out[read.slice.family].endpoints += read.slice.endpoints.length * read.slice.ports.length;
    }
    return out;
  }

  snapshot(): TrackerSnapshot {
    if (this.forgotten) throw new Error('nftlink: internal error: a snapshot after the change tracker let go of its objects');
    const pending = new Set([...this.pendingServices, ...this.pendingEndpoints]);
    const states = {} as Record<IPFamily, ProxyState>;
    const change = {} as Record<IPFamily, StateChange>;
    const modelMs = {} as Record<IPFamily, number>;
    for (const family of IP_FAMILIES) {
      const started = performance.now();
      change[family] = this.rebuildFamily(family, pending);
      states[family] = this.families[family].state;
      modelMs[family] = performance.now() - started;
    }
    const snapshot: TrackerSnapshot = {
      states,
      change,
      modelMs,
      invalid: [...this.pendingInvalid.values()],
      queuedSince: this.oldestQueuedAt,
      lastChangeTriggerTimes: [...this.triggerTimes.values()].flat().sort((a, b) => a - b),
    };
    this.pendingServices.clear();
    this.pendingEndpoints.clear();
    this.pendingInvalid.clear();
    this.triggerTimes.clear();
    this.oldestQueuedAt = undefined;
    return snapshot;
  }

  /**
   * Lets go of the objects read and of everything built from them but the last snapshot's states,
   * for a run that ends with the sync of that snapshot (`proxy --once`, `nftlink render`): at 10k
   * services they are tens of MB the sync would otherwise carry to its end, at its peak. Events
   * after it are ignored (nothing would sync them), and a snapshot after it throws: one built from
   * nothing would delete every service.
   */
  forget(): void {
    this.forgotten = true;
    this.services.clear();
    this.slices.clear();
    this.slicesByService.clear();
    this.pendingServices.clear();
    this.pendingEndpoints.clear();
    this.triggerTimes.clear();
    this.reportedInvalid.clear();
    this.pendingInvalid.clear();
    // The snapshot's states are these families' state objects: they stay with whoever holds it.
    this.families = { ipv4: emptyFamilyState('ipv4'), ipv6: emptyFamilyState('ipv6') };
  }

  /** Recomputes the pending services' ports and endpoints in the family's state (in place). */
  private rebuildFamily(family: IPFamily, pending: ReadonlySet<string>): StateChange {
    const current = this.families[family];
    const changedServices = new Set<ServicePortId>();
    const changedEndpoints = new Set<ServicePortId>();
    const removed = new Set<ServicePortId>();
    const change: StateChange = { changedServices, changedEndpoints, removed };
    if (pending.size === 0) return change;

    const { state } = current;
    const { services, endpoints } = state;
    const portsOf = this.claimedPorts(current, family, pending);
    for (const [serviceKey, ports] of portsOf) {
      const merged = mergeEndpoints(ports, this.slicesOf(serviceKey, family), this.nodeName, this.zone);
      // The ids as the state's Maps hold them, not the rebuilt ports' copies of the same text.
      const ids = ports.map((sp) => services.get(sp.id)?.id ?? sp.id);
      for (const oldId of current.idsByService.get(serviceKey) ?? []) {
        if (ids.includes(oldId)) continue;
        // Its endpoints are gone too: consumers clean up what the old list reached.
        if ((endpoints.get(oldId) ?? []).length > 0) changedEndpoints.add(oldId);
        services.delete(oldId);
        endpoints.delete(oldId);
        unindexPort(state, oldId);
        removed.add(oldId);
      }
      for (let i = 0; i < ports.length; i++) {
        const sp = ports[i]!;
        const before = services.get(sp.id);
        const same = before !== undefined && sameServicePort(before, sp);
        // An unchanged port keeps its object: what consumers keyed by it (the layouts' hashed
        // chain names) stays found.
        if (!same) {
          changedServices.add(sp.id);
          services.set(sp.id, sp);
          indexPort(state, sp);
        }
        const list = merged[i]!;
        if (!sameEndpoints(endpoints.get(sp.id) ?? [], list)) {
          changedEndpoints.add(sp.id);
          endpoints.set(sp.id, list);
        }
      }
      if (ids.length > 0) current.idsByService.set(serviceKey, ids);
      else current.idsByService.delete(serviceKey);
    }
    return change;
  }

  /**
   * The ports of the pending services, and of the services that won or lost an address by their
   * changes, each without the addresses another Service holds (claims.ts; each loss reported once).
   */
  private claimedPorts(current: FamilyState, family: IPFamily, pending: ReadonlySet<string>): Map<string, readonly ServicePort[]> {
    const unresolved = new Map<string, ServicePort[]>();
    const claim = (serviceKey: string): ReadonlySet<string> => {
      const ports = this.servicePortsOf(serviceKey, family);
      unresolved.set(serviceKey, ports);
      const read = this.services.get(serviceKey)?.read;
      return current.claims.set({ serviceKey, createdAt: read && 'service' in read ? read.service.createdAt : Infinity }, ports);
    };
    const affected = new Set<string>();
    for (const serviceKey of pending) {
      // Nothing of this family, now or at the last snapshot: nothing to claim, resolve or rebuild
      // (every service of the other family: all of them, in a single-stack cluster's other family).
      if (!this.hasClusterIP(serviceKey, family) && !current.claims.holdsAny(serviceKey) && !current.idsByService.has(serviceKey)) continue;
      // A service whose object did not change (only its endpoints) claims what it claimed.
      if (!this.pendingServices.has(serviceKey)) unresolved.set(serviceKey, this.servicePortsOf(serviceKey, family));
      else for (const other of claim(serviceKey)) affected.add(other);
    }
    // Their claims are as they were (only the winners moved): no further service is affected.
    for (const serviceKey of affected) if (!unresolved.has(serviceKey)) claim(serviceKey);
    const out = new Map<string, readonly ServicePort[]>();
    for (const [serviceKey, ports] of unresolved) {
      const { ports: kept, lost } = current.claims.resolve(serviceKey, ports);
      out.set(serviceKey, kept);
      this.reportLost(current, family, serviceKey, lost.map(lostClaimReason));
    }
    return out;
  }

  private reportLost(current: FamilyState, family: IPFamily, serviceKey: string, reasons: string[]): void {
    const before = current.reportedLost.get(serviceKey);
    if (reasons.length === 0) {
      current.reportedLost.delete(serviceKey);
      return;
    }
    for (const reason of reasons) {
      if (!before?.has(reason)) this.pendingInvalid.set(`Claim ${family} ${serviceKey} ${reason}`, { kind: 'Service', ref: serviceKey, reason });
    }
    current.reportedLost.set(serviceKey, new Set(reasons));
  }

  private hasClusterIP(serviceKey: string, family: IPFamily): boolean {
    const read = this.services.get(serviceKey)?.read;
    return read !== undefined && 'service' in read && hasClusterIPOf(read.service, family);
  }

  private servicePortsOf(serviceKey: string, family: IPFamily): ServicePort[] {
    const read = this.services.get(serviceKey)?.read;
    if (!read || !('service' in read)) return [];
    const result = servicePortsOfFamily(read.service, family);
    return 'ports' in result ? result.ports : [];
  }

  private slicesOf(serviceKey: string, family: IPFamily): EndpointSliceInfo[] {
    const out: EndpointSliceInfo[] = [];
    const visit = (sliceKey: string): void => {
      const read = this.slices.get(sliceKey)?.read;
      if (read && 'slice' in read && read.slice.family === family) out.push(read.slice);
    };
    const held = this.slicesByService.get(serviceKey);
    if (typeof held === 'string') visit(held);
    else held?.forEach(visit);
    return out;
  }

  private indexSlice(sliceKey: string, record: SliceRecord): void {
    const serviceKey = record.serviceKey;
    if (!serviceKey) return;
    const held = this.slicesByService.get(serviceKey);
    if (held === undefined) this.slicesByService.set(serviceKey, sliceKey);
    else if (typeof held !== 'string') held.add(sliceKey);
    else if (held !== sliceKey) this.slicesByService.set(serviceKey, new Set([held, sliceKey]));
  }

  private unindexSlice(sliceKey: string, record: SliceRecord): void {
    const serviceKey = record.serviceKey;
    if (!serviceKey) return;
    const held = this.slicesByService.get(serviceKey);
    if (held === undefined) return;
    if (typeof held === 'string') {
      if (held === sliceKey) this.slicesByService.delete(serviceKey);
      return;
    }
    held.delete(sliceKey);
    if (held.size === 1) this.slicesByService.set(serviceKey, held.values().next().value!);
  }

  private markEndpointsPending(serviceKey: string): void {
    this.totals.endpoints++;
    this.markPending(this.pendingEndpoints, serviceKey);
  }

  /** kube-proxy's healthz QueuedUpdate: the first unsynced change starts the clock. */
  private markPending(set: Set<string>, key: string): void {
    set.add(key);
    this.oldestQueuedAt ??= this.now();
  }

  private recordTriggerTime(serviceKey: string, slice: EndpointSlice): void {
    const text = slice.metadata?.annotations?.[ANNOTATION_LAST_CHANGE_TRIGGER_TIME];
    const time = text ? Date.parse(text) : NaN;
    if (!Number.isFinite(time) || time <= this.startedAt) return;
    const list = this.triggerTimes.get(serviceKey);
    if (list) list.push(time);
    else this.triggerTimes.set(serviceKey, [time]);
  }

  private noteValidity(key: string, version: string | undefined, invalid: InvalidObject | undefined): void {
    if (!invalid) {
      this.forgetInvalid(key);
      return;
    }
    // Reported once per version; without versions, at every event that carries it.
    if (version !== undefined && this.reportedInvalid.get(key) === version) return;
    this.reportedInvalid.set(key, version);
    this.pendingInvalid.set(key, invalid);
  }

  private forgetInvalid(key: string): void {
    this.reportedInvalid.delete(key);
    this.pendingInvalid.delete(key);
  }
}

function emptyFamilyState(family: IPFamily): FamilyState {
  return {
    state: { family, services: new Map(), endpoints: new Map(), localPolicyPorts: new Set(), flowCleanedPorts: new Set() },
    idsByService: new Map(),
    claims: new AddressClaims(),
    reportedLost: new Map(),
  };
}

function objectKey(meta: { name?: string; namespace?: string } | undefined): string {
  return flat(meta?.namespace ?? '', '/', meta?.name ?? '');
}

// Both are built field by field in a fixed order (service.ts, endpoints.ts), so their JSON compares
// them exactly, arrays included.
function sameServicePort(a: ServicePort, b: ServicePort): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function sameEndpoints(a: readonly ServiceEndpoint[], b: readonly ServiceEndpoint[]): boolean {
  return a.length === b.length && JSON.stringify(a) === JSON.stringify(b);
}
