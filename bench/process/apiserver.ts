// The API server of bench:process's informer cases, in the benchmark's own process: the tests' fake
// (test/helpers/fake-apiserver.mjs: paged lists with limit/continue, then watches, as a real one
// answers them), holding the benchmark's Services and EndpointSlices and the proxy's Node, and a
// kubeconfig that points the proxy at it (the shape kubeadm writes, test/helpers/kubeconfig.ts).
//
// The fake is plain JavaScript that tsc does not copy into dist-bench/ (no allowJs): it is loaded
// from the package's own test/ folder at run time, typed by its fake-apiserver.d.mts.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packagePath } from '../../src/package-root.js';
import type * as Fake from '../../test/helpers/fake-apiserver.mjs';
import { kubeconfigYaml } from '../../test/helpers/kubeconfig.js';
import { initialEndpoints, nodeObject, serviceObject, sliceObject } from './manifests.js';

type Obj = Fake.Obj;

async function fakeApiServer(): Promise<typeof Fake.FakeApiServer> {
  const mod = (await import(pathToFileURL(packagePath('test', 'helpers', 'fake-apiserver.mjs')).href)) as typeof Fake;
  return mod.FakeApiServer;
}

export class BenchApiServer {
  private readonly dir = mkdtempSync(join(tmpdir(), 'nftlink-bench-api-'));
  /** The kubeconfig file to give the proxy (--kubeconfig). */
  readonly kubeconfig = join(this.dir, 'kubeconfig.conf');

  private constructor(private readonly api: Fake.FakeApiServer) {}

  /** Listens on 127.0.0.1 (any port) with `services` x `endpoints` objects and the Node. */
  static async start(services: number, endpoints: number): Promise<BenchApiServer> {
    const Server = await fakeApiServer();
    const s = new BenchApiServer(new Server());
    s.api.upsert('nodes', nodeObject() as Obj);
    for (let i = 0; i < services; i++) {
      const ks = initialEndpoints(i, endpoints);
      s.api.upsert('services', serviceObject(i, ks[0]!) as Obj);
      s.api.upsert('endpointslices', sliceObject(i, ks) as Obj);
    }
    // No compaction, ever: the history stays for the watches (a continue token or a watch from
    // before a compaction would get 410 Gone and relist, which is not what is measured). It costs
    // the benchmark's own process a copy of each changed slice.
    const url = await s.api.start();
    const token = join(s.dir, 'token');
    writeFileSync(token, 'bench-process-token');
    writeFileSync(s.kubeconfig, kubeconfigYaml({ server: url, tokenFile: token }));
    return s;
  }

  /** Service i's EndpointSlice now holds the endpoints at address indexes `ks` (a MODIFIED event). */
  setEndpoints(i: number, ks: readonly number[]): void {
    this.api.upsert('endpointslices', sliceObject(i, ks) as Obj);
  }

  async stop(): Promise<void> {
    await this.api.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
