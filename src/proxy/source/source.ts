// Where Services and EndpointSlices come from. The proxy engine only sees this interface: manifest
// files on disk (manifests.ts) or the API server's informers (informers.ts), behind the same events.

import type { EndpointSlice, EventType, Node, Service } from '../../k8s/objects.js';

export type { EventType };

/** An object the source could not read at all (a file that does not parse, a kind it cannot use). */
export interface SourceProblem {
  /** Where it came from: a file path (and document index), or an API object reference. */
  origin: string;
  reason: string;
  /** The object refused, when the problem is one object: its kind and "namespace/name" ("name" for a Node). */
  object?: { kind: string; ref: string };
}

/**
 * `version` names this version of the object when the source has a name that changes with every
 * change of its content (the API server's resourceVersion): an event with the version already
 * known is a resync and costs nothing. Without one, every event is taken as a change and the
 * model built from it is compared instead.
 *
 * A deletion's object may carry no more than its kind and metadata's name and namespace (an
 * informer's last known state, or what a manifest source kept to delete it).
 */
export interface SourceHandler {
  service(type: EventType, svc: Service, version?: string): void;
  endpointSlice(type: EventType, slice: EndpointSlice, version?: string): void;
  /** The node this proxy runs on, when the source knows it (informers; manifests may carry it). */
  node?(type: EventType, node: Node): void;
  /** Every object that existed when the source started has been delivered (kube-proxy's "synced"). */
  synced(): void;
  problem(p: SourceProblem): void;
}

export interface ProxySource {
  /** Starts delivering events; resolves once the source is watching (not necessarily synced). */
  start(handler: SourceHandler): Promise<void>;
  stop(): Promise<void>;
}
