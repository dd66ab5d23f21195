// kube-proxy's iptables mode for a ProxyState of ClusterIP services, as iptables-restore input, in
// the shapes pkg/proxy/iptables/proxier.go writes (Kubernetes 1.30 and later): in nat, one rule per
// service port in KUBE-SERVICES (`-d VIP/32 -p tcp --dport P -j KUBE-SVC-x`, in the order given,
// so the last service is matched last, after every other rule), a KUBE-SVC-x chain with the
// masquerade rule for traffic from outside the cluster CIDR and one `-m statistic --mode random
// --probability 1/(n-i)` jump per endpoint, a KUBE-SEP-y chain per endpoint (hairpin masquerade,
// DNAT), KUBE-MARK-MASQ and KUBE-POSTROUTING; in filter, kube-proxy's forward, input and output
// jumps and KUBE-FORWARD. Chain names are kube-proxy's hashes (base32 of sha256, 16 characters).
// Left out: nfacct counters on the INVALID drop (need xt_nfacct), NodePorts, external IPs, load
// balancers and services without endpoints: the benchmark has none.

import { createHash } from 'node:crypto';
import type { LayoutConfig } from '../../src/proxy/layout/types.js';
import type { ProxyState, ServiceEndpoint, ServicePort } from '../../src/proxy/model/types.js';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** The first 16 characters of RFC 4648 base32 of sha256(text): kube-proxy's portProtoHash and friends. */
function hash16(text: string): string {
  const bytes = createHash('sha256').update(text).digest().subarray(0, 10);
  let bits = 0;
  let acc = 0;
  let out = '';
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += BASE32[(acc >> bits) & 31];
    }
  }
  return out;
}

const proto = (sp: ServicePort): string => sp.protocol.toLowerCase();

export function serviceChain(sp: ServicePort): string {
  return `KUBE-SVC-${hash16(sp.id + proto(sp))}`;
}

export function endpointChain(sp: ServicePort, ep: ServiceEndpoint): string {
  return `KUBE-SEP-${hash16(sp.id + proto(sp) + `${ep.ip}:${ep.port}`)}`;
}

/** `--comment X`, quoted when it has a space (as kube-proxy writes it). */
const comment = (text: string): string => `-m comment --comment ${text.includes(' ') ? `"${text}"` : text}`;

function filterTable(mark: string): string[] {
  return [
    '*filter',
    ':INPUT ACCEPT [0:0]',
    ':FORWARD ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ':KUBE-EXTERNAL-SERVICES - [0:0]',
    ':KUBE-FORWARD - [0:0]',
    ':KUBE-NODEPORTS - [0:0]',
    ':KUBE-PROXY-FIREWALL - [0:0]',
    ':KUBE-SERVICES - [0:0]',
    `-A INPUT -m conntrack --ctstate NEW ${comment('kubernetes load balancer firewall')} -j KUBE-PROXY-FIREWALL`,
    `-A INPUT ${comment('kubernetes health check service ports')} -j KUBE-NODEPORTS`,
    `-A INPUT -m conntrack --ctstate NEW ${comment('kubernetes externally-visible service portals')} -j KUBE-EXTERNAL-SERVICES`,
    `-A FORWARD -m conntrack --ctstate NEW ${comment('kubernetes load balancer firewall')} -j KUBE-PROXY-FIREWALL`,
    `-A FORWARD ${comment('kubernetes forwarding rules')} -j KUBE-FORWARD`,
    `-A FORWARD -m conntrack --ctstate NEW ${comment('kubernetes service portals')} -j KUBE-SERVICES`,
    `-A FORWARD -m conntrack --ctstate NEW ${comment('kubernetes externally-visible service portals')} -j KUBE-EXTERNAL-SERVICES`,
    `-A OUTPUT -m conntrack --ctstate NEW ${comment('kubernetes load balancer firewall')} -j KUBE-PROXY-FIREWALL`,
    `-A OUTPUT -m conntrack --ctstate NEW ${comment('kubernetes service portals')} -j KUBE-SERVICES`,
    '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP',
    `-A KUBE-FORWARD ${comment('kubernetes forwarding rules')} -m mark --mark ${mark}/${mark} -j ACCEPT`,
    `-A KUBE-FORWARD ${comment('kubernetes forwarding conntrack rule')} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`,
    'COMMIT',
  ];
}

