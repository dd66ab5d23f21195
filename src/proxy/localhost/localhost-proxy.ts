// The localhost NodePort proxy: nftables cannot DNAT traffic to 127.0.0.1 the way iptables mode did
// with route_localnet, so `curl 127.0.0.1:<nodePort>` on a node has no kernel path. As kube-proxy
// does (feature gate KubeProxyNFTablesLocalhostNodePorts), a userspace TCP proxy listens on the
// loopback addresses for every NodePort and copies bytes to an endpoint.
//
// ClientIP affinity is a sliding window: the first connection pins an endpoint, every new one
// renews it. Every localhost client has the same source address, so one pin is shared by all local
// clients of the service (kube-proxy's code says the same).

import { createServer, type Server, type Socket } from 'node:net';
import { loadNative, type NativeBinding } from '../../native/index.js';
import type { Logger } from '../../logging/logger.js';
import type { IPFamily, ServicePortId } from '../model/types.js';

export interface LocalhostTarget {
  id: ServicePortId;
  family: IPFamily;
  nodePort: number;
  /** Where connections may go (already the local ones for externalTrafficPolicy Local). */
  endpoints: readonly { ip: string; port: number }[];
  /** 0: no affinity. */
  affinityTimeoutSeconds: number;
}

export interface LocalhostProxyEvents {
  listenerCreated?(family: IPFamily): void;
  listenerFailed?(family: IPFamily, reason: string): void;
}

export interface LocalhostProxyOptions {
  log: Logger;
  events?: LocalhostProxyEvents;
  dialTimeoutMs?: number;
  /** Loopback addresses to listen on, per family. */
  addresses?: Partial<Record<IPFamily, string>>;
  /** Picks an index in [0, n): Math.random by default (tests may fix it). */
  random?: (n: number) => number;
}

interface Listener {
  key: string;
  server: Server;
  target: LocalhostTarget;
  /** Accepted connections, with the id of their relay. */
  connections: Map<Socket, number>;
  pin?: { ip: string; port: number; until: number };
}

const keyOf = (t: Pick<LocalhostTarget, 'family' | 'nodePort'>): string => `${t.family}/${t.nodePort}`;

/** The fd of a connected net.Socket (libuv's TCP handle); undefined once it is closed. */
function socketFd(s: Socket): number | undefined {
  const fd = (s as unknown as { _handle?: { fd?: number } })._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : undefined;
}

export class LocalhostNodePortProxy {
  private readonly listeners = new Map<string, Listener>();
  /** Ports that failed to bind, so each failure is counted once until the target changes. */
  private readonly failed = new Map<string, string>();
  private readonly dialTimeoutMs: number;
  private readonly addresses: Record<IPFamily, string>;
  private readonly random: (n: number) => number;
  private readonly native: NativeBinding = loadNative();

  constructor(private readonly opts: LocalhostProxyOptions) {
    this.dialTimeoutMs = opts.dialTimeoutMs ?? 5000;
    this.addresses = { ipv4: opts.addresses?.ipv4 ?? '127.0.0.1', ipv6: opts.addresses?.ipv6 ?? '::1' };
    this.random = opts.random ?? ((n) => Math.floor(Math.random() * n));
  }

  /** Listeners open now, per family. */
  count(family: IPFamily): number {
    let n = 0;
    for (const l of this.listeners.values()) if (l.target.family === family) n++;
    return n;
  }

  /** Opens listeners for new NodePorts, closes those no longer wanted, updates endpoints in place. */
  async reconcile(targets: readonly LocalhostTarget[]): Promise<void> {
    const wanted = new Map<string, LocalhostTarget>();
    for (const t of targets) if (t.endpoints.length > 0 && t.nodePort > 0) wanted.set(keyOf(t), t);
    for (const [key, l] of this.listeners) {
      if (!wanted.has(key)) await this.closeListener(l, 'the NodePort is gone or has no endpoints');
    }
    for (const key of this.failed.keys()) if (!wanted.has(key)) this.failed.delete(key);
    const opening: Promise<void>[] = [];
    for (const [key, t] of wanted) {
      const l = this.listeners.get(key);
      if (l) {
        l.target = t;
        if (l.pin && !t.endpoints.some((e) => e.ip === l.pin!.ip && e.port === l.pin!.port)) delete l.pin;
        if (!t.affinityTimeoutSeconds) delete l.pin;
        continue;
      }
      if (this.failed.has(key)) continue;
      opening.push(this.open(key, t));
    }
    await Promise.all(opening);
  }

