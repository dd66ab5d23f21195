// The services under churn (bench:process's churn cases): each service's endpoints as address
// indexes (manifests.ts, endpointAddress), changed one at a time: an endpoint replaced, added or
// removed, as pods are rescheduled, scaled up and down. Every endpoint stays its own address on its
// service's target port (the maps need ip . port distinct): a new one is taken from the addresses
// no service holds, the oldest freed first. Changed services are picked by a seeded generator, so
// two runs make the same changes.
//
// For the manifest source the changed services' List files are written again, each to a temporary
// name and renamed over the old one (an atomic replace, as a config management tool writes).

import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { seededRandom } from '../seeded-random.js';
import { ENDPOINT_PORTS, ENDPOINTS_PER_PORT, FILE_SERVICES, initialEndpoints, LIST_HEAD, LIST_TAIL, manifestFileName, serviceObject, sliceObject, writeManifests } from './manifests.js';

export type ChangeKind = 'replaced' | 'added' | 'removed';

const portOf = (k: number): number => Math.floor(k / ENDPOINTS_PER_PORT);

export class EndpointChurn {
  private readonly endpoints: number[][];
  /** Per target port: addresses freed, oldest first (a queue from `head`), and the next never used. */
  private readonly free: { queue: number[]; head: number; fresh: number }[];
  private readonly random: () => number;
  private seq = 0;

  constructor(
    readonly services: number,
    readonly perService: number,
    seed = 29,
  ) {
    this.endpoints = Array.from({ length: services }, (_, i) => initialEndpoints(i, perService));
    this.free = Array.from({ length: ENDPOINT_PORTS }, (_, p) => ({ queue: [], head: 0, fresh: Math.max(p * ENDPOINTS_PER_PORT, services * perService) }));
    this.random = seededRandom(seed);
  }

  endpointsOf(i: number): readonly number[] {
    return this.endpoints[i]!;
  }

  /** `n` distinct services (n at most the number of services). */
  pick(n: number): number[] {
    const out = new Set<number>();
    while (out.size < Math.min(n, this.services)) out.add(Math.floor(this.random() * this.services));
    return [...out];
  }

  /** An address on service i's target port that no service holds. */
  private take(i: number): number {
    const p = portOf(initialEndpoints(i, this.perService)[0]!);
    const f = this.free[p]!;
    if (f.head < f.queue.length) {
      const k = f.queue[f.head++]!;
      if (f.head > 4096 && f.head * 2 > f.queue.length) f.queue.splice(0, f.head), (f.head = 0);
      return k;
    }
    if (f.fresh >= (p + 1) * ENDPOINTS_PER_PORT) throw new RangeError(`bench: no free endpoint address left on target port ${8080 + p}`);
    return f.fresh++;
  }

  private release(k: number): void {
    this.free[portOf(k)]!.queue.push(k);
  }

  /** One endpoint of service i replaced by a new one (a pod rescheduled). */
  replace(i: number): void {
    const eps = this.endpoints[i]!;
    const j = Math.floor(this.random() * eps.length);
    const old = eps[j]!;
    eps[j] = this.take(i);
    this.release(old);
  }

  /** One change to service i, in turn replace, add, remove (never below 1 nor above twice the start). */
  change(i: number): ChangeKind {
    const eps = this.endpoints[i]!;
    let kind: ChangeKind = (['replaced', 'added', 'removed'] as const)[this.seq++ % 3]!;
    if (kind === 'removed' && eps.length <= 1) kind = 'added';
    else if (kind === 'added' && eps.length >= 2 * this.perService) kind = 'removed';
    if (kind === 'replaced') this.replace(i);
    else if (kind === 'added') eps.push(this.take(i));
    else this.release(eps.splice(Math.floor(this.random() * eps.length), 1)[0]!);
    return kind;
  }
}

/** The manifest directory of a churn: its List files, each rewritten whole when one of its services changes. */
export class ChurnFiles {
  /** Each service's Service and EndpointSlice as the List holds them ("{...},{...}"). */
  private readonly items: string[];
  private readonly serviceJson: string[];

  private constructor(
    readonly dir: string,
    private readonly churn: EndpointChurn,
  ) {
    this.serviceJson = Array.from({ length: churn.services }, (_, i) => JSON.stringify(serviceObject(i, initialEndpoints(i, churn.perService)[0]!)));
    this.items = this.serviceJson.map((s, i) => `${s},${JSON.stringify(sliceObject(i, churn.endpointsOf(i)))}`);
  }

  static async create(dir: string, churn: EndpointChurn): Promise<ChurnFiles> {
    await writeManifests(dir, churn.services, churn.perService, (i) => churn.endpointsOf(i));
    return new ChurnFiles(dir, churn);
  }

  /** Writes the files of the services `changed` (their slices as the churn holds them now). */
  write(changed: readonly number[]): void {
    const files = new Set<number>();
    for (const i of changed) {
      this.items[i] = `${this.serviceJson[i]!},${JSON.stringify(sliceObject(i, this.churn.endpointsOf(i)))}`;
      files.add(Math.floor(i / FILE_SERVICES));
    }
    for (const n of files) {
      const first = n * FILE_SERVICES;
      const text = LIST_HEAD + this.items.slice(first, Math.min(this.churn.services, first + FILE_SERVICES)).join(',') + LIST_TAIL;
      const path = join(this.dir, manifestFileName(n));
      // Not a manifest extension: the proxy does not read the file until it has its name.
      writeFileSync(`${path}.tmp`, text);
      renameSync(`${path}.tmp`, path);
    }
  }
}
