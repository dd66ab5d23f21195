// The library's own flow on the fake, as a program's tests would run it: the Reconciler programs
// a table, changes it, and after a resync from the fake's dump plans nothing more.

import { expect, it } from 'vitest';
import { ip, meta, rule, th, types } from '../../src/index.js';
import type { NftSet, Rule } from '../../src/index.js';
import { Reconciler, type DesiredState } from '../../src/nft/reconcile/reconciler.js';
import { FakeNftables } from '../../src/testing/index.js';

const { ipv4_addr, inet_service } = types;
const table = { family: 'ip' as const, name: 'guard' };
const at = (name: string) => ({ family: 'ip' as const, table: 'guard', name });

/** A filter table: a chain per open port, reached through a verdict map, and a set of blocked addresses. */
function desired(ports: number[], blocked: string[]): DesiredState {
  const byPort: NftSet = { ...at('by-port'), key: [inet_service], data: 'verdict', elements: ports.map((p) => ({ key: [p], value: { kind: 'jump', chain: `port-${p}` } })) };
  const deny: NftSet = { ...at('blocked'), key: [ipv4_addr], elements: blocked.map((a) => ({ key: [a] })) };
  const rules: Rule[] = [
    rule('ip').inSet(ip.saddr, 'blocked').drop().rule('guard', 'input'),
    rule('ip').match(ip.daddr, '198.18.0.0/16').lookupElements([meta.l4proto], [{ key: ['tcp'] }, { key: ['udp'] }]).vmap(th.dport, 'by-port').rule('guard', 'input'),
    ...ports.map((p) => rule('ip').counter().accept().rule('guard', `port-${p}`)),
  ];
  const chains = [{ ...at('input'), base: { type: 'filter' as const, hook: 'input' as const, priority: 0, policy: 'drop' as const } }, ...ports.map((p) => at(`port-${p}`))];
  return { tables: [table], chains, sets: [byPort, deny], rules };
}

it('a Reconciler programs the fake, and plans nothing after a resync from its dump', async () => {
  const fake = new FakeNftables();
  const rec = new Reconciler();
  for (const [ports, blocked] of [
    [[22, 80], ['198.18.9.1']],
    [[80, 443], ['198.18.9.1', '198.18.9.2']],
  ] as [number[], string[]][]) {
    await fake.commit(rec.plan(desired(ports, blocked)).tx);
    rec.committed();
    rec.failed();
    rec.resync(await fake.dump({ elementKeys: true }), [table]);
    expect(rec.plan(desired(ports, blocked)).tx.render()).toBe('');
    rec.failed();
  }
  const text = fake.render();
  expect(text).toContain('elements = { 80 : jump port-80, 443 : jump port-443 }');
  expect(text).not.toContain('port-22');
  expect(text).toContain('elements = { 198.18.9.1, 198.18.9.2 }');
});
