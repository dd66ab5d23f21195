// FakeNftables.monitor: the fake's own commits as the kernel's monitor reports them.

import { describe, expect, it } from 'vitest';
import { rule, ip, Transaction, types, type MonitorEvent, type MonitorTransaction, type NftMonitor, type NftSet } from '../../src/index.js';
import { FakeNftables } from '../../src/testing/index.js';

const s: NftSet = { family: 'ip', table: 't', name: 's', key: [types.ipv4_addr] };

async function next(mon: NftMonitor): Promise<MonitorEvent> {
  const r = await mon.next();
  if (r.done) throw new Error('the monitor ended');
  return r.value;
}

const summary = (t: MonitorEvent): string[] => (t as MonitorTransaction).changes.map((c) => `${c.verb} ${c.kind}`);

describe('FakeNftables.monitor', () => {
  it('each commit that changes something is a transaction: deletions, then additions, at its generation', async () => {
    const fake = new FakeNftables();
    const mon = fake.monitor();
    await fake.commit(
      new Transaction()
        .add({ table: { family: 'ip', name: 't' } })
        .add({ chain: { family: 'ip', table: 't', name: 'c' } })
        .add({ set: s })
        .add({ set: s, elements: [{ key: ['198.18.0.1'] }, { key: ['198.18.0.2'] }] })
        .add({ rule: rule('ip').match(ip.saddr, '198.18.0.9').accept().rule('t', 'c') }),
    );
    const first = (await next(mon)) as MonitorTransaction;
    expect(first).toMatchObject({ type: 'transaction', generation: 2, self: true, portid: fake.portid });
    expect(summary(first)).toEqual(['add table', 'add chain', 'add set', 'add element', 'add rule']);
    expect(first.changes[3]).toMatchObject({ elements: [{ key: ['198.18.0.1'] }, { key: ['198.18.0.2'] }] });
    // A no-op commit moves nothing and announces nothing.
    await fake.commit(new Transaction().add({ table: { family: 'ip', name: 't' } }));
    await fake.commit(new Transaction().delete({ set: s, elements: [{ key: ['198.18.0.2'] }] }).add({ set: s, elements: [{ key: ['198.18.0.3'] }] }));
    const second = await next(mon);
    expect(second).toMatchObject({ generation: 3 });
    expect((second as MonitorTransaction).changes).toEqual([
      { verb: 'delete', kind: 'element', set: expect.objectContaining({ name: 's' }), elements: [{ key: ['198.18.0.2'] }] },
      { verb: 'add', kind: 'element', set: expect.objectContaining({ name: 's' }), elements: [{ key: ['198.18.0.3'] }] },
    ]);
    await fake.commit(new Transaction().delete({ table: { family: 'ip', name: 't' } }));
    expect(summary(await next(mon))).toEqual(['delete rule', 'delete set', 'delete chain', 'delete table']);
    mon.close();
  });

  it('a replaced rule is its delete and the add of the new one, under its handle', async () => {
    const fake = new FakeNftables();
    await fake.commit(new Transaction().add({ table: { family: 'ip', name: 't' } }).add({ chain: { family: 'ip', table: 't', name: 'c' } }));
    const { ruleHandles } = await fake.commit(new Transaction().add({ rule: rule('ip').accept().rule('t', 'c') }, { echo: true }));
    const handle = ruleHandles.get(0)!;
    const mon = fake.monitor({ kinds: ['rule'] });
    await fake.commit(new Transaction().replace({ rule: { ...rule('ip').drop().rule('t', 'c'), handle } }));
    const t = (await next(mon)) as MonitorTransaction;
    expect(t.changes).toMatchObject([
      { verb: 'delete', kind: 'rule', rule: { handle, exprs: [{ type: 'immediate', verdict: { kind: 'accept' } }] } },
      { verb: 'add', kind: 'rule', rule: { handle, exprs: [{ type: 'immediate', verdict: { kind: 'drop' } }] } },
    ]);
    mon.close();
  });

  it('filters as the kernel monitor does; break ends the subscription', async () => {
    const fake = new FakeNftables();
    const mon = fake.monitor({ table: 'u', kinds: ['chain'] });
    await fake.commit(new Transaction().add({ table: { family: 'ip', name: 't' } }).add({ chain: { family: 'ip', table: 't', name: 'c' } }));
    await fake.commit(new Transaction().add({ table: { family: 'ip', name: 'u' } }).add({ chain: { family: 'ip', table: 'u', name: 'c' } }));
    for await (const ev of mon) {
      expect(ev).toMatchObject({ generation: 3, changes: [{ verb: 'add', kind: 'chain', chain: { table: 'u' } }] });
      break;
    }
    await fake.commit(new Transaction().add({ chain: { family: 'ip', table: 'u', name: 'd' } }));
    expect(await mon.next()).toEqual({ value: undefined, done: true });
  });

  it('a full buffer drops what comes meanwhile and says so before the next transaction', async () => {
    const fake = new FakeNftables();
    const mon = fake.monitor({ maxBuffered: 2 });
    await fake.commit(new Transaction().add({ table: { family: 'ip', name: 't' } }).add({ set: s }));
    for (let i = 0; i < 5; i++) await fake.commit(new Transaction().add({ set: s, elements: [{ key: [`198.18.0.${i + 1}`] }] }));
    expect(mon.buffered).toBe(2);
    expect(summary(await next(mon))).toEqual(['add table', 'add set']);
    await fake.commit(new Transaction().add({ set: s, elements: [{ key: ['198.18.1.1'] }] }));
    expect(await next(mon)).toEqual({ type: 'lost' });
    expect(await next(mon)).toMatchObject({ generation: 8, changes: [{ elements: [{ key: ['198.18.1.1'] }] }] });
    mon.close();
  });
});
