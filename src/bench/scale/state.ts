// The scale benchmark's model: N ClusterIP TCP services with E endpoints each, every endpoint its
// own address (as in a real cluster: no two services share pods), built with the proxy's own model
// code so every field has its defaults; and the churn steps applied to it (endpoint replaced,
// scaled up, scaled down, service added, service removed) with the StateChange the tracker would
// report for them.

import type { LayoutConfig } from '../../proxy/layout/types.js';
import type { ProxyState, ServiceEndpoint, ServicePort, ServicePortId, StateChange } from '../../proxy/model/types.js';
import { compareEndpoints } from '../../proxy/model/endpoints.js';
import { benchLayoutConfig, clusterIPServicePort } from '../proxy-model.js';

/** ClusterIP i: 198.18.0.0/16 (at most 65,534 services). */
function clusterIP(i: number): string {
  const n = i + 1;
  if (n >= 65_535) throw new RangeError(`bench: ${i + 1} services do not fit 198.18.0.0/16`);
  return `198.18.${n >> 8}.${n & 255}`;
}

/** Endpoint k: an address in 198.19.0.0/16 and a port, so that 150k endpoints are all distinct. */
function endpoint(k: number): ServiceEndpoint {
  const a = (k % 65_534) + 1;
  return { ip: `198.19.${a >> 8}.${a & 255}`, port: 8080 + Math.floor(k / 65_534), ready: true, serving: true, terminating: false, isLocal: false, nodeName: 'other' };
}

function servicePort(i: number): ServicePort {
  return clusterIPServicePort(`svc-${i}`, clusterIP(i));
}


/** A mutable model: the benchmark changes it in place and asks for the change set. */
export class BenchModel {
  readonly services = new Map<ServicePortId, ServicePort>();
  readonly endpoints = new Map<ServicePortId, ServiceEndpoint[]>();
  private readonly ids: ServicePortId[] = [];
  private nextEndpoint: number;
  private nextService: number;

  constructor(services: number, perService: number) {
    for (let i = 0; i < services; i++) {
      const sp = servicePort(i);
      this.services.set(sp.id, sp);
      this.ids.push(sp.id);
      this.endpoints.set(sp.id, Array.from({ length: perService }, (_, j) => endpoint(i * perService + j)).sort(compareEndpoints));
    }
    this.nextEndpoint = services * perService;
    this.nextService = services;
  }

  state(): ProxyState {
    return { family: 'ipv4', services: this.services, endpoints: this.endpoints };
  }

  /** `count` services spread over the table (every (N/count)-th), starting at `round`. */
  pick(count: number, round: number): ServicePortId[] {
    const step = Math.max(1, Math.floor(this.ids.length / count));
    return Array.from({ length: count }, (_, i) => this.ids[(round + i * step) % this.ids.length]!);
  }

  replaceEndpoint(id: ServicePortId): void {
    const eps = [...this.endpoints.get(id)!];
    eps[0] = endpoint(this.nextEndpoint++);
    this.endpoints.set(id, eps.sort(compareEndpoints));
  }

  scaleUp(id: ServicePortId): void {
    this.endpoints.set(id, [...this.endpoints.get(id)!, endpoint(this.nextEndpoint++)].sort(compareEndpoints));
  }

  scaleDown(id: ServicePortId): void {
    this.endpoints.set(id, this.endpoints.get(id)!.slice(1));
  }

  addService(perService: number): ServicePortId {
    const sp = servicePort(this.nextService++);
    this.services.set(sp.id, sp);
    this.ids.push(sp.id);
    this.endpoints.set(sp.id, Array.from({ length: perService }, () => endpoint(this.nextEndpoint++)).sort(compareEndpoints));
    return sp.id;
  }

  removeService(id: ServicePortId): void {
    this.services.delete(id);
    this.endpoints.delete(id);
    const i = this.ids.indexOf(id);
    if (i >= 0) this.ids.splice(i, 1);
  }
}

export function change(opts: { services?: ServicePortId[]; endpoints?: ServicePortId[]; removed?: ServicePortId[] }): StateChange {
  return {
    changedServices: new Set(opts.services ?? []),
    changedEndpoints: new Set([...(opts.endpoints ?? []), ...(opts.removed ?? [])]),
    removed: new Set(opts.removed ?? []),
  };
}

/** The proxy's IPv4 configuration on the benchmark's node. */
export function benchConfig(): LayoutConfig {
  return benchLayoutConfig({ nodeIP: '198.19.255.1', podCIDR: '198.19.0.0/16', serviceCIDR: '198.18.0.0/16' });
}
