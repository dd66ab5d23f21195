// What another process does to the proxy's tables: issue 32's list, each as the nft arguments to run
// in the node namespace. Looked up (chain names, handles, slots) before the clock starts, so only
// the tampering command itself is between "ran" and "returned".

import type { LayoutName } from '../../src/proxy/layout/index.js';
import { CLUSTER_IP, ROGUE_ELEMENT, SERVICE_PORT } from './cluster.js';

export interface TamperKind {
  name: string;
  /** The layouts it applies to (the bucket maps are the slots layout's). */
  layouts: readonly LayoutName[];
  /** Repaired by a full sync (the whole table read back and rewritten): as long as a cold start. */
  full?: boolean;
  /** The nft arguments; `list` runs `nft ARGS` in the node namespace and returns its stdout. */
  args(list: (args: string[]) => string): string[];
}

const BOTH: readonly LayoutName[] = ['slots', 'kube-proxy'];

/** The key of the measured service's element in service-ips. */
export const SERVICE_ELEMENT_KEY = `${CLUSTER_IP} . tcp . ${SERVICE_PORT}`;

/** The chain service-ips sends the service to (the name is hashed: read it back rather than recompute it). */
function serviceChain(list: (args: string[]) => string): string {
  const m = /goto ([^\s,]+)/.exec(list(['list', 'map', 'ip', 'kube-proxy', 'service-ips']));
  if (!m) throw new Error('bench: service-ips has no service: the proxy has not programmed it');
  return m[1]!;
}

export const TAMPER_KINDS: readonly TamperKind[] = [
  { name: 'flush ruleset', layouts: BOTH, full: true, args: () => ['flush', 'ruleset'] },
  { name: 'delete table ip kube-proxy', layouts: BOTH, full: true, args: () => ['delete', 'table', 'ip', 'kube-proxy'] },
  { name: 'flush map service-ips', layouts: BOTH, args: () => ['flush', 'map', 'ip', 'kube-proxy', 'service-ips'] },
  // The measured service's one element: at 10k services, one element of 10k to find and write back.
  { name: 'delete the service element', layouts: BOTH, args: () => ['delete', 'element', 'ip', 'kube-proxy', 'service-ips', `{ ${SERVICE_ELEMENT_KEY} }`] },
  {
    name: "delete the service chain's rule",
    layouts: BOTH,
    args: (list) => {
      const chain = serviceChain(list);
      // The rule that picks an endpoint: numgen in both layouts (slots: the dnat through the bucket
      // map; kube-proxy: the vmap to the endpoint chains).
      const line = list(['-a', 'list', 'chain', 'ip', 'kube-proxy', chain]).split('\n').find((l) => l.includes('numgen'));
      const handle = line && /# handle (\d+)/.exec(line)?.[1];
      if (!handle) throw new Error(`bench: no numgen rule in ${chain}`);
      return ['delete', 'rule', 'ip', 'kube-proxy', chain, 'handle', handle];
    },
  },
  // A key the proxy does not own: traffic keeps working, the figure is the repair commit's.
  { name: 'rogue element in service-ips', layouts: BOTH, args: () => ['add', 'element', 'ip', 'kube-proxy', 'service-ips', `{ ${ROGUE_ELEMENT} }`] },
  {
    name: 'delete an endpoint element (bucket map)',
    layouts: ['slots'],
    args: (list) => {
      const text = list(['list', 'map', 'ip', 'kube-proxy', 'endpoints-0']);
      const slot = /elements = \{\s*(\d+) :/.exec(text)?.[1];
      if (slot === undefined) throw new Error('bench: endpoints-0 holds no slot');
      return ['delete', 'element', 'ip', 'kube-proxy', 'endpoints-0', `{ ${slot} }`];
    },
  },
];
