// A kubeconfig file read as client-go's clientcmd reads the parts kube-proxy's kubeconfigs use: the
// current context's cluster (server, CA, insecure-skip-tls-verify, tls-server-name) and user (a
// token, a token file, a client certificate and key, basic auth), and the in-cluster
// configuration (the pod's service account). Written here rather than taken from
// @kubernetes/client-node because loading that package loads its whole generated API with it
// (about 80 MB of RSS and, on a quiet machine, a few hundred ms of start-up), and the proxy uses
// none of it. Users that need more (an exec or auth-provider plugin, impersonation) still go
// through client-node: kubeconfig-plugins.ts, loaded only for them.

import { readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { dirname, isAbsolute, join } from 'node:path';
import { yaml } from '../on-demand.js';

export class KubeconfigError extends Error {}

/** TLS settings for the agent, and the headers of one request (tokens are read fresh). */
export interface ClientSettings {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  rejectUnauthorized?: boolean;
  servername?: string;
  headers: Record<string, string>;
}

export interface ResolvedKubeconfig {
  clusterName: string;
  userName: string;
  server: string;
  skipTLSVerify: boolean;
  proxyUrl: string | undefined;
  /**
   * The settings of the next request; undefined when the user needs what only client-node does
   * (`plugin` says which): the caller takes the file to kubeconfig-plugins.ts then.
   */
  settings: (() => ClientSettings) | undefined;
  plugin: string | undefined;
}

/** client-go re-reads a token file at most this often (transport's cached file token source). */
const TOKEN_FILE_PERIOD_MS = 60_000;
/** The service account's files, as client-go's rest.InClusterConfig reads them. */
const SERVICE_ACCOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

/** User fields that only client-node applies (plugins and impersonation). */
const PLUGIN_FIELDS = ['exec', 'auth-provider', 'as', 'as-uid', 'as-groups', 'as-user-extra'];

type Raw = Record<string, unknown>;

/** The current context of a kubeconfig file, resolved; errors name the file and the field. */
export function readKubeconfigFile(path: string): ResolvedKubeconfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new KubeconfigError(`kubeconfig ${path}: cannot read: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = yaml().parse(text) ?? {};
  } catch (err) {
    throw new KubeconfigError(`kubeconfig ${path}: not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  const fail = (problem: string): never => {
    throw new KubeconfigError(`kubeconfig ${path}: ${problem}`);
  };
  if (!isRecord(doc)) return fail('not a mapping');
  const current = doc['current-context'];
  if (typeof current !== 'string' || current === '') return fail('no current cluster (set current-context, or a context naming a cluster)');
  const context = named(doc.contexts, 'contexts', current, 'context', fail);
  if (!context) return fail(`current-context ${current}: no such context`);
  const clusterName = str(context.cluster, `context ${current}: cluster`, fail) ?? '';
  const cluster = clusterName !== '' ? named(doc.clusters, 'clusters', clusterName, 'cluster', fail) : undefined;
  if (!cluster) return fail(`no current cluster (context ${current} names cluster ${JSON.stringify(clusterName)}, which is not in clusters)`);
  const userName = str(context.user, `context ${current}: user`, fail) ?? '';
  const user = userName ? named(doc.users, 'users', userName, 'user', fail) : {};
  if (userName && !user) return fail(`context ${current}: user ${userName} is not in users`);

  // Relative paths are relative to the kubeconfig's directory, as clientcmd resolves them.
  const dir = dirname(path);
  const file = (v: unknown, field: string): string | undefined => {
    const p = str(v, field, fail);
    return p === undefined || p === '' ? undefined : isAbsolute(p) ? p : join(dir, p);
  };
  const server = str(cluster.server, `cluster ${clusterName}: server`, fail) ?? '';
  const skipTLSVerify = cluster['insecure-skip-tls-verify'] === true;
  const caFile = file(cluster['certificate-authority'], `cluster ${clusterName}: certificate-authority`);
  const caData = str(cluster['certificate-authority-data'], `cluster ${clusterName}: certificate-authority-data`, fail);
  const servername = str(cluster['tls-server-name'], `cluster ${clusterName}: tls-server-name`, fail);
  const proxyUrl = str(cluster['proxy-url'], `cluster ${clusterName}: proxy-url`, fail);

  const u = user ?? {};
  const plugin = PLUGIN_FIELDS.find((f) => u[f] !== undefined && u[f] !== null);
  const userField = (f: string): string => `user ${userName}: ${f}`;
  const tokenFile = file(u.tokenFile ?? u['token-file'], userField('tokenFile'));
  const token = str(u.token, userField('token'), fail);
  const certFile = file(u['client-certificate'], userField('client-certificate'));
  const certData = str(u['client-certificate-data'], userField('client-certificate-data'), fail);
  const keyFile = file(u['client-key'], userField('client-key'));
  const keyData = str(u['client-key-data'], userField('client-key-data'), fail);
  const username = str(u.username, userField('username'), fail);
  const password = str(u.password, userField('password'), fail);

  const where = `kubeconfig ${path}: user ${userName || '(none)'}`;
  const tokens = tokenFile ? new TokenFile(tokenFile) : undefined;
  const settings = (): ClientSettings => {
    const out: ClientSettings = { headers: {} };
    try {
      const ca = caData ? Buffer.from(caData, 'base64') : caFile ? readFileSync(caFile) : undefined;
      if (ca && !skipTLSVerify) out.ca = ca;
      if (skipTLSVerify) out.rejectUnauthorized = false;
      if (servername) out.servername = servername;
      // Client certificates are read at every request too: they rotate (kubelet-style rotation).
      const cert = certData ? Buffer.from(certData, 'base64') : certFile ? readFileSync(certFile) : undefined;
      const key = keyData ? Buffer.from(keyData, 'base64') : keyFile ? readFileSync(keyFile) : undefined;
      if (cert) out.cert = cert;
      if (key) out.key = key;
      // A token file's token over a static one, as client-go prefers it.
      const bearer = tokens?.read() ?? token;
      if (bearer) out.headers.Authorization = `Bearer ${bearer}`;
      else if (username !== undefined || password !== undefined) out.headers.Authorization = `Basic ${Buffer.from(`${username ?? ''}:${password ?? ''}`).toString('base64')}`;
    } catch (err) {
      throw new KubeconfigError(`${where}: cannot apply credentials: ${(err as Error).message}`);
    }
    return out;
  };
  return { clusterName, userName, server, skipTLSVerify, proxyUrl, settings: plugin ? undefined : settings, plugin };
}

/** The in-cluster configuration: the API server by its Service's environment, the service account's token and CA. */
export function inClusterConfig(env: NodeJS.ProcessEnv, root = ''): ResolvedKubeconfig {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) throw new KubeconfigError('no kubeconfig given and not running in a cluster (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set)');
  const dir = `${root}${SERVICE_ACCOUNT}`;
  const tokens = new TokenFile(join(dir, 'token'));
  const settings = (): ClientSettings => {
    try {
      const ca = readFileSync(join(dir, 'ca.crt'));
      // An empty CA file trusts the system's roots (no cluster CA to add).
      return { ...(ca.length ? { ca } : {}), headers: { Authorization: `Bearer ${tokens.read()}` } };
    } catch (err) {
      throw new KubeconfigError(`in-cluster: cannot apply credentials: ${(err as Error).message}`);
    }
  };
  // rest.InClusterConfig: https, net.JoinHostPort.
  const server = `https://${isIPv6(host) ? `[${host}]` : host}:${port}`;
  return { clusterName: 'in-cluster', userName: 'service account', server, skipTLSVerify: false, proxyUrl: undefined, settings, plugin: undefined };
}

