// Services, EndpointSlices and this node's Node from the API server: the ProxySource of a proxy
// running in a cluster. Three reflectors (list+watch, src/k8s/reflector.ts) with kube-proxy's selectors:
//
// - Services and EndpointSlices without the service.kubernetes.io/service-proxy-name label (those
//   belong to another proxy) and without service.kubernetes.io/headless (no ClusterIP: nothing to
//   program), as kube-proxy's informer factory filters them (cmd/kube-proxy/app/server.go);
// - the Node object of this node only (fieldSelector metadata.name=NODE), for its podCIDRs
//   (detectLocalMode NodeCIDR) and whether it is being deleted (healthz).
//
// synced() is called once, after all three have delivered their first list, as kube-proxy waits
// for every informer's HasSynced before its first sync.
//
// Each object is validated by shape (k8s/validation) in its reflector before it is delivered: one of
// the wrong shape is reported through problem() with its kind, name and field, and left out.

import { LABEL_HEADLESS, LABEL_SERVICE_PROXY_NAME, type EndpointSlice, type Node, type Service } from '../../k8s/objects.js';
import { ApiClient } from '../../k8s/api-client.js';
import { connectApi, type ApiConnection, type ApiConnectionOptions } from '../../k8s/kubeconfig.js';
import { Reflector, type ReflectorOptions, type ResourceSpec } from '../../k8s/reflector.js';
import { validateObject, type ValidatedKind } from '../../k8s/validation/validate.js';
import type { Logger } from '../../logging/logger.js';
import type { ProxySource, SourceHandler } from './source.js';

/** kube-proxy's label selector for Services and EndpointSlices. */
export const PROXY_LABEL_SELECTOR = `!${LABEL_SERVICE_PROXY_NAME},!${LABEL_HEADLESS}`;

export interface InformerSourceOptions extends ApiConnectionOptions {
  /** This node's name: its Node object is watched. */
  nodeName: string;
  log: Logger;
  /** Reflector tuning (backoff, page size, watch timeout); tests shorten them. */
  reflector?: Omit<ReflectorOptions, 'log'>;
  /** An established connection instead of loading the configuration (tests, or a shared one). */
  connection?: ApiConnection;
}

/** The reason an object of `kind` has the wrong shape for the proxy, or undefined. */
const refusal =
  (kind: ValidatedKind) =>
  (obj: unknown): string | undefined => {
    const v = validateObject(kind, obj);
    return 'reason' in v ? v.reason : undefined;
  };

export function resourceSpecs(nodeName: string): { services: ResourceSpec; endpointSlices: ResourceSpec; node: ResourceSpec } {
  return {
    services: { kind: 'Service', apiVersion: 'v1', path: '/api/v1/services', labelSelector: PROXY_LABEL_SELECTOR, validate: refusal('Service') },
    endpointSlices: {
      kind: 'EndpointSlice',
      apiVersion: 'discovery.k8s.io/v1',
      path: '/apis/discovery.k8s.io/v1/endpointslices',
      labelSelector: PROXY_LABEL_SELECTOR,
      validate: refusal('EndpointSlice'),
    },
    node: { kind: 'Node', apiVersion: 'v1', path: '/api/v1/nodes', fieldSelector: `metadata.name=${nodeName}`, validate: refusal('Node') },
  };
}

export class InformerSource implements ProxySource {
  private connection: ApiConnection | undefined;
  private reflectors: Reflector<Service | EndpointSlice | Node>[] = [];
  private started = false;

  constructor(private readonly opts: InformerSourceOptions) {
    if (!opts.nodeName) throw new Error('informer source: nodeName is required (the Node object to watch)');
  }

  /** Loads the configuration and starts the reflectors; resolves once they are running (not synced). */
  async start(handler: SourceHandler): Promise<void> {
    if (this.started) throw new Error('informer source: already started');
    this.started = true;
    const { log } = this.opts;
    this.connection = this.opts.connection ?? (await connectApi(this.opts));
    if (this.connection.origin === 'in-cluster') {
      log.warn('no kubeconfig: using the in-cluster configuration, which reaches the API server through the kubernetes Service ClusterIP that this proxy programs; give the API server address in a kubeconfig (as kubeadm does) so that the proxy can start on a node without rules', {
        server: this.connection.server,
      });
    }
    log.info('watching the API server', { server: this.connection.server, config: this.connection.origin, node: this.opts.nodeName });
    const api = new ApiClient(this.connection);
    const specs = resourceSpecs(this.opts.nodeName);
    let pending = 3;
    const listed = (): void => {
      if (--pending === 0) handler.synced();
    };
    const problem = (origin: string, reason: string): void => handler.problem({ origin: `${this.connection!.server} ${origin}`, reason });
    const options: ReflectorOptions = { ...this.opts.reflector, log };
    this.reflectors = [
      new Reflector<Service>(api, specs.services, { event: (t, o) => handler.service(t, o, o.metadata?.resourceVersion), listed, problem }, options),
      new Reflector<EndpointSlice>(api, specs.endpointSlices, { event: (t, o) => handler.endpointSlice(t, o, o.metadata?.resourceVersion), listed, problem }, options),
      new Reflector<Node>(api, specs.node, { event: (t, o) => handler.node?.(t, o), listed, problem }, options),
    ] as Reflector<Service | EndpointSlice | Node>[];
    for (const r of this.reflectors) r.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.reflectors.map((r) => r.stop()));
    if (!this.opts.connection) this.connection?.close();
  }

  /** Per-resource counters (lists, watches, relists after 410, failures), for logs and tests. */
  stats(): Record<string, Reflector<Service | EndpointSlice | Node>['stats']> {
    const out: Record<string, Reflector<Service | EndpointSlice | Node>['stats']> = {};
    const names = ['services', 'endpointSlices', 'node'];
    this.reflectors.forEach((r, i) => (out[names[i]!] = r.stats));
    return out;
  }
}
