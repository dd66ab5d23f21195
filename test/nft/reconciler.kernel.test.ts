// The reconciler against the kernel: zero diff when nothing changed, element-level deltas, chains
// rewritten only when their rules differ, leftovers deleted, and a resync that sees what others did.

import { describe, expect, it } from 'vitest';
import { ip, meta, rule, th, Transaction, types } from '../../src/index.js';
import type { NftSet, Rule, SetElement } from '../../src/index.js';
import { Reconciler, type DesiredState } from '../../src/nft/reconcile/reconciler.js';
import { kernelSession } from '../helpers/kernel.js';

const { ipv4_addr, inet_proto, inet_service } = types;
const session = kernelSession();

const table = { family: 'ip' as const, name: 'rec' };
function desired(opts: { svc2?: boolean; ep?: string; port?: number } = {}): DesiredState {
  const vmapElements: SetElement[] = [];
  const epsElements: SetElement[] = [];
  const vmap: NftSet = { family: 'ip', table: 'rec', name: 'services', key: [ipv4_addr, inet_proto, inet_service], data: 'verdict', elements: vmapElements };
  const eps: NftSet = { family: 'ip', table: 'rec', name: 'eps', key: [ipv4_addr], data: [ipv4_addr, inet_service], elements: epsElements };
  const chains = [
    { family: 'ip' as const, table: 'rec', name: 'entry', base: { type: 'nat' as const, hook: 'prerouting' as const, priority: -100, policy: 'accept' as const } },
    { family: 'ip' as const, table: 'rec', name: 'svc1' },
  ];
  const rules: Rule[] = [
    rule('ip').vmap([ip.daddr, meta.l4proto, th.dport], 'services').rule('rec', 'entry'),
    rule('ip').match(meta.l4proto, 'tcp').dnat({ family: 'ip', addr: opts.ep ?? '198.18.1.1', port: opts.port ?? 80 }).rule('rec', 'svc1'),
  ];
  vmapElements.push({ key: ['198.18.0.1', 'tcp', 80], value: { kind: 'goto', chain: 'svc1' } });
  epsElements.push({ key: ['198.18.0.1'], value: [opts.ep ?? '198.18.1.1', opts.port ?? 80] });
  if (opts.svc2) {
    chains.push({ family: 'ip', table: 'rec', name: 'svc2' });
    rules.push(rule('ip').match(meta.l4proto, 'udp').dnat({ family: 'ip', addr: '198.18.1.2', port: 53 }).rule('rec', 'svc2'));
    vmapElements.push({ key: ['198.18.0.2', 'udp', 53], value: { kind: 'goto', chain: 'svc2' } });
    epsElements.push({ key: ['198.18.0.2'], value: ['198.18.1.2', 53] });
  }
  return { tables: [table], chains, sets: [vmap, eps], rules };
}

async function apply(rec: Reconciler, d: DesiredState): Promise<Transaction> {
  const { tx } = rec.plan(d);
  await session.nft.commit(tx);
  rec.committed();
  return tx;
}

describe('Reconciler', () => {
  const rec = new Reconciler();

  it('programs an empty kernel, then plans nothing for the same state, also after a resync', async () => {
    await apply(rec, desired({ svc2: true }));
    expect(rec.plan(desired({ svc2: true })).tx.size).toBe(0);
    rec.failed();
    rec.resync(await session.nft.dump(), [table]);
    const again = rec.plan(desired({ svc2: true }));
    expect(again.tx.render()).toBe('');
    rec.failed();
  });

  it('a changed endpoint is one element delete + add and one chain rewrite, nothing else', async () => {
    const tx = await apply(rec, desired({ svc2: true, ep: '198.18.1.9' }));
    expect(tx.render()).toBe(
      [
        'flush chain ip rec svc1',
        'add rule ip rec svc1 meta l4proto tcp dnat to 198.18.1.9:80',
        'delete element ip rec eps { 198.18.0.1 }',
        'add element ip rec eps { 198.18.0.1 : 198.18.1.9 . 80 }',
        '',
      ].join('\n'),
    );
    const listed = session.ns.nftList();
    expect(listed).toContain('198.18.0.1 : 198.18.1.9 . 80');
    expect(listed).toContain('dnat to 198.18.1.9:80');
  });

  it('a removed service: its chain is flushed and deleted, its elements deleted', async () => {
    const tx = await apply(rec, desired({ ep: '198.18.1.9' }));
    expect(tx.render()).toContain('delete chain ip rec svc2');
    expect(tx.render()).toContain('delete element ip rec services { 198.18.0.2 . udp . 53 }');
    expect(session.ns.nftList()).not.toContain('svc2');
  });

  it('a resync sees what someone else changed and plans it away', async () => {
    session.ns.nftApply('add element ip rec services { 198.18.0.77 . tcp . 1 : drop }\nadd rule ip rec svc1 counter\n');
    rec.resync(await session.nft.dump(), [table]);
    const tx = await apply(rec, desired({ ep: '198.18.1.9' }));
    expect(tx.render()).toContain('delete element ip rec services { 198.18.0.77 . tcp . 1 }');
    expect(tx.render()).toContain('flush chain ip rec svc1');
    rec.resync(await session.nft.dump(), [table]);
    expect(rec.plan(desired({ ep: '198.18.1.9' })).tx.size).toBe(0);
    rec.failed();
  });
});