/** The whole `iptables-restore` input (filter and nat tables) for the state's service ports. */
export function iptablesRestoreText(state: ProxyState, cfg: LayoutConfig): string {
  const mark = `0x${cfg.masqueradeMark.toString(16)}`;
  const chains: string[] = [];
  const services: string[] = [];
  const rules: string[] = [];
  for (const sp of state.services.values()) {
    const eps = (state.endpoints.get(sp.id) ?? []).filter((e) => e.ready);
    if (!eps.length) continue;
    const svc = serviceChain(sp);
    const p = proto(sp);
    const match = `-d ${sp.clusterIP}/32 -p ${p} -m ${p} --dport ${sp.port}`;
    chains.push(`:${svc} - [0:0]`);
    services.push(`-A KUBE-SERVICES ${comment(`${sp.id} cluster IP`)} ${match} -j ${svc}`);
    if (cfg.masqueradeAll) rules.push(`-A ${svc} ${comment(`${sp.id} cluster IP`)} ${match} -j KUBE-MARK-MASQ`);
    else for (const cidr of cfg.clusterCIDRs) rules.push(`-A ${svc} ${comment(`${sp.id} cluster IP`)} ${match} ! -s ${cidr} -j KUBE-MARK-MASQ`);
    eps.forEach((ep, i) => {
      const sep = endpointChain(sp, ep);
      const left = eps.length - i;
      const pick = left > 1 ? ` -m statistic --mode random --probability ${(1 / left).toFixed(10)}` : '';
      rules.push(`-A ${svc} ${comment(`${sp.id} -> ${ep.ip}:${ep.port}`)}${pick} -j ${sep}`);
    });
    for (const ep of eps) {
      const sep = endpointChain(sp, ep);
      chains.push(`:${sep} - [0:0]`);
      rules.push(`-A ${sep} ${comment(sp.id)} -s ${ep.ip}/32 -j KUBE-MARK-MASQ`);
      rules.push(`-A ${sep} ${comment(sp.id)} -p ${p} -m ${p} -j DNAT --to-destination ${ep.ip}:${ep.port}`);
    }
  }
  const nat = [
    '*nat',
    ':PREROUTING ACCEPT [0:0]',
    ':INPUT ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ':POSTROUTING ACCEPT [0:0]',
    ':KUBE-MARK-MASQ - [0:0]',
    ':KUBE-NODEPORTS - [0:0]',
    ':KUBE-POSTROUTING - [0:0]',
    ':KUBE-SERVICES - [0:0]',
    ...chains,
    `-A PREROUTING ${comment('kubernetes service portals')} -j KUBE-SERVICES`,
    `-A OUTPUT ${comment('kubernetes service portals')} -j KUBE-SERVICES`,
    `-A POSTROUTING ${comment('kubernetes postrouting rules')} -j KUBE-POSTROUTING`,
    `-A KUBE-MARK-MASQ -j MARK --or-mark ${mark}`,
    `-A KUBE-POSTROUTING -m mark ! --mark ${mark}/${mark} -j RETURN`,
    `-A KUBE-POSTROUTING -j MARK --xor-mark ${mark}`,
    `-A KUBE-POSTROUTING ${comment('kubernetes service traffic requiring SNAT')} -j MASQUERADE --random-fully`,
    ...services,
    `-A KUBE-SERVICES ${comment('kubernetes service nodeports; NOTE: this must be the last rule in this chain')} -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS`,
    ...rules,
    'COMMIT',
  ];
  return [...filterTable(mark), ...nat].join('\n') + '\n';
}