  private open(key: string, target: LocalhostTarget): Promise<void> {
    const host = this.addresses[target.family];
    const server = createServer({ allowHalfOpen: true, pauseOnConnect: true });
    const l: Listener = { key, server, target, connections: new Map() };
    server.on('connection', (c) => this.accept(l, c));
    return new Promise((resolve) => {
      const fail = (err: Error): void => {
        this.failed.set(key, err.message);
        this.opts.events?.listenerFailed?.(target.family, err.message);
        this.opts.log.error('cannot open localhost NodePort listener', { servicePort: target.id, address: host, port: target.nodePort, reason: err.message });
        resolve();
      };
      server.once('error', fail);
      server.listen({ host, port: target.nodePort, exclusive: true }, () => {
        server.off('error', fail);
        server.on('error', (err) => this.opts.log.error('localhost NodePort listener failed', { servicePort: target.id, reason: err.message }));
        this.listeners.set(key, l);
        this.opts.events?.listenerCreated?.(target.family);
        this.opts.log.debug('localhost NodePort listener opened', { servicePort: target.id, address: host, port: target.nodePort });
        resolve();
      });
    });
  }

  /** The endpoint for a new connection: the pinned one while its window lasts, else a random pick. */
  private pick(l: Listener): { ip: string; port: number } | undefined {
    const eps = l.target.endpoints;
    if (!eps.length) return undefined;
    const now = Date.now();
    const timeout = l.target.affinityTimeoutSeconds * 1000;
    if (timeout && l.pin && l.pin.until > now) {
      l.pin.until = now + timeout;
      return l.pin;
    }
    const ep = eps[this.random(eps.length)]!;
    if (timeout) l.pin = { ip: ep.ip, port: ep.port, until: now + timeout };
    return ep;
  }

  /**
   * Hands the client to the addon's relay (native/relay.cc), which dials the endpoint and copies
   * both ways with splice(2): the bytes never come up to JS, and no JS runs per connection after
   * this. Why: a JS relay reached 41% of the kernel path's throughput and 45% of its connection rate
   * (issue 7). The client stays paused in libuv (pauseOnConnect) and is destroyed here at the end;
   * a failed dial ends the relay at once, and is logged at debug level.
   */
  private accept(l: Listener, client: Socket): void {
    const ep = this.pick(l);
    const fd = socketFd(client);
    if (!ep || fd === undefined) {
      client.destroy();
      return;
    }
    const relay = this.native.relayDial(fd, ep.ip, ep.port, this.dialTimeoutMs);
    l.connections.set(client, relay.relayId);
    const done = (): void => {
      l.connections.delete(client);
      client.destroy();
    };
    relay.then((r) => {
      if (r.error && r.error !== 'cancelled') {
        const what = r.error.startsWith('dial:') ? 'cannot reach the endpoint' : 'relay ended';
        this.opts.log.debug(`localhost NodePort: ${what}`, { servicePort: l.target.id, endpoint: `${ep.ip}:${ep.port}`, reason: r.error });
      }
      done();
    }, done);
    client.on('error', () => {}); // nothing reads it in JS; destroy() may still report an error
  }

  private closeListener(l: Listener, why: string): Promise<void> {
    this.listeners.delete(l.key);
    this.opts.log.debug('localhost NodePort listener closed', { servicePort: l.target.id, port: l.target.nodePort, reason: why });
    return new Promise((resolve) => {
      l.server.close(() => resolve());
      // Connections already relayed finish on their own; a stopping proxy closes them (close()).
    });
  }

  /** Stops listening and closes every relayed connection. */
  async close(): Promise<void> {
    const all = [...this.listeners.values()];
    for (const l of all) {
      for (const relay of l.connections.values()) this.native.relayCancel(relay); // its end destroys the client
    }
    await Promise.all(all.map((l) => this.closeListener(l, 'the proxy stops')));
  }
}
