// How the proxy reaches the API server: a kubeconfig file (--kubeconfig, clientConnection.kubeconfig)
// or, without one, the in-cluster configuration (the pod's service account), as kube-proxy's
// clientcmd.BuildConfigFromFlags does. @kubernetes/client-node loads the file and applies its
// credentials (client certificates, tokens, exec and OIDC plugins); this module adds what it
// lacks for kube-proxy's kubeconfigs:
//
// - `tokenFile`: kubeadm's kube-proxy kubeconfig authenticates with
//   `user: {tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token}` (client-go's field
//   name). client-node 1.4 does not know that spelling (it reads `token-file`, once, at load), so
//   both are turned into client-node's file token provider, which re-reads the file every minute
//   like client-go does: projected service account tokens rotate, and a token read at start
//   expires within hours.
// - one HTTP agent with TCP keepalive (30 s, client-go's dialer default) for every request, so a
//   dead API server connection under a quiet watch is noticed and connections are reused.
//
// The in-cluster configuration reaches the API server through KUBERNETES_SERVICE_HOST/PORT, which
// is the `kubernetes` Service's ClusterIP: an address the proxy itself programs. On a node where
// the proxy has not programmed it yet (a fresh node, a restarted node after its table was flushed)
// nothing answers there. Operators should therefore give the API server's real address in a
// kubeconfig, as kubeadm's kube-proxy ConfigMap does (its kubeconfig.conf names the control plane
// endpoint and uses the service account's token file and CA); nftlink warns when it falls back to
// in-cluster configuration.

import { readFileSync } from 'node:fs';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent, type RequestOptions } from 'node:https';
import { dirname, isAbsolute, join } from 'node:path';
import { KubeConfig, type User } from '@kubernetes/client-node';
import { parse } from 'yaml';

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

export class KubeconfigError extends Error {}

/** Loads the configuration and builds the connection; errors name the file and the problem. */
export async function connectApi(opts: ApiConnectionOptions = {}): Promise<ApiConnection> {
  const kc = new KubeConfig();
  let origin: string;
  if (opts.kubeconfig) {
    origin = opts.kubeconfig;
    loadKubeconfigFile(kc, opts.kubeconfig);
  } else {
    origin = 'in-cluster';
    const env = opts.env ?? process.env;
    if (!env.KUBERNETES_SERVICE_HOST || !env.KUBERNETES_SERVICE_PORT) {
      throw new KubeconfigError('no kubeconfig given and not running in a cluster (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set)');
    }
    withEnv(env, () => kc.loadFromCluster(opts.serviceAccountRoot ?? ''));
  }
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  if (!cluster) throw new KubeconfigError(`${origin}: no current cluster (set current-context, or a context naming a cluster)`);
  if (cluster.proxyUrl) throw new KubeconfigError(`${origin}: cluster ${cluster.name}: proxy-url is not supported`);
  const server = (opts.master || cluster.server).replace(/\/+$/, '');
  if (!/^https?:\/\//.test(server)) throw new KubeconfigError(`${origin}: cluster ${cluster.name}: server "${server}" is not an http(s) URL`);
  if (server.startsWith('http:') && !opts.master && !cluster.skipTLSVerify) {
    throw new KubeconfigError(`${origin}: cluster ${cluster.name}: plain http needs insecure-skip-tls-verify: true`);
  }

  const applied = async (): Promise<RequestOptions> => {
    const o: RequestOptions = { headers: {} };
    try {
      await kc.applyToHTTPSOptions(o);
    } catch (err) {
      throw new KubeconfigError(`${origin}: user ${user?.name ?? '(none)'}: cannot apply credentials: ${(err as Error).message}`);
    }
    return o;
  };

  const first = await applied();
  let tls = tlsMaterial(first);
  let agent = makeAgent(server, first);
  const connection: ApiConnection = {
    server,
    origin,
    get agent() {
      return agent;
    },
    async headers() {
      const o = await applied();
      // Client certificates rotate too (kubelet-style rotation): a changed one needs a new agent.
      const now = tlsMaterial(o);
      if (now !== tls) {
        tls = now;
        agent.destroy();
        agent = makeAgent(server, o);
      }
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(o.headers ?? {})) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : String(v);
      if (o.auth) out.Authorization = `Basic ${Buffer.from(o.auth).toString('base64')}`;
      return out;
    },
    close() {
      agent.destroy();
    },
  };
  return connection;
}

