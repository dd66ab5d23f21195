// The library's own flow on the fake, as a program's tests would run it: the Reconciler programs
// a table, and after a resync from the fake's dump it plans nothing more.

import { expect, it } from 'vitest';
import { ip, meta, rule, th, types } from '../../src/index.js';
import type { NftSet, Rule } from '../../src/index.js';
import { Reconciler, type DesiredState } from '../../src/nft/reconcile/reconciler.js';
import { FakeNftables } from '../../src/testing/index.js';

const { ipv4_addr, inet_proto, inet_service } = types;
const table = { family: 'ip' as const, name: 'rec' };

function desired(ep: string): DesiredState {
  const services: NftSet = { family: 'ip', table: 'rec', name: 'services', key: [ipv4_addr, inet_proto, inet_service], data: 'verdict', elements: [] };
  const eps: NftSet = { family: 'ip', table: 'rec', name: 'eps', key: [ipv4_addr], data: [ipv4_addr, inet_service], elements: [] };
  const chains = [
    { family: 'ip' as const, table: 'rec', name: 'entry', base: { type: 'nat' as const, hook: 'prerouting' as const, priority: -100, policy: 'accept' as const } },
    { family: 'ip' as const, table: 'rec', name: 'svc1' },
  ];
  const rules: Rule[] = [
    rule('ip').vmap([ip.daddr, meta.l4proto, th.dport], 'services').rule('rec', 'entry'),
    rule('ip').match(ip.saddr, ['198.18.0.0/16']).lookupElements([ip.daddr], [{ key: ['198.18.0.1'] }, { key: ['198.18.0.2'] }]).accept().rule('rec', 'entry'),
    rule('ip').match(meta.l4proto, 'tcp').dnat({ family: 'ip', addr: ep, port: 80 }).rule('rec', 'svc1'),
  ];
  services.elements!.push({ key: ['198.18.0.1', 'tcp', 80], value: { kind: 'goto', chain: 'svc1' } });
  eps.elements!.push({ key: ['198.18.0.1'], value: [ep, 80] });
  return { tables: [table], chains, sets: [services, eps], rules };
}

it('a Reconciler programs the fake, and plans nothing after a resync from its dump', async () => {
  const fake = new FakeNftables();
  const rec = new Reconciler();
  for (const ep of ['198.18.1.1', '198.18.1.9']) {
    await fake.commit(rec.plan(desired(ep)).tx);
    rec.committed();
    rec.failed();
    rec.resync(await fake.dump({ elementKeys: true }), [table]);
    expect(rec.plan(desired(ep)).tx.render()).toBe('');
    rec.failed();
  }
  expect(fake.render()).toContain('198.18.0.1 : 198.18.1.9 . 80');
  expect(fake.render()).toContain('dnat to 198.18.1.9:80');
});
