// Kubeconfig users that need @kubernetes/client-node: exec and auth-provider plugins (OIDC, cloud
// providers) and impersonation. Imported only when the kubeconfig's current user has one of them
// (kubeconfig-file.ts says why not always); client-node applies its credentials per request.
//
// client-node (2.0, as 1.4 before it) does not know client-go's `tokenFile` spelling (it reads
// `token-file`, once, at load): both become its file token provider, which re-reads the file every
// minute like client-go.

import { dirname, isAbsolute, join } from 'node:path';
import { KubeConfig, type User } from '@kubernetes/client-node';
import type { RequestOptions } from 'node:https';

import { KubeconfigError, type ClientSettings } from './kubeconfig-file.js';
import { yaml } from '../on-demand.js';

/** Loads the file into client-node; the settings of each request come from its credentials. */
export function pluginSettings(path: string, text: string): () => Promise<ClientSettings> {
  const kc = new KubeConfig();
  loadKubeconfigText(kc, path, text);
  const user = kc.getCurrentUser();
  return async () => {
    const o: RequestOptions = { headers: {} };
    try {
      await kc.applyToHTTPSOptions(o);
    } catch (err) {
      throw new KubeconfigError(`kubeconfig ${path}: user ${user?.name ?? '(none)'}: cannot apply credentials: ${(err as Error).message}`);
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(o.headers ?? {})) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
    if (o.auth) headers.Authorization = `Basic ${Buffer.from(o.auth).toString('base64')}`;
    const buf = (v: unknown): Buffer | undefined => (v === undefined || v === null ? undefined : Buffer.isBuffer(v) ? v : Buffer.from(String(v)));
    const out: ClientSettings = { headers };
    const ca = buf(o.ca);
    const cert = buf(o.cert);
    const key = buf(o.key);
    if (ca) out.ca = ca;
    if (cert) out.cert = cert;
    if (key) out.key = key;
    if (o.rejectUnauthorized !== undefined) out.rejectUnauthorized = o.rejectUnauthorized;
    if (o.servername) out.servername = o.servername;
    return out;
  };
}

interface RawUser {
  name?: unknown;
  user?: { tokenFile?: unknown; 'token-file'?: unknown } | null;
}

/** Loads a kubeconfig file's text, with token files as refreshing token providers. */
function loadKubeconfigText(kc: KubeConfig, path: string, text: string): void {
  let raw: { users?: RawUser[] };
  try {
    raw = (yaml().parse(text) ?? {}) as { users?: RawUser[] };
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
