// How the proxy reaches the API server: a kubeconfig file (--kubeconfig, clientConnection.kubeconfig)
// or, without one, the in-cluster configuration (the pod's service account), as kube-proxy's
// clientcmd.BuildConfigFromFlags does. kubeconfig-file.ts reads the file (and the in-cluster
// files) as clientcmd does for the users kube-proxy's kubeconfigs have: kubeadm's, for one,
// authenticates with `user: {tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token}`,
// re-read every minute since projected tokens rotate. A user with an exec or auth-provider plugin
// or impersonation goes through @kubernetes/client-node (kubeconfig-plugins.ts), loaded only then.
// Either way one HTTP agent with TCP keepalive (30 s, client-go's dialer default) serves every
// request, so a dead API server connection under a quiet watch is noticed and connections are reused.
//
// The in-cluster configuration reaches the API server through KUBERNETES_SERVICE_HOST/PORT, which
// is the `kubernetes` Service's ClusterIP: an address the proxy itself programs. On a node where
// the proxy has not programmed it yet (a fresh node, a restarted node after its table was flushed)
// nothing answers there. Operators should therefore give the API server's real address in a
// kubeconfig, as kubeadm's kube-proxy ConfigMap does (its kubeconfig.conf names the control plane
// endpoint and uses the service account's token file and CA); nftlink warns when it falls back to
// in-cluster configuration.

import { readFileSync } from 'node:fs';
import type { Agent as HttpAgent } from 'node:http';
import { inClusterConfig, KubeconfigError, readKubeconfigFile, type ClientSettings } from './kubeconfig-file.js';
import { http, https } from '../on-demand.js';

/** client-go's dialer keepalive period. */
const TCP_KEEPALIVE_MS = 30_000;

export interface ApiConnectionOptions {
  /** Path of a kubeconfig file; absent or '': in-cluster configuration. */
  kubeconfig?: string;
  /** Overrides the kubeconfig's server (kube-proxy's --master). */
  master?: string;
  /** Environment to read KUBERNETES_SERVICE_HOST/PORT from (default process.env; tests). */
  env?: NodeJS.ProcessEnv;
  /** Prefix of /var/run/secrets/kubernetes.io/serviceaccount for in-cluster files (tests). */
  serviceAccountRoot?: string;
}

/** The API server and how to talk to it; every request asks for fresh headers (tokens rotate). */
export interface ApiConnection {
  /** "https://host:port" (no trailing slash). */
  server: string;
  /** Shared by every request: keepalive sockets, the cluster's CA and client certificate. */
  agent: HttpAgent;
  /** Authorization (and impersonation) headers for one request. */
  headers(): Promise<Record<string, string>>;
  /** Where the configuration came from, for logs: the kubeconfig path or "in-cluster". */
  origin: string;
  close(): void;
}

export { KubeconfigError };

/** Loads the configuration and builds the connection; errors name the file and the problem. */
export async function connectApi(opts: ApiConnectionOptions = {}): Promise<ApiConnection> {
  const origin = opts.kubeconfig ? opts.kubeconfig : 'in-cluster';
  const cfg = opts.kubeconfig ? readKubeconfigFile(opts.kubeconfig) : inClusterConfig(opts.env ?? process.env, opts.serviceAccountRoot);
  if (cfg.proxyUrl) throw new KubeconfigError(`${origin}: cluster ${cfg.clusterName}: proxy-url is not supported`);
  const server = (opts.master || cfg.server).replace(/\/+$/, '');
  if (!/^https?:\/\//.test(server)) throw new KubeconfigError(`${origin}: cluster ${cfg.clusterName}: server "${server}" is not an http(s) URL`);
  if (server.startsWith('http:') && !opts.master && !cfg.skipTLSVerify) {
    throw new KubeconfigError(`${origin}: cluster ${cfg.clusterName}: plain http needs insecure-skip-tls-verify: true`);
  }
  const settings: () => Promise<ClientSettings> | ClientSettings = cfg.settings ?? (await import('./kubeconfig-plugins.js')).pluginSettings(opts.kubeconfig!, readFileSync(opts.kubeconfig!, 'utf8'));

  const first = await settings();
  let tls = tlsMaterial(first);
  let agent = makeAgent(server, first);
  const connection: ApiConnection = {
    server,
    origin,
    get agent() {
      return agent;
    },
    async headers() {
      const o = await settings();
      // Client certificates rotate too (kubelet-style rotation): a changed one needs a new agent.
      const now = tlsMaterial(o);
      if (now !== tls) {
        tls = now;
        agent.destroy();
        agent = makeAgent(server, o);
      }
      return { ...o.headers };
    },
    close() {
      agent.destroy();
    },
  };
  return connection;
}

function makeAgent(server: string, o: ClientSettings): HttpAgent {
  const common = { keepAlive: true, keepAliveMsecs: TCP_KEEPALIVE_MS };
  if (server.startsWith('http:')) return new (http().Agent)(common);
  return new (https().Agent)({
    ...common,
    ...(o.ca ? { ca: o.ca } : {}),
    ...(o.cert ? { cert: o.cert } : {}),
    ...(o.key ? { key: o.key } : {}),
    ...(o.rejectUnauthorized !== undefined ? { rejectUnauthorized: o.rejectUnauthorized } : {}),
    ...(o.servername ? { servername: o.servername } : {}),
  });
}

function tlsMaterial(o: ClientSettings): string {
  const text = (v: unknown): string => (v === undefined ? '' : Buffer.isBuffer(v) ? v.toString('base64') : String(v));
  return [text(o.ca), text(o.cert), text(o.key), String(o.rejectUnauthorized), text(o.servername)].join('|');
}
