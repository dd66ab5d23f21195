// The server on --metrics-bind-address (default 127.0.0.1:10249), with kube-proxy's routes
// (cmd/kube-proxy/app/server.go serveMetrics):
//
//   /metrics    the Prometheus text exposition of ProxyMetrics
//   /proxyMode  the mode, as plain text: "nftables" (tools probe it to find out how to debug a node)
//   /configz    the running configuration, JSON, under its API group as component-base's configz
//   /healthz    "ok": the process answers (component-base's ping check, not the proxy's health,
//               which is on the healthz port)

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { close, listen, parseBindAddress } from './bind-address.js';
import { boundBody } from './request-body.js';
import type { ProxyMetrics } from './metrics.js';
import { http } from '../on-demand.js';

export interface MetricsServerOptions {
  /** host:port, as --metrics-bind-address ("127.0.0.1:10249"; port 0 picks one, for tests). */
  address: string;
  metrics: ProxyMetrics;
  /** The configuration /configz shows (e.g. parse(writeConfig(cfg))); omitted: {}. */
  configz?: () => unknown;
  /** What /proxyMode answers (default nftables, the only mode). */
  proxyMode?: string;
}

/** configz registers kube-proxy's configuration under its API group name. */
const CONFIGZ_GROUP = 'kubeproxy.config.k8s.io';

export class MetricsServer {
  private readonly server: Server;
  private bound: AddressInfo | undefined;

  constructor(private readonly opts: MetricsServerOptions) {
    this.server = http().createServer((req, res) => {
      this.handle(req, res).catch((err: Error) => {
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(`metrics: ${err.message}\n`);
      });
    });
  }

  async start(): Promise<AddressInfo> {
    this.bound = await listen(this.server, parseBindAddress(this.opts.address, 'metrics bind address'), 'metrics server');
    return this.bound;
  }

  get port(): number | undefined {
    return this.bound?.port;
  }

  stop(): Promise<void> {
    return close(this.server);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    boundBody(req);
    const path = (req.url ?? '/').split('?')[0];
    const text = { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' };
    switch (path) {
      case '/metrics': {
        const { contentType, body } = await this.opts.metrics.scrape();
        res.writeHead(200, { 'Content-Type': contentType }).end(body);
        return;
      }
      case '/proxyMode':
        res.writeHead(200, text).end(this.opts.proxyMode ?? 'nftables');
        return;
      case '/configz':
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ [CONFIGZ_GROUP]: this.opts.configz?.() ?? {} }));
        return;
      case '/healthz':
        res.writeHead(200, text).end('ok');
        return;
      default:
        res.writeHead(404, text).end('404 page not found\n');
    }
  }
}