/**
 * A token file read again once a minute (projected service account tokens rotate, and one read at
 * start expires within hours); a failed re-read keeps the last token, as client-go does.
 */
class TokenFile {
  private token: string | undefined;
  private readAt = -Infinity;

  constructor(private readonly path: string) {}

  read(): string {
    const now = performance.now();
    if (this.token !== undefined && now - this.readAt < TOKEN_FILE_PERIOD_MS) return this.token;
    try {
      this.token = readFileSync(this.path, 'utf8').trim();
      this.readAt = now;
    } catch (err) {
      if (this.token === undefined) throw new Error(`token file ${this.path}: ${(err as Error).message}`);
    }
    return this.token;
  }
}

function isRecord(v: unknown): v is Raw {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function str(v: unknown, field: string, fail: (problem: string) => never): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') return fail(`${field}: must be a string`);
  return v;
}

/** The `inner` mapping of the entry called `name` in the list `listField` ({name, cluster: {...}}). */
function named(list: unknown, listField: string, name: string, inner: string, fail: (problem: string) => never): Raw | undefined {
  if (list === undefined || list === null) return undefined;
  if (!Array.isArray(list)) return fail(`${listField}: must be a list`);
  const entry = list.find((e): e is Raw => isRecord(e) && e.name === name);
  if (!entry) return undefined;
  const body = entry[inner] ?? {};
  if (!isRecord(body)) return fail(`${listField} ${name}: ${inner}: must be a mapping`);
  return body;
}
