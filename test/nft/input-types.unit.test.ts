// The types take what users write (issue 33): objects written `as const` (readonly arrays and
// tuples), checked with `satisfies`, or inline without a cast, in every place input is read:
// transactions, the builder, the reconciler, rendering. This file compiling is most of the test
// (`npm run typecheck`); the assertions check the objects are also read right.

import { describe, expect, it } from 'vitest';
import { ip, meta, numgen, Reconciler, renderRuleset, rule, tcp, th, Transaction, types } from '../../src/index.js';
import type { Chain, DesiredState, NftSet, SetElement, Table } from '../../src/index.js';

const { ipv4_addr, inet_proto, inet_service } = types;

describe('input types', () => {
  it('a set, its elements and a chain written as const go into a transaction without a cast', () => {
    const set = { family: 'ip', table: 't', name: 'svc', key: [ipv4_addr, inet_proto, inet_service], data: 'verdict' } as const;
    const elements = [{ key: ['198.18.0.1', 'tcp', 80], value: { kind: 'goto', chain: 'c' } }] as const;
    const chain = { family: 'ip', table: 't', name: 'in', base: { type: 'filter', hook: 'input', priority: 0, policy: 'drop' } } as const;
    const tx = new Transaction()
      .add({ table: { family: 'ip', name: 't', flags: ['dormant'] } as const })
      .add({ chain })
      .add({ chain: { family: 'ip', table: 't', name: 'c' } })
      .add({ set })
      .add({ set, elements });
    expect(tx.render()).toContain('add element ip t svc { 198.18.0.1 . tcp . 80 : goto c }');
  });

  it('satisfies keeps literal types, so a named object needs neither as const nor a cast', () => {
    const table = { family: 'inet', name: 'f' } satisfies Table;
    const blocked = { family: 'inet', table: 'f', name: 'b', key: [ipv4_addr], flags: ['interval', 'timeout'], timeout: 60_000 } satisfies NftSet;
    const input = { family: 'inet', table: 'f', name: 'input', base: { type: 'filter', hook: 'input', priority: 0 } } satisfies Chain;
    const el: SetElement = { key: ['198.18.0.0/24'], timeout: 1000 };
    const tx = new Transaction().add({ table }).add({ set: blocked }).add({ chain: input }).add({ set: blocked, elements: [el] });
    expect(tx.size).toBe(4);
  });

  it('the builder takes readonly lists: fields, match lists, inline maps, nat flags', () => {
    const fields = [ip.daddr, meta.l4proto, th.dport] as const;
    const ports = [80, 443] as const;
    const backends = [{ key: [0], value: ['198.18.1.2', 8080] }, { key: [1], value: ['198.18.2.2', 8080] }] as const;
    const vmapElements = [{ key: ['198.18.0.1', 'tcp', 80], value: { kind: 'accept' } }] as const;
    const rules = [
      rule('ip').vmap(fields, 'svc').rule('t', 'c'),
      rule('ip').match(tcp.dport, ports).accept().rule('t', 'c'),
      rule('ip').match(meta.l4proto, 'tcp').dnatMap({ family: 'ip', key: numgen('random', 2), map: { elements: backends }, flags: ['persistent'] as const }).rule('t', 'c'),
      rule('ip').vmap(fields, vmapElements).rule('t', 'c'),
      rule('ip').masquerade({ flags: ['random'] as const }).rule('t', 'c'),
    ];
    const tx = new Transaction();
    for (const r of rules) tx.add({ rule: r });
    expect(tx.render().trim().split('\n')).toEqual([
      'add rule ip t c ip daddr . meta l4proto . th dport vmap @svc',
      'add rule ip t c tcp dport { 80, 443 } accept',
      'add rule ip t c meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : 198.18.1.2 . 8080, 1 : 198.18.2.2 . 8080 } persistent',
      'add rule ip t c ip daddr . meta l4proto . th dport vmap { 198.18.0.1 . tcp . 80 : accept }',
      'add rule ip t c masquerade random',
    ]);
  });

  it('a DesiredState written as const plans and renders', () => {
    const desired = {
      tables: [{ family: 'ip', name: 'app' }],
      chains: [{ family: 'ip', table: 'app', name: 'c' }],
      sets: [{ family: 'ip', table: 'app', name: 's', key: [ipv4_addr], elements: [{ key: ['198.18.0.1'] }] }],
      rules: [rule('ip').inSet(ip.saddr, 's').accept().rule('app', 'c')],
    } as const satisfies DesiredState;
    const { tx } = new Reconciler().plan(desired);
    expect(tx.render()).toContain('add element ip app s { 198.18.0.1 }');
    expect(renderRuleset(desired)).toContain('elements = { 198.18.0.1 }');
  });
});
