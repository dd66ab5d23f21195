// A host firewall on nftlink: one inet table (IPv4 and IPv6), input dropped unless allowed.
//
//   node examples/host-firewall.ts up --allow 22,443     the table, written in one transaction
//   node examples/host-firewall.ts allow 8080            one port more (one element, nothing rewritten)
//   node examples/host-firewall.ts disallow 8080
//   node examples/host-firewall.ts block 198.18.0.9 --for 60    refuse an address for 60 s
//   node examples/host-firewall.ts unblock 198.18.0.9
//   node examples/host-firewall.ts show                  the table as `nft list` prints it
//   node examples/host-firewall.ts down
//
// It programs the network namespace it runs in (`ip netns exec NAME node ...` for another one).
// The table it writes:
//
//   table inet host-firewall {
//     set allowed-tcp { type inet_service; }
//     set blocked-v4  { type ipv4_addr; flags timeout; timeout 1h; }
//     set blocked-v6  { type ipv6_addr; flags timeout; timeout 1h; }
//     chain input {
//       type filter hook input priority filter; policy drop;
//       iifname "lo" accept
//       ip saddr @blocked-v4 drop              # before established: a block cuts open connections too
//       ip6 saddr @blocked-v6 drop
//       ct state established,related accept   # answers to what this host sent, and their ICMP errors
//       ct state invalid drop
//       meta l4proto icmp accept
//       meta l4proto ipv6-icmp accept          # neighbour discovery: without it IPv6 stops working
//       tcp dport @allowed-tcp accept
//     }
//   }

import { parseArgs } from 'node:util';
import { ct, ip, ip6, meta, Nftables, renderRuleset, rule, tcp, Transaction, types } from 'nftlink';
import type { Chain, NftSet, Table } from 'nftlink';

const table = { family: 'inet', name: 'host-firewall' } as const satisfies Table;
const inTable = { family: table.family, table: table.name } as const;

const allowedTcp = { ...inTable, name: 'allowed-tcp', key: [types.inet_service] } as const satisfies NftSet;
const HOUR_MS = 3_600_000;
const blockedV4 = { ...inTable, name: 'blocked-v4', key: [types.ipv4_addr], flags: ['timeout'], timeout: HOUR_MS } as const satisfies NftSet;
const blockedV6 = { ...inTable, name: 'blocked-v6', key: [types.ipv6_addr], flags: ['timeout'], timeout: HOUR_MS } as const satisfies NftSet;

const input = {
  ...inTable,
  name: 'input',
  base: { type: 'filter', hook: 'input', priority: 0, policy: 'drop' },
} as const satisfies Chain;

/** The whole table: removed first if it is there (destroy), so `up` always leaves exactly this. */
function upTransaction(allow: readonly number[]): Transaction {
  const r = () => rule('inet');
  return new Transaction()
    .destroy({ table })
    .add({ table })
    .add({ set: allowedTcp })
    .add({ set: blockedV4 })
    .add({ set: blockedV6 })
    .add({ set: allowedTcp, elements: allow.map((port) => ({ key: [port] })) })
    .add({ chain: input })
    .add({ rule: r().match(meta.iifname, 'lo').accept().rule(table.name, input.name) })
    .add({ rule: r().inSet(ip.saddr, blockedV4.name).drop().rule(table.name, input.name) })
    .add({ rule: r().inSet(ip6.saddr, blockedV6.name).drop().rule(table.name, input.name) })
    .add({ rule: r().match(ct.state, 'established,related').accept().rule(table.name, input.name) })
    .add({ rule: r().match(ct.state, 'invalid').drop().rule(table.name, input.name) })
    .add({ rule: r().match(meta.l4proto, 'icmp').accept().rule(table.name, input.name) })
    .add({ rule: r().match(meta.l4proto, 'ipv6-icmp').accept().rule(table.name, input.name) })
    .add({ rule: r().inSet(tcp.dport, allowedTcp.name).accept().rule(table.name, input.name, 'allowed ports') });
}

function ports(list: string): number[] {
  return list.split(',').filter(Boolean).map((p) => {
    const n = Number(p);
    if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`not a port: ${p}`);
    return n;
  });
}

const blocklistOf = (address: string): NftSet => (address.includes(':') ? blockedV6 : blockedV4);

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: { allow: { type: 'string', default: '' }, for: { type: 'string' } } });
  const [command, arg] = positionals;
  const nft = Nftables.open();
  try {
    switch (command) {
      case 'up':
        await nft.commit(upTransaction(ports(values.allow)));
        return;
      case 'allow':
      case 'disallow': {
        const elements = ports(arg ?? '').map((port) => ({ key: [port] }));
        const tx = new Transaction();
        if (command === 'allow') tx.add({ set: allowedTcp, elements });
        else tx.delete({ set: allowedTcp, elements });
        await nft.commit(tx);
        return;
      }
      case 'block': {
        if (!arg) throw new Error('block ADDRESS [--for SECONDS]');
        // Without --for the set's default timeout applies (1 h); the kernel removes the element when it runs out.
        const element = values.for === undefined ? { key: [arg] } : { key: [arg], timeout: Number(values.for) * 1000 };
        await nft.commit(new Transaction().add({ set: blocklistOf(arg), elements: [element] }));
        return;
      }
      case 'unblock':
        if (!arg) throw new Error('unblock ADDRESS');
        // destroy: no error when the element already timed out.
        await nft.commit(new Transaction().destroy({ set: blocklistOf(arg), elements: [{ key: [arg] }] }));
        return;
      case 'show':
        process.stdout.write(renderRuleset(await nft.dump({ family: table.family, table: table.name })));
        return;
      case 'down':
        await nft.commit(new Transaction().destroy({ table }));
        return;
      default:
        throw new Error('usage: host-firewall.ts up --allow PORTS | allow PORTS | disallow PORTS | block ADDRESS [--for SECONDS] | unblock ADDRESS | show | down');
    }
  } finally {
    nft.close();
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
