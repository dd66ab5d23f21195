// deploy/: every object validated against the Kubernetes schema (kubernetes-models' validators,
// Kubernetes 1.27 OpenAPI), the ConfigMap's config.conf decoded by nftlink's own strict decoder, its
// kubeconfig.conf loaded by nftlink's kubeconfig loader, and the DaemonSet checked for what a
// kube-proxy replacement needs.

import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { DaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { parseKubeProxyConfig } from '../../src/config/kube-proxy-config.js';
import { connectApi } from '../../src/k8s/kubeconfig.js';

const FILE = new URL('../../deploy/nftlink-proxy.yaml', import.meta.url).pathname;
type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; [k: string]: unknown };
const objects = parseAllDocuments(readFileSync(FILE, 'utf8')).map((d) => {
  if (d.errors.length) throw new Error(`${FILE}: ${d.errors[0]!.message}`);
  return d.toJS() as Obj;
});
const byKind = (kind: string): Obj => {
  const o = objects.find((x) => x.kind === kind);
  if (!o) throw new Error(`no ${kind} in ${FILE}`);
  return o;
};
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/ServiceAccount': ServiceAccount,
  'v1/ConfigMap': ConfigMap,
  'apps/v1/DaemonSet': DaemonSet,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': ClusterRoleBinding,
};

describe('deploy/nftlink-proxy.yaml', () => {
  it('has the four objects, each valid against the Kubernetes schema', () => {
    expect(objects.map((o) => o.kind).sort()).toEqual(['ClusterRoleBinding', 'ConfigMap', 'DaemonSet', 'ServiceAccount']);
    for (const o of objects) {
      const Model = MODELS[`${o.apiVersion}/${o.kind}`];
      expect(Model, `${o.apiVersion} ${o.kind}`).toBeDefined();
      expect(() => new Model!(o as never).validate(), `${o.kind} ${o.metadata.name}`).not.toThrow();
    }
  });

  it('the validator does reject a wrong object (the check is real)', () => {
    const bad = structuredClone(byKind("DaemonSet")) as unknown as { spec: { template: { spec: { hostNetwork: unknown } } } };
    bad.spec.template.spec.hostNetwork = 'yes';
    expect(() => new DaemonSet(bad as never).validate()).toThrow(/hostNetwork must be boolean/);
  });

  it('binds the ServiceAccount to system:node-proxier', () => {
    const crb = byKind('ClusterRoleBinding') as Obj & { roleRef: { kind: string; name: string }; subjects: { kind: string; name: string; namespace: string }[] };
    expect(crb.roleRef).toMatchObject({ kind: 'ClusterRole', name: 'system:node-proxier' });
    const sa = byKind('ServiceAccount');
    expect(crb.subjects).toEqual([{ kind: 'ServiceAccount', name: sa.metadata.name, namespace: sa.metadata.namespace }]);
  });

  it("the ConfigMap is kubeadm's kube-proxy shape: config.conf decodes (mode nftables), kubeconfig.conf has a tokenFile user", async () => {
    const cm = byKind('ConfigMap') as Obj & { data: Record<string, string> };
    expect(Object.keys(cm.data).sort()).toEqual(['config.conf', 'kubeconfig.conf']);
    const cfg = parseKubeProxyConfig(cm.data['config.conf']!, 'config.conf');
    expect(cfg.mode).toBe('nftables');
    expect(cfg.clientConnection.kubeconfig).toBe('/var/lib/kube-proxy/kubeconfig.conf');
    expect(cfg.healthzBindAddress).toBe('0.0.0.0:10256');
    expect(cfg.metricsBindAddress).toBe('127.0.0.1:10249');
    expect(cm.data['config.conf']).toMatch(/^mode: nftables$/m);
    // nftlink's loader takes the kubeconfig (tokenFile, CA file) as kube-proxy's client-go would.
    const dir = mkdtempSync(join(tmpdir(), 'nftlink-deploy-'));
    try {
      const text = cm.data['kubeconfig.conf']!.replace('/var/run/secrets/kubernetes.io/serviceaccount/token', join(dir, 'token')).replace(/\n\s*certificate-authority: .*/, '\n    insecure-skip-tls-verify: true');
      expect(cm.data['kubeconfig.conf']).toContain('tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token');
      writeFileSync(join(dir, 'token'), 'sa-token');
      writeFileSync(join(dir, 'kubeconfig.conf'), text);
      const conn = await connectApi({ kubeconfig: join(dir, 'kubeconfig.conf') });
      expect(conn.server).toBe('https://control-plane.example:6443');
      expect(await conn.headers()).toMatchObject({ Authorization: 'Bearer sa-token' });
      conn.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the DaemonSet runs like kube-proxy: hostNetwork, privileged, tolerations, system-node-critical, probes on 10256, the ConfigMap at /var/lib/kube-proxy', () => {
    const ds = byKind('DaemonSet') as Obj & { spec: { template: { spec: Record<string, any> } } };
    const pod = ds.spec.template.spec;
    expect(pod.hostNetwork).toBe(true);
    expect(pod.priorityClassName).toBe('system-node-critical');
    expect(pod.tolerations).toContainEqual({ operator: 'Exists' });
    expect(pod.serviceAccountName).toBe(byKind('ServiceAccount').metadata.name);
    const [c] = pod.containers as Record<string, any>[];
    expect(c!.image).toBe('nftlink:latest');
    expect(c!.securityContext.privileged).toBe(true);
    expect(c!.args).toEqual(['proxy', '--config=/var/lib/kube-proxy/config.conf', '--hostname-override=$(NODE_NAME)']);
    expect(c!.livenessProbe.httpGet).toMatchObject({ port: 10256, path: '/livez' });
    expect(c!.env.map((e: { name: string }) => e.name).sort()).toEqual(['HOSTNAME', 'NODE_NAME']);
    for (const e of c!.env) expect(e.valueFrom.fieldRef.fieldPath).toBe('spec.nodeName');
    const mount = c!.volumeMounts.find((m: { mountPath: string }) => m.mountPath === '/var/lib/kube-proxy');
    const volume = pod.volumes.find((v: { name: string }) => v.name === mount.name);
    expect(volume.configMap.name).toBe(byKind('ConfigMap').metadata.name);
    // No xtables lock: nftlink never runs iptables.
    expect(JSON.stringify(pod)).not.toContain('xtables');
    // The image's entrypoint is /app/bin/nftlink.js: args start with the subcommand.
    expect(readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8')).toMatch(/ENTRYPOINT \["\/app\/bin\/nftlink\.js"\]/);
  });
});
