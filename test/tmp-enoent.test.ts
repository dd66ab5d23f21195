import { it } from 'vitest';
import { Nftables, Transaction, rule, ip, tcp, types, NftCommitError } from '../src/index.js';
import { Netns } from './helpers/netns.js';
it('shows', async () => {
  const ns = Netns.create();
  const nft = Nftables.open({ netns: ns.name });
  const T = 't';
  const set = { family: 'ip' as const, table: T, name: 's', key: [types.ipv4_addr] };
  const vm = { family: 'ip' as const, table: T, name: 'vm', key: [types.ipv4_addr], data: 'verdict' as const };
  await nft.commit(new Transaction().add({ table: { family: 'ip', name: T } }).add({ chain: { family: 'ip', table: T, name: 'c' } }).add({ set }).add({ set: vm }));
  const cases: [string, Transaction][] = [
    ['rule missing chain', new Transaction().add({ rule: rule('ip').match(tcp.dport, 80).accept().rule(T, 'nochain') })],
    ['rule missing table', new Transaction().add({ rule: rule('ip').accept().rule('notable', 'c') })],
    ['rule jump missing', new Transaction().add({ rule: rule('ip').match(tcp.dport, 80).jump('nowhere').rule(T, 'c') })],
    ['rule missing set', new Transaction().add({ rule: rule('ip').inSet(ip.saddr, 'noset').accept().rule(T, 'c') })],
    ['delete rule bad handle', new Transaction().delete({ rule: { ...rule('ip').accept().rule(T, 'c'), handle: 999 } })],
    ['element missing set', new Transaction().add({ set: { ...set, name: 'noset' }, elements: [{ key: ['198.18.0.1'] }] })],
    ['delete missing element', new Transaction().delete({ set, elements: [{ key: ['198.18.0.1'] }] })],
    ['vmap element to missing chain', new Transaction().add({ set: vm, elements: [{ key: ['198.18.0.1'], value: { kind: 'accept' } }, { key: ['198.18.0.2'], value: { kind: 'jump', chain: 'nochain' } }] as any })],
    ['delete missing chain', new Transaction().delete({ chain: { family: 'ip', table: T, name: 'nochain' } })],
    ['delete missing set', new Transaction().delete({ set: { ...set, name: 'noset' } })],
    ['delete missing table', new Transaction().delete({ table: { family: 'ip', name: 'notable' } })],
    ['chain in missing table', new Transaction().add({ chain: { family: 'ip', table: 'notable', name: 'x' } })],
  ];
  for (const [what, tx] of cases) {
    const req = tx.encode();
    const res = await (nft as any).native.commit((nft as any).handle, req.buffer);
    console.log(what, '=>', JSON.stringify(res.errors.map((e: any) => [e.errno, e.element, e.attrPath, e.message])));
  }
  nft.close(); ns.remove();
});
