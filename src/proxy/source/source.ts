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

export interface SourceHandler {
  service(type: EventType, svc: Service): void;
  endpointSlice(type: EventType, slice: EndpointSlice): void;
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
