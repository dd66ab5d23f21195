// The proxy's own health server, as kube-proxy's (pkg/proxy/healthcheck/proxier_health.go) on
// --healthz-bind-address (default 0.0.0.0:10256): load balancers and liveness probes ask it.
//
//   GET /healthz  200 or 503, {"lastUpdated": "...", "currentTime": "...", "nodeEligible": true}
//   GET /livez    200 or 503, {"lastUpdated": "...", "currentTime": "..."}
//
// The proxy is unhealthy when a change has been queued for longer than the health timeout
// (2 × syncPeriod, as kube-proxy's server.go passes it) without a successful sync after it.
// /healthz is also 503 while this node is being deleted (KEP-3836: a deletionTimestamp, or the
// cluster autoscaler's ToBeDeletedByClusterAutoscaler taint), so load balancers drain it before
// it goes away; /livez ignores the node, so that a draining proxy is not restarted.
//
// Times are written as RFC 3339 (kube-proxy writes Go's time.String()). As in kube-proxy,
// lastUpdated is the current time when healthy (older releases reported the last sync loop run,
// which was always recent), and the last successful sync when not.

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Node } from '../k8s/objects.js';
import { close, listen, parseBindAddress } from './bind-address.js';
import { boundBody } from './request-body.js';
import { http } from '../on-demand.js';

/** What the proxy tells the health server; read on every request. */
export interface HealthState {
  /** Date.now() of the last successful sync; undefined before the first. */
  lastSyncAt: number | undefined;
  /** Date.now() of the oldest change no successful sync has programmed yet; undefined when none. */
  oldestQueuedAt: number | undefined;
  /** This node is being deleted: /healthz fails so that load balancers stop sending to it. */
  nodeBeingDeleted: boolean;
}

/** The taint the cluster autoscaler puts on a node it is about to delete. */
export const TAINT_TO_BE_DELETED_BY_CLUSTER_AUTOSCALER = 'ToBeDeletedByClusterAutoscaler';

/** kube-proxy's NodeEligibleHandler: a node being deleted is not eligible for load balancer traffic. */
export function isNodeBeingDeleted(node: Node | undefined): boolean {
  if (!node) return false;
  if (node.metadata?.deletionTimestamp) return true;
  return (node.spec?.taints ?? []).some((t) => t.key === TAINT_TO_BE_DELETED_BY_CLUSTER_AUTOSCALER);
}

/** kube-proxy's isHealthy(): a queued change older than the timeout makes the proxy unhealthy. */
export function isProxyHealthy(state: HealthState, healthTimeoutMs: number, now: number): boolean {
  return state.oldestQueuedAt === undefined || now - state.oldestQueuedAt < healthTimeoutMs;
}

/**
 * Keeps HealthState from the proxier's reports. The change tracker forgets what it queued once a
 * sync takes it, even if that sync fails, so the oldest change a failed sync left unprogrammed is
 * kept here until a sync succeeds (kube-proxy gets the same by clearing its queued time only in
 * Updated()). A failed sync that had nothing queued counts as queued at its own time: rules that
 * cannot be written are not healthy once the timeout passes, even if no object changed.
 */
export class SyncHealthTracker {
  private lastSyncAt: number | undefined;
  private unprogrammedSince: number | undefined;
  private nodeDeleting = false;

  constructor(
    /** The proxier's pending changes (Proxier.pending()). */
    private readonly pending: () => { oldestQueuedAt: number | undefined },
    private readonly now: () => number = Date.now,
  ) {}

  /** Call with every sync's outcome (ProxierOptions.onSync). */
  syncDone(outcome: { error?: Error | undefined; queuedSince: number | undefined }): void {
    if (outcome.error) {
      this.unprogrammedSince = minDefined(this.unprogrammedSince, outcome.queuedSince ?? this.now());
      return;
    }
    this.lastSyncAt = this.now();
    this.unprogrammedSince = undefined;
  }

  /** Call with every event about this node (SourceHandler.node). */
  node(type: 'add' | 'update' | 'delete', node: Node): void {
    // A deleted Node object is the end of the deletion: keep reporting ineligible.
    this.nodeDeleting = type === 'delete' ? true : isNodeBeingDeleted(node);
  }

  state(): HealthState {
    return {
      lastSyncAt: this.lastSyncAt,
      oldestQueuedAt: minDefined(this.unprogrammedSince, this.pending().oldestQueuedAt),
      nodeBeingDeleted: this.nodeDeleting,
    };
  }
}

function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

export interface HealthzServerOptions {
  /** host:port, as --healthz-bind-address ("0.0.0.0:10256"; port 0 picks one, for tests). */
  address: string;
  /** The proxy's sync period: the health timeout is twice it. */
  syncPeriodMs: number;
  state: () => HealthState;
  now?: () => number;
  /** Each answered probe, for kubeproxy_proxy_healthz_total / kubeproxy_proxy_livez_total. */
  onProbe?: (path: '/healthz' | '/livez', code: number) => void;
}

export class HealthzServer {
  private readonly server: Server;
  private bound: AddressInfo | undefined;
  private readonly now: () => number;

  constructor(private readonly opts: HealthzServerOptions) {
    this.now = opts.now ?? Date.now;
    this.server = http().createServer((req, res) => this.handle(req, res));
  }

  /** Resolves with the bound address once listening; rejects naming the address if it cannot. */
  async start(): Promise<AddressInfo> {
    this.bound = await listen(this.server, parseBindAddress(this.opts.address, 'healthz bind address'), 'healthz server');
    return this.bound;
  }

  get port(): number | undefined {
    return this.bound?.port;
  }

  stop(): Promise<void> {
    return close(this.server);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    boundBody(req);
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/healthz' && path !== '/livez') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
      return;
    }
    const now = this.now();
    const state = this.opts.state();
    const proxyHealthy = isProxyHealthy(state, 2 * this.opts.syncPeriodMs, now);
    const nodeEligible = !state.nodeBeingDeleted;
    const healthy = path === '/healthz' ? proxyHealthy && nodeEligible : proxyHealthy;
    const lastUpdated = healthy ? now : state.lastSyncAt;
    const body: Record<string, unknown> = {
      // Never synced: '' (kube-proxy writes Go's zero time there).
      lastUpdated: lastUpdated === undefined ? '' : new Date(lastUpdated).toISOString(),
      currentTime: new Date(now).toISOString(),
    };
    if (path === '/healthz') body.nodeEligible = nodeEligible;
    const code = healthy ? 200 : 503;
    this.opts.onProbe?.(path, code);
    res.writeHead(code, { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff' }).end(JSON.stringify(body));
  }
}