function makeAgent(server: string, o: RequestOptions): HttpAgent {
  const common = { keepAlive: true, keepAliveMsecs: TCP_KEEPALIVE_MS };
  if (server.startsWith('http:')) return new HttpAgent(common);
  return new HttpsAgent({
    ...common,
    ...(o.ca ? { ca: o.ca } : {}),
    ...(o.cert ? { cert: o.cert } : {}),
    ...(o.key ? { key: o.key } : {}),
    ...(o.rejectUnauthorized !== undefined ? { rejectUnauthorized: o.rejectUnauthorized } : {}),
    ...(o.servername ? { servername: o.servername } : {}),
  });
}

function tlsMaterial(o: RequestOptions): string {
  const text = (v: unknown): string => (v === undefined ? '' : Buffer.isBuffer(v) ? v.toString('base64') : String(v));
  return [text(o.ca), text(o.cert), text(o.key), String(o.rejectUnauthorized), text(o.servername)].join('|');
}

/** client-node reads process.env itself; in-cluster loading in tests gets its own environment. */
function withEnv(env: NodeJS.ProcessEnv, fn: () => void): void {
  if (env === process.env) return fn();
  const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
  process.env.KUBERNETES_SERVICE_HOST = env.KUBERNETES_SERVICE_HOST;
  process.env.KUBERNETES_SERVICE_PORT = env.KUBERNETES_SERVICE_PORT;
  try {
    fn();
  } finally {
    for (const [key, value] of [['KUBERNETES_SERVICE_HOST', saved.host], ['KUBERNETES_SERVICE_PORT', saved.port]] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}

interface RawUser {
  name?: unknown;
  user?: { tokenFile?: unknown; 'token-file'?: unknown } | null;
}

/** Loads a kubeconfig file, with token files as refreshing token providers. */
function loadKubeconfigFile(kc: KubeConfig, path: string): void {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new KubeconfigError(`kubeconfig ${path}: cannot read: ${(err as Error).message}`);
  }
  let raw: { users?: RawUser[] };
  try {
    raw = (parse(text) ?? {}) as { users?: RawUser[] };
  } catch (err) {
    throw new KubeconfigError(`kubeconfig ${path}: not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  const tokenFiles = new Map<string, string>();
  for (const [i, u] of (Array.isArray(raw.users) ? raw.users : []).entries()) {
    const file = u?.user?.tokenFile ?? u?.user?.['token-file'];
    if (file === undefined || file === null || file === '') continue;
    if (typeof file !== 'string') throw new KubeconfigError(`kubeconfig ${path}: users[${i}].user.tokenFile: must be a path`);
    // Relative paths are relative to the kubeconfig's directory, as client-go resolves them.
    tokenFiles.set(String(u.name), isAbsolute(file) ? file : join(dirname(path), file));
    // client-node would read `token-file` once here; drop it, the provider below reads it.
    delete u.user!['token-file'];
  }
  try {
    // Load from the edited document so that a missing token file surfaces at the first request,
    // naming the file, instead of as a bare ENOENT while loading.
    kc.loadFromString(JSON.stringify(raw));
    kc.makePathsAbsolute(dirname(path));
  } catch (err) {
    throw new KubeconfigError(`kubeconfig ${path}: ${(err as Error).message}`);
  }
  if (!tokenFiles.size) return;
  kc.users = kc.users.map((u): User => {
    const file = tokenFiles.get(u.name);
    if (!file) return u;
    // A static token next to a token file: client-go prefers the file's; so do we.
    const { token: _staticToken, ...rest } = u;
    return { ...rest, authProvider: { name: 'tokenFile', config: { tokenFile: file } } };
  });
}
