// The harness's side of bench/reliability/api-child.mjs: the fake API server and its churn, as a
// child process in the node namespace, driven over its stdin/stdout.

import { spawn } from 'node:child_process';
import type { EndpointSlice, Service } from '../../src/k8s/objects.js';
import type { Netns } from '../../src/netns/netns.js';
import { packagePath } from '../../src/package-root.js';
import { LineRpc } from '../../test/helpers/line-rpc.js';

/** Where the API server listens inside the node namespace. */
export const API_PORT = 6443;

type Resource = 'services' | 'endpointslices' | 'nodes';

export interface ChurnPlan {
  /** EndpointSlice changes per second. */
  rate: number;
  /** Slices whose endpoints are replaced one address at a time (no pod behind them). */
  slices: EndpointSlice[];
  /** Slices of probed services: each change gives them a random non-empty subset of `pool`. */
  probed: EndpointSlice[];
  /** The share of changes that go to `probed`. */
  probedShare: number;
  /** The real pods' addresses. */
  pool: string[];
  /** Slice name -> the addresses its endpoints take (affinity services: objects.ts affinityPool). */
  pools: Record<string, string[]>;
}

export class ApiChild {
  private constructor(private readonly rpc: LineRpc) {}

  /** Starts it in `ns`, not yet listening (load the cluster first, then listen()). */
  static start(ns: Netns): ApiChild {
    // Netns.spawn gives no stdin: spawned here the way it does, with one (killed by kill()).
    const child = spawn('ip', ['netns', 'exec', ns.name, process.execPath, packagePath('bench', 'reliability', 'api-child.mjs'), String(API_PORT)], { stdio: ['pipe', 'pipe', 'pipe'] });
    return new ApiChild(new LineRpc(child, 'api child'));
  }

  call<T = unknown>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    return this.rpc.call<T>(op, args);
  }

  listen(): Promise<unknown> {
    return this.call('listen');
  }

  /** Upserts in batches (one command line stays a few MB). */
  async upsert(resource: Resource, objects: readonly object[]): Promise<void> {
    for (let i = 0; i < objects.length; i += 2000) await this.call('upsertMany', { items: objects.slice(i, i + 2000).map((obj) => ({ resource, obj })) });
  }

  async remove(resource: Resource, objects: readonly { metadata?: { name?: string; namespace?: string } }[]): Promise<void> {
    await this.call('removeMany', { items: objects.map((o) => ({ resource, namespace: o.metadata?.namespace, name: o.metadata?.name })) });
  }

  churn(plan: ChurnPlan): Promise<unknown> {
    return this.call('churn', { ...plan });
  }

  stopChurn(): Promise<{ changes: number; ms: number }> {
    return this.call('stopChurn');
  }

  /** Every Service and EndpointSlice the server holds now. */
  objects(): Promise<(Service | EndpointSlice)[]> {
    return this.call('objects');
  }

  kill(): Promise<void> {
    return this.rpc.kill();
  }
}
