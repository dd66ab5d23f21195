// Large batches commit without ENOBUFS or EMSGSIZE: the element lists are split under the 64 KiB
// attribute nest and the socket buffers are sized for the batch.

import { expect, it } from 'vitest';
import { rule, ip, tcp, Transaction, types } from '../../src/index.js';
import type { NftSet } from '../../src/index.js';
import { kernelSession } from '../helpers/kernel.js';

const { ipv4_addr, inet_proto, inet_service } = types;
const session = kernelSession();

/** The i-th address of 198.18.0.0/15 (131,072 of them). */
const addr = (i: number): string => `198.${18 + ((i >> 16) & 1)}.${(i >> 8) & 255}.${i & 255}`;

it('one transaction of 200,000 elements into a concatenated map', async () => {
  const map: NftSet = { family: 'ip', table: 'big', name: 'm', key: [ipv4_addr, inet_proto, inet_service], data: [ipv4_addr, inet_service] };
  const tx = new Transaction().add({ table: { family: 'ip', name: 'big' } }).add({ set: map });
  // 200,000 distinct keys: every address of the /15 on port 80, then again on 81.
  const elements = Array.from({ length: 200_000 }, (_, i) => ({ key: [addr(i % 131_072), 'tcp', 80 + Math.floor(i / 131_072)], value: [addr(i + 1), 8080] }));
  tx.add({ set: map, elements });
  await session.nft.commit(tx);
  const { elements: back } = await session.nft.dumpSetElements(map);
  expect(back.length).toBe(200_000);
  const keys = new Set(back.map((e) => e.key.join(' ')));
  expect(keys.size).toBe(200_000);
  expect(keys.has('198.19.255.255 tcp 80')).toBe(true);
}, 120_000);

it('one transaction of 20,000 rules', async () => {
  const tx = new Transaction().add({ table: { family: 'ip', name: 'rules' } }).add({ chain: { family: 'ip', table: 'rules', name: 'c' } });
  for (let i = 0; i < 20_000; i++) {
    tx.add({ rule: rule('ip').match(ip.daddr, addr(i)).match(tcp.dport, 80).counter().accept().rule('rules', 'c', `rule ${i}`) });
  }
  await session.nft.commit(tx);
  const rs = await session.nft.dump({ table: 'rules', family: 'ip' });
  expect(rs.rules.length).toBe(20_000);
  expect(rs.rules[19_999]!.comment).toBe('rule 19999');
}, 120_000);
