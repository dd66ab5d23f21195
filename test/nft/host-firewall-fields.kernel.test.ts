// The fields a host firewall matches (icmp and icmpv6 type and code, tcp flags, dscp, ttl and hop
// limit, ct state and status, meta l4proto/iifname/oifname/mark, th dport), built with the rule
// builder: written over netlink they are what nft -f makes of the rendered text (same `nft list
// ruleset`), and read back they render to the same text.

import { afterAll, expect, it } from 'vitest';
import { ct, icmp, icmpv6, ip, ip6, meta, Nftables, renderRuleset, rule, tcp, th, Transaction, types } from '../../src/index.js';
import { RulesetModel } from '../../src/nft/model.js';
import { namespacesForFile } from '../helpers/netns.js';

const ns = namespacesForFile(afterAll);

function firewall(): Transaction {
  const tx = new Transaction();
  tx.add({ table: { family: 'inet', name: 'host' } });
  tx.add({ chain: { family: 'inet', table: 'host', name: 'input', base: { type: 'filter', hook: 'input', priority: 0, policy: 'drop' } } });
  tx.add({ set: { family: 'inet', table: 'host', name: 'blocklist', key: [types.ipv4_addr], flags: ['timeout'] } });
  tx.add({ set: { family: 'inet', table: 'host', name: 'blocklist' }, elements: [{ key: ['198.18.9.9'], timeout: 3_600_000 }] });
  const rules = [
    rule('inet').match(ct.state, 'established,related').accept(),
    rule('inet').match(ct.state, 'invalid').drop(),
    rule('inet').match(ct.status, 'dnat').accept(),
    rule('inet').match(meta.iifname, 'lo').accept(),
    rule('inet').inSet(ip.saddr, 'blocklist').drop(),
    rule('inet').match(icmp.type, 'echo-request').limit(10, 'second').accept(),
    rule('inet').match(icmp.type, 'destination-unreachable').match(icmp.code, 'port-unreachable').accept(),
    rule('inet').match(icmpv6.type, ['nd-neighbor-solicit', 'nd-neighbor-advert', 'nd-router-advert', 'echo-request']).accept(),
    rule('inet').match(icmpv6.type, 'packet-too-big').match(icmpv6.code, 0).accept(),
    rule('inet').matchMasked(tcp.flags, 'syn|ack', 'syn').match(tcp.dport, [22, 443]).accept(),
    rule('inet').match(tcp.flags, 'fin,syn,rst').counter().drop(),
    rule('inet').match(ip.dscp, 'ef').match(ip.ttl, 64).accept(),
    rule('inet').match(ip6.dscp, 'cs1').match(ip6.hoplimit, 255).accept(),
    rule('inet').match(meta.l4proto, 'udp').match(th.dport, 53).accept(),
    rule('inet').match(meta.oifname, 'eth*').match(meta.mark, 0x10).accept(),
    rule('inet').match(meta.l4proto, 'ipv6-icmp').accept(),
  ];
  for (const r of rules) tx.add({ rule: r.rule('host', 'input') });
  return tx;
}

it('netlink and nft -f give the same nft list ruleset, and the dump renders as written', async () => {
  const viaNetlink = ns();
  const viaNft = ns();
  const tx = firewall();
  viaNft.nftApply(tx.render());
  const nft = Nftables.open({ netns: viaNetlink.name });
  try {
    await nft.commit(tx);
    const dumped = await nft.dump();
    const written = new RulesetModel().apply(tx.operations).ruleset();
    // Element expiry is the kernel's countdown: compare the rest.
    const noExpiry = (s: string): string => s.replace(/ expires [0-9dhms]+/g, '');
    expect(noExpiry(renderRuleset(dumped))).toBe(renderRuleset(written));
  } finally {
    nft.close();
  }
  expect(viaNetlink.nftList()).toBe(viaNft.nftList());
  expect(viaNetlink.nftList()).toContain('tcp flags syn / syn,ack tcp dport { 22, 443 } accept');
});
