// Port mapping on nftlink: connections to a port of this host go to an address and port elsewhere
// (a container in another network namespace), as `docker run -p 8080:80` does.
//
//   node examples/port-map.ts up                              the table, with no mapping yet
//   node examples/port-map.ts add tcp 8080 198.18.2.2:80       one mapping (one map element)
//   node examples/port-map.ts remove tcp 8080
//   node examples/port-map.ts list                            host port -> destination, one a line
//   node examples/port-map.ts down
//
// It programs the network namespace it runs in (`ip netns exec NAME node ...` for another one).
// The table it writes:
//
//   table ip port-map {
//     map ports { type inet_proto . inet_service : ipv4_addr . inet_service; }
//     chain prerouting {                 # connections arriving from outside
//       type nat hook prerouting priority dstnat; policy accept;
//       fib daddr type local meta l4proto tcp dnat ip to meta l4proto . th dport map @ports
//       fib daddr type local meta l4proto udp dnat ip to meta l4proto . th dport map @ports
//     }
//     chain output {                     # connections the host itself makes to its own address
//       type nat hook output priority dstnat; policy accept;
//       (the same two rules)
//     }
//     chain postrouting {
//       type nat hook postrouting priority srcnat; policy accept;
//       ct status dnat masquerade        # the destination answers to this host, which undoes both NATs
//     }
//   }
//
// The masquerade makes every mapped connection come from this host's address on the destination's
// link: the destination needs no route back to the client, and a connection from the destination's
// own network to the mapped port (hairpin) comes back the way it went. The price: the destination
// does not see the client's address.
// Forwarding must be on for traffic from outside (sysctl net.ipv4.ip_forward=1); this program does
// not change it.

import { ct, fibType, meta, NftCommitError, Nftables, rule, th, Transaction, types } from 'nftlink';
import type { Chain, NftSet, Rule, Table } from 'nftlink';

const table = { family: 'ip', name: 'port-map' } as const satisfies Table;
const inTable = { family: table.family, table: table.name } as const;

/** protocol . host port : address . port */
const ports = {
  ...inTable,
  name: 'ports',
  key: [types.inet_proto, types.inet_service],
  data: [types.ipv4_addr, types.inet_service],
} as const satisfies NftSet;

const natChain = (name: string, hook: 'prerouting' | 'output' | 'postrouting'): Chain => ({
  ...inTable,
  name,
  // dstnat (-100) before the filter hooks; srcnat (100) after the routing decision.
  base: { type: 'nat', hook, priority: hook === 'postrouting' ? 100 : -100, policy: 'accept' },
});
const chains = [natChain('prerouting', 'prerouting'), natChain('output', 'output'), natChain('postrouting', 'postrouting')];

function dnatRules(chain: string): Rule[] {
  return (['tcp', 'udp'] as const).map((proto) =>
    rule('ip')
      .match(fibType('daddr'), 'local')
      .match(meta.l4proto, proto)
      .dnatMap({ family: 'ip', key: [meta.l4proto, th.dport], map: { name: ports.name } })
      .rule(table.name, chain),
  );
}

function upTransaction(): Transaction {
  const tx = new Transaction().destroy({ table }).add({ table }).add({ set: ports });
  for (const chain of chains) tx.add({ chain });
  for (const r of [...dnatRules('prerouting'), ...dnatRules('output')]) tx.add({ rule: r });
  tx.add({ rule: rule('ip').match(ct.status, 'dnat').masquerade().rule(table.name, 'postrouting') });
  return tx;
}

function protocol(p: string | undefined): 'tcp' | 'udp' {
  if (p !== 'tcp' && p !== 'udp') throw new Error(`protocol must be tcp or udp, not ${p}`);
  return p;
}

/** "198.18.2.2:80" -> ['198.18.2.2', 80] */
function destination(text: string | undefined): [string, number] {
  const m = /^([0-9.]+):([0-9]+)$/.exec(text ?? '');
  if (!m) throw new Error(`destination must be ADDRESS:PORT, not ${text}`);
  return [m[1]!, Number(m[2])];
}

async function main([command, ...args]: string[]): Promise<void> {
  const nft = Nftables.open();
  try {
    switch (command) {
      case 'up':
        await nft.commit(upTransaction());
        return;
      case 'add':
      case 'remove': {
        const key = [protocol(args[0]), Number(args[1])] as const;
        const tx = new Transaction();
        if (command === 'add') tx.add({ set: ports, elements: [{ key, value: destination(args[2]) }] });
        else tx.delete({ set: ports, elements: [{ key }] });
        await nft.commit(tx);
        return;
      }
      case 'list': {
        const { elements } = await nft.dumpSetElements(ports);
        for (const e of elements) console.log(`${e.key.join(' ')} -> ${Array.isArray(e.value) ? e.value.join(':') : '?'}`);
        return;
      }
      case 'down':
        await nft.commit(new Transaction().destroy({ table }));
        return;
      default:
        throw new Error('usage: port-map.ts up | add tcp|udp PORT ADDRESS:PORT | remove tcp|udp PORT | list | down');
    }
  } finally {
    nft.close();
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  // A kernel refusal names the operation and, for elements, which one: print it as it is.
  console.error(err instanceof NftCommitError ? `refused: ${err.message}` : err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
