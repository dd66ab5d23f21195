// The control of the data-plane benchmark: what every connection through the node pays whatever
// the ruleset, and what grows with the number of destinations without any per-service state.
//
//   nat-prerouting (dstnat):  ip daddr 198.19.64.0/18 meta l4proto tcp th dport 80 dnat ip addr . port to numgen random mod P map { 0 : pod0 . 8080, ... }
//   nat-postrouting (srcnat): ct status dnat masquerade fully-random
//
// One rule picks one of the same pods for every ClusterIP of the service CIDR, so the node does the
// same conntrack, DNAT and masquerade work as in the other shapes, with nothing per service: the
// same table serves 10 or 10,000 services. Whatever its connect latency gains from 10 to 10,000
// destinations is the kernel's per-destination cost (the client's sockets and routes, conntrack,
// the pods' replies), which no layout can take away; the rest of a shape's growth is its own.

import { ct, ip, meta, numgen, rule, th, Transaction, type SetElement } from '../../src/nft/index.js';
import { POD_PORT, SERVICE_CIDR, SERVICE_PORT } from './services.js';

export function floorTransaction(table: string, podIPs: readonly string[]): Transaction {
  const family = 'ip' as const;
  const pods: SetElement[] = [...podIPs].sort().map((pod, i) => ({ key: [i], value: [pod, POD_PORT] }));
  const tx = new Transaction();
  tx.add({ table: { family, name: table } });
  tx.add({ chain: { family, table, name: 'nat-prerouting', base: { type: 'nat', hook: 'prerouting', priority: -100, policy: 'accept' } } });
  tx.add({ chain: { family, table, name: 'nat-postrouting', base: { type: 'nat', hook: 'postrouting', priority: 100, policy: 'accept' } } });
  tx.add({
    rule: rule(family)
      .match(ip.daddr, SERVICE_CIDR)
      .match(meta.l4proto, 'tcp')
      .match(th.dport, SERVICE_PORT)
      .dnatMap({ family, key: numgen('random', pods.length), map: { elements: pods } })
      .rule(table, 'nat-prerouting'),
  });
  tx.add({ rule: rule(family).match(ct.status, 'dnat').masquerade({ flags: ['fully-random'] }).rule(table, 'nat-postrouting') });
  return tx;
}
