// Which NodePorts the localhost proxy serves: every TCP NodePort with somewhere to go, with the
// endpoints external traffic may use (only this node's for externalTrafficPolicy Local).

import { categorizeEndpoints } from '../model/categorize.js';
import type { ProxyState } from '../model/types.js';
import type { LocalhostTarget } from './localhost-proxy.js';

export function localhostTargets(state: ProxyState): LocalhostTarget[] {
  const out: LocalhostTarget[] = [];
  for (const sp of state.services.values()) {
    if (!sp.nodePort || sp.protocol !== 'TCP') continue;
    const cat = categorizeEndpoints(state.endpoints.get(sp.id) ?? [], sp);
    const eps = sp.externalTrafficPolicy === 'Local' ? cat.localEndpoints : cat.clusterEndpoints;
    out.push({
      id: sp.id,
      family: sp.family,
      nodePort: sp.nodePort,
      endpoints: eps.map((e) => ({ ip: e.ip, port: e.port })),
      affinityTimeoutSeconds: sp.affinityTimeoutSeconds,
    });
  }
  return out;
}

/** UDP and SCTP NodePorts: what the ruleset rejects (and counts) on the loopback addresses. */
export function localhostRejectedPorts(state: ProxyState): { protocol: 'udp' | 'sctp'; port: number }[] {
  const out = new Map<string, { protocol: 'udp' | 'sctp'; port: number }>();
  for (const sp of state.services.values()) {
    if (!sp.nodePort || sp.protocol === 'TCP') continue;
    const protocol = sp.protocol === 'UDP' ? 'udp' : 'sctp';
    out.set(`${protocol}/${sp.nodePort}`, { protocol, port: sp.nodePort });
  }
  return [...out.values()];
}
