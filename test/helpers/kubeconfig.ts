// A kubeconfig in the shape kubeadm writes for kube-proxy: one cluster, one context, a user that
// reads its token from a file.

export function kubeconfigYaml(opts: { server: string; tokenFile: string; caFile?: string; indent?: string }): string {
  const cluster = opts.caFile ? `    certificate-authority: ${opts.caFile}` : '    insecure-skip-tls-verify: true';
  const text = `apiVersion: v1
kind: Config
clusters:
- cluster:
${cluster}
    server: ${opts.server}
  name: default
contexts:
- context:
    cluster: default
    namespace: default
    user: default
  name: default
current-context: default
users:
- name: default
  user:
    tokenFile: ${opts.tokenFile}
`;
  const indent = opts.indent ?? '';
  return indent ? text.split('\n').map((l) => (l ? indent + l : l)).join('\n') : text;
}
