// The kubeconfig reader (src/k8s/kubeconfig-file.ts) against the fields clientcmd reads for
// kube-proxy's users, and the fallback to @kubernetes/client-node for plugin users.

import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectApi } from '../../src/k8s/kubeconfig.js';
import { inClusterConfig, readKubeconfigFile } from '../../src/k8s/kubeconfig-file.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'nftlink-kubeconfig-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function kubeconfig(user: string, cluster = '    server: https://198.18.0.1:6443\n    insecure-skip-tls-verify: true'): string {
  const path = join(dir, 'kubeconfig.conf');
  writeFileSync(
    path,
    `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
${cluster}
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
users:
- name: u
  user:
${user}
`,
  );
  return path;
}

describe('kubeconfig file', () => {
  it('reads a static token, and prefers a token file next to it (relative to the file)', () => {
    expect(readKubeconfigFile(kubeconfig('    token: static')).settings!().headers.Authorization).toBe('Bearer static');
    writeFileSync(join(dir, 'token'), 'from-file\n');
    const cfg = readKubeconfigFile(kubeconfig('    token: static\n    tokenFile: token'));
    expect(cfg.settings!().headers.Authorization).toBe('Bearer from-file');
    // The token-file spelling too.
    expect(readKubeconfigFile(kubeconfig('    token-file: token')).settings!().headers.Authorization).toBe('Bearer from-file');
  });

  it('keeps the last token when a re-read fails, and names the file when there never was one', () => {
    writeFileSync(join(dir, 'token'), 't1');
    const cfg = readKubeconfigFile(kubeconfig('    tokenFile: token'));
    expect(cfg.settings!().headers.Authorization).toBe('Bearer t1');
    rmSync(join(dir, 'token'));
    expect(cfg.settings!().headers.Authorization).toBe('Bearer t1');
    const fresh = readKubeconfigFile(kubeconfig('    tokenFile: token'));
    expect(() => fresh.settings!()).toThrow(/kubeconfig .*kubeconfig.conf: user u: cannot apply credentials: token file .*token: ENOENT/);
  });

  it('reads client certificates and the CA from data and from files, and basic auth', () => {
    writeFileSync(join(dir, 'ca.crt'), 'CA-PEM');
    const data = (s: string) => Buffer.from(s).toString('base64');
    const cfg = readKubeconfigFile(kubeconfig(`    client-certificate-data: ${data('CERT')}\n    client-key-data: ${data('KEY')}`, '    server: https://198.18.0.1:6443\n    certificate-authority: ca.crt\n    tls-server-name: api.example'));
    const s = cfg.settings!();
    expect([s.ca?.toString(), s.cert?.toString(), s.key?.toString(), s.servername, s.rejectUnauthorized]).toEqual(['CA-PEM', 'CERT', 'KEY', 'api.example', undefined]);
    writeFileSync(join(dir, 'c.crt'), 'CERT2');
    writeFileSync(join(dir, 'c.key'), 'KEY2');
    const files = readKubeconfigFile(kubeconfig('    client-certificate: c.crt\n    client-key: c.key', `    server: https://198.18.0.1:6443\n    certificate-authority-data: ${data('CA2')}`)).settings!();
    expect([files.ca?.toString(), files.cert?.toString(), files.key?.toString()]).toEqual(['CA2', 'CERT2', 'KEY2']);
    expect(readKubeconfigFile(kubeconfig('    username: admin\n    password: secret')).settings!().headers.Authorization).toBe(`Basic ${data('admin:secret')}`);
    expect(readKubeconfigFile(kubeconfig('    token: t')).settings!().rejectUnauthorized).toBe(false);
  });

  it('names what is wrong', () => {
    const path = join(dir, 'bad.conf');
    writeFileSync(path, 'apiVersion: v1\nkind: Config\n');
    expect(() => readKubeconfigFile(path)).toThrow(/bad.conf: no current cluster/);
    writeFileSync(path, 'current-context: x\ncontexts: [{name: x, context: {cluster: nowhere}}]\n');
    expect(() => readKubeconfigFile(path)).toThrow(/bad.conf: no current cluster \(context x names cluster "nowhere", which is not in clusters\)/);
    expect(() => readKubeconfigFile(kubeconfig('    token: [1, 2]'))).toThrow(/kubeconfig.conf: user u: token: must be a string/);
    writeFileSync(path, 'a: [');
    expect(() => readKubeconfigFile(path)).toThrow(/bad.conf: not valid YAML/);
  });

  it('leaves plugin users to client-node, which runs their exec plugin', async () => {
    const plugin = join(dir, 'credential-plugin.sh');
    writeFileSync(plugin, '#!/bin/sh\necho \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-plugin"}}\'\n');
    chmodSync(plugin, 0o755);
    const path = kubeconfig(`    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: ${plugin}\n      interactiveMode: Never`);
    const cfg = readKubeconfigFile(path);
    expect(cfg.settings).toBeUndefined();
    expect(cfg.plugin).toBe('exec');
    const conn = await connectApi({ kubeconfig: path });
    try {
      expect((await conn.headers()).Authorization).toBe('Bearer from-plugin');
    } finally {
      conn.close();
    }
  });
});

describe('in-cluster configuration', () => {
  it('puts an IPv6 host in brackets and reads the service account', () => {
    const sa = join(dir, 'var/run/secrets/kubernetes.io/serviceaccount');
    mkdirSync(sa, { recursive: true });
    writeFileSync(join(sa, 'token'), 'sa');
    writeFileSync(join(sa, 'ca.crt'), 'CA');
    const cfg = inClusterConfig({ KUBERNETES_SERVICE_HOST: '2001:db8::1', KUBERNETES_SERVICE_PORT: '443' }, dir);
    expect(cfg.server).toBe('https://[2001:db8::1]:443');
    const s = cfg.settings!();
    expect([s.headers.Authorization, s.ca?.toString()]).toEqual(['Bearer sa', 'CA']);
  });
});
