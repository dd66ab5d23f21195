// Nftables.monitor against the kernel, each test in fresh namespaces: the events of a transaction
// committed by nftlink equal those of the same transaction applied with `nft -f`; the filters; an
// overrun of the socket yields `lost`; leaving the loop closes the socket.

import { readdirSync, readlinkSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { monitorLines, Nftables, rule, ip, Transaction, types, type MonitorChange, type MonitorEvent, type MonitorOptions, type MonitorTransaction, type NftMonitor, type NftSet } from '../../src/index.js';
import { namespacesForFile } from '../helpers/netns.js';
import { FIXTURES } from '../fixtures/index.js';

const ns = namespacesForFile(afterAll);

/** The next `n` events, or a failure naming what came when they do not come in time. */
async function take(mon: NftMonitor, n: number, ms = 10_000): Promise<MonitorEvent[]> {
  const got: MonitorEvent[] = [];
  const timer = setTimeout(() => mon.close(), ms);
  try {
    for (;;) {
      if (got.length >= n) return got;
      const r = await mon.next();
      if (r.done) throw new Error(`monitor ended after ${got.length} of ${n} events: ${JSON.stringify(got).slice(0, 2000)}`);
      got.push(r.value);
    }
  } finally {
    clearTimeout(timer);
  }
}

function transactions(events: MonitorEvent[]): MonitorTransaction[] {
  return events.map((e) => {
    if (e.type !== 'transaction') throw new Error(`expected a transaction, got ${JSON.stringify(e)}`);
    return e;
  });
}

/**
 * Changes as comparable data: an inline anonymous set as its types and its sorted elements, since nft
 * and nftlink name them differently and nft also gives them a size and `typeof` userdata.
 */
function comparable(changes: readonly MonitorChange[]): unknown {
  return JSON.parse(
    JSON.stringify(changes, (_k, v: unknown) => {
      if (typeof v === 'bigint') return `${v}n`;
      if (!v || typeof v !== 'object' || (v as { type?: string }).type !== 'lookup' || !(v as { inline?: NftSet }).inline) return v;
      const { inline, set: _name, ...rest } = v as { inline: NftSet; set: string };
      const elements = (inline.elements ?? []).map((e) => JSON.stringify(e)).sort();
      return { ...rest, inline: { key: inline.key.map((t) => t.name), data: inline.data, flags: inline.flags, elements } };
    }),
  );
}

/** Opens a connection and a monitor in a fresh namespace, ready (the existing sets read). */
async function watched(opts: MonitorOptions = {}): Promise<{ nft: Nftables; mon: NftMonitor; name: string; apply: (text: string) => void }> {
  const n = ns();
  const nft = Nftables.open({ netns: n.name });
  const mon = nft.monitor(opts);
  await mon.started();
  return { nft, mon, name: n.name, apply: (text) => n.nftApply(text) };
}

// nft builds some inet rules' expressions in another order than nftlink (the same rule all the
// same: nft lists both alike); those fixtures compare as the text the monitor renders.
const SAME_EXPRESSIONS = new Set(['kube-proxy shape, ip', 'kube-proxy shape, ip6']);

describe.each(FIXTURES)('%s', (name, build) => {
  it('a transaction committed by nftlink and the same one applied with nft -f give equal events', async () => {
    const a = await watched();
    const b = await watched();
    try {
      await a.nft.commit(build());
      b.apply(build().render());
      const [viaNftlink] = transactions(await take(a.mon, 1));
      const [viaNft] = transactions(await take(b.mon, 1));
      expect(viaNftlink!.changes.length).toBeGreaterThan(10);
      if (SAME_EXPRESSIONS.has(name)) expect(comparable(viaNftlink!.changes)).toEqual(comparable(viaNft!.changes));
      const text = (t: MonitorTransaction): string[] => monitorLines(t).slice(0, -1).map((l) => l.replace(/__(set|map)\d+|bcr8_\w+/g, 'ANON'));
      expect(text(viaNftlink!)).toEqual(text(viaNft!));
      expect(viaNftlink!.generation).toBe(viaNft!.generation);
      // Who committed: this connection's socket, and nft.
      expect(viaNftlink!.self).toBe(true);
      expect(viaNftlink!.portid).toBe(a.nft.portid);
      expect(viaNft!.self).toBe(false);
      expect(viaNft!.processName).toBe('nft');
      expect(viaNft!.pid).toBeGreaterThan(0);
    } finally {
      for (const w of [a, b]) w.mon.close(), w.nft.close();
    }
  });
});

const { ipv4_addr } = types;

it('decodes element keys, values and timeouts with the set types, rules with their inline sets, and deletes', async () => {
  const w = await watched();
  try {
    // A set made before the monitor's first event: its types come from the monitor's dump.
    w.apply('add table ip t\nadd set ip t early { type ipv4_addr; }\n');
    const s: NftSet = { family: 'ip', table: 't', name: 's', key: [ipv4_addr], flags: ['timeout'] };
    const tx = new Transaction()
      .add({ chain: { family: 'ip', table: 't', name: 'c' } })
      .add({ set: s })
      .add({ set: s, elements: [{ key: ['198.18.0.1'], timeout: 60_000 }, { key: ['198.18.0.2'] }] })
      .add({ set: { family: 'ip', table: 't', name: 'early', key: [ipv4_addr] }, elements: [{ key: ['198.18.0.3'] }] })
      .add({ rule: rule('ip').match(ip.daddr, ['198.18.0.5', '198.18.0.6']).accept().rule('t', 'c') });
    await w.nft.commit(tx);
    const [, t] = transactions(await take(w.mon, 2));
    const kinds = t!.changes.map((c) => `${c.verb} ${c.kind}`);
    expect(kinds).toEqual(['add chain', 'add set', 'add element', 'add element', 'add rule']);
    const elems = t!.changes.filter((c) => c.kind === 'element');
    expect(elems[0]).toMatchObject({ set: { name: 's', key: [ipv4_addr] }, elements: [{ key: ['198.18.0.1'], timeout: 60_000 }, { key: ['198.18.0.2'] }] });
    expect(elems[1]).toMatchObject({ set: { name: 'early' }, elements: [{ key: ['198.18.0.3'] }] });
    const added = t!.changes.at(-1)!;
    if (added.kind !== 'rule') throw new Error('expected a rule');
    const lookup = added.rule.exprs.find((e) => e.type === 'lookup');
    expect(lookup).toMatchObject({ inline: { anonymous: true, elements: [{ key: ['198.18.0.5'] }, { key: ['198.18.0.6'] }] } });

    await w.nft.commit(new Transaction().delete({ set: s, elements: [{ key: ['198.18.0.2'] }] }).delete({ rule: { ...added.rule } }));
    const [d] = transactions(await take(w.mon, 1));
    expect(d!.changes.map((c) => `${c.verb} ${c.kind}`)).toEqual(['delete element', 'delete rule']);
    expect(d!.changes[0]).toMatchObject({ elements: [{ key: ['198.18.0.2'] }] });
    // A replace: the old rule's delete and the new one's add, which keeps the handle (as the fake has it).
    const { ruleHandles } = await w.nft.commit(new Transaction().add({ rule: rule('ip').accept().rule('t', 'c') }, { echo: true }));
    const handle = ruleHandles.get(0)!;
    await w.nft.commit(new Transaction().replace({ rule: { ...rule('ip').drop().rule('t', 'c'), handle } }));
    const [, replaced] = transactions(await take(w.mon, 2));
    expect(replaced!.changes).toMatchObject([
      { verb: 'delete', kind: 'rule', rule: { handle } },
      { verb: 'add', kind: 'rule', rule: { handle, exprs: [{ type: 'immediate', verdict: { kind: 'drop' } }] } },
    ]);
    // The kernel's DELSET carries the name only: the set comes with the types the monitor knew.
    w.apply('delete set ip t s\n');
    const [ds] = transactions(await take(w.mon, 1));
    expect(ds!.changes).toEqual([{ verb: 'delete', kind: 'set', set: expect.objectContaining({ name: 's', key: [ipv4_addr], flags: ['timeout'] }) }]);
  } finally {
    w.mon.close();
    w.nft.close();
  }
});

describe('filters', () => {
  // Three transactions: the objects, changes to them, and one that every filter below lets through.
  const steps = [
    'add table ip t\nadd table ip6 t\nadd table ip u\nadd chain ip t c\nadd chain ip6 t c\nadd chain ip u c\nadd set ip t s { type ipv4_addr; }\n',
    'add element ip t s { 198.18.0.9 }\nadd rule ip t c accept\nadd rule ip6 t c accept\nadd rule ip u c drop\n',
    'delete table ip u\n',
  ];

  /** What each transaction showed through the filter, as "verb kind family table [name]". */
  async function seen(opts: MonitorOptions): Promise<string[][]> {
    // emptyTransactions: every transaction comes, so the test knows when the last has been seen.
    const w = await watched({ ...opts, emptyTransactions: true });
    try {
      for (const text of steps) w.apply(text);
      return transactions(await take(w.mon, steps.length)).map((t) =>
        t.changes.map((c) => {
          const o = c.kind === 'table' ? { ...c.table, table: c.table.name, name: '' } : c.kind === 'chain' ? c.chain : c.kind === 'rule' ? { ...c.rule, name: c.rule.chain } : c.set;
          return `${c.verb} ${c.kind} ${o.family} ${o.table} ${o.name}`.trimEnd();
        }),
      );
    } finally {
      w.mon.close();
      w.nft.close();
    }
  }

  it('by table', async () => {
    expect(await seen({ table: 'u' })).toEqual([
      ['add table ip u', 'add chain ip u c'],
      ['add rule ip u c'],
      ['delete rule ip u c', 'delete chain ip u c', 'delete table ip u'],
    ]);
  });

  it('by family and table', async () => {
    expect(await seen({ family: 'ip6', table: 't' })).toEqual([['add table ip6 t', 'add chain ip6 t c'], ['add rule ip6 t c'], []]);
  });

  it('by kind', async () => {
    expect(await seen({ kinds: ['element', 'set'] })).toEqual([['add set ip t s'], ['add element ip t s'], []]);
    expect(await seen({ family: 'ip', kinds: ['table'] })).toEqual([['add table ip t', 'add table ip u'], [], ['delete table ip u']]);
  });

  it('leaves out transactions with nothing that passes, unless asked', async () => {
    const w = await watched({ table: 'u' });
    try {
      for (const text of steps) w.apply(text);
      const got = transactions(await take(w.mon, 3));
      expect(got.map((t) => t.generation)).toEqual([2, 3, 4]);
      w.apply('add table ip x\n');
      w.apply('add table ip u\nadd chain ip u d\n');
      const [next] = transactions(await take(w.mon, 1));
      expect(next!.generation).toBe(6);
    } finally {
      w.mon.close();
      w.nft.close();
    }
  });
});

it("skipOwnChanges leaves out this connection's own commits, and only those", async () => {
  const w = await watched({ skipOwnChanges: true, emptyTransactions: true });
  try {
    await w.nft.commit(new Transaction().add({ table: { family: 'ip', name: 'own' } }).add({ chain: { family: 'ip', table: 'own', name: 'c' } }));
    w.apply('add table ip other\nadd chain ip other c\n');
    const [own, other] = transactions(await take(w.mon, 2));
    expect(own!.self).toBe(true);
    expect(own!.changes).toEqual([]);
    expect(other!.self).toBe(false);
    expect(other!.changes.map((c) => `${c.verb} ${c.kind}`)).toEqual(['add table', 'add chain']);
  } finally {
    w.mon.close();
    w.nft.close();
  }
});

it("skipOwnChanges still decodes the elements others change in the connection's own sets", async () => {
  const w = await watched({ skipOwnChanges: true, emptyTransactions: true });
  try {
    // Made after the monitor started, by its own connection: its types come from the own commit.
    const s: NftSet = { family: 'ip', table: 'own', name: 's', key: [ipv4_addr], data: 'verdict' };
    await w.nft.commit(
      new Transaction()
        .add({ table: { family: 'ip', name: 'own' } })
        .add({ chain: { family: 'ip', table: 'own', name: 'c' } })
        .add({ set: s })
        .add({ rule: rule('ip').match(ip.daddr, ['198.18.0.5', '198.18.0.6']).accept().rule('own', 'c') }),
    );
    w.apply('add element ip own s { 198.18.0.1 : jump c }\ndelete set ip own s\n');
    const [own, other] = transactions(await take(w.mon, 2));
    expect(own!.self).toBe(true);
    expect(own!.changes).toEqual([]);
    expect(other!.changes).toEqual([
      { verb: 'add', kind: 'element', set: expect.objectContaining({ name: 's', key: [ipv4_addr], data: 'verdict' }), elements: [{ key: ['198.18.0.1'], value: { kind: 'jump', chain: 'c' } }] },
      { verb: 'delete', kind: 'set', set: expect.objectContaining({ name: 's', key: [ipv4_addr] }) },
    ]);
  } finally {
    w.mon.close();
    w.nft.close();
  }
});

it('an overrun of the socket buffer while the consumer waits yields lost, and events go on after it', async () => {
  const w = await watched({ receiveBuffer: 4096, maxBuffered: 16 });
  try {
    const s: NftSet = { family: 'ip', table: 't', name: 's', key: [ipv4_addr] };
    await w.nft.commit(new Transaction().add({ table: { family: 'ip', name: 't' } }).add({ set: s }));
    // One element per transaction, thousands of them, while nobody reads the monitor.
    const burst = 3000;
    // A set made in the middle of the burst: its NEWSET is lost with the rest.
    const g: NftSet = { family: 'ip', table: 't', name: 'g', key: [ipv4_addr] };
    for (let i = 0; i < burst; i++) {
      const tx = new Transaction().add({ set: s, elements: [{ key: [`198.18.${i >> 8}.${i & 255}`] }] });
      await w.nft.commit(i === burst / 2 ? tx.add({ set: g }) : tx);
      // A commit this small settles before commit() returns (native/README.md): the event loop runs
      // here, as between an application's commits, so that the monitor reads until it stops.
      await new Promise((resolve) => setImmediate(resolve));
    }
    // The monitor stopped reading at 16 buffered changes, and the 8 KiB socket buffer overflowed.
    expect(w.mon.buffered).toBeGreaterThanOrEqual(16);
    const events: MonitorEvent[] = [];
    while (!events.some((e) => e.type === 'lost')) events.push(...(await take(w.mon, 1)));
    // What was read before the overrun came first, whole.
    const before = transactions(events.slice(0, -1));
    expect(before.length).toBeGreaterThanOrEqual(15);
    expect(before.length).toBeLessThan(burst);
    // After it: the events still queued, then a transaction committed now, whole.
    await w.nft.commit(new Transaction().add({ set: s, elements: [{ key: ['198.19.0.1'] }] }).add({ set: g, elements: [{ key: ['198.19.0.2'] }] }));
    const last = await w.nft.generation();
    const after = transactions(await take(w.mon, 1));
    while (after.at(-1)!.generation !== last) after.push(...transactions(await take(w.mon, 1)));
    // The monitor read the sets again after the loss: the one made in the gap is known.
    expect(after.at(-1)!.changes).toEqual([
      { verb: 'add', kind: 'element', set: expect.objectContaining({ name: 's' }), elements: [{ key: ['198.19.0.1'] }] },
      { verb: 'add', kind: 'element', set: expect.objectContaining({ name: 'g', key: [ipv4_addr] }), elements: [{ key: ['198.19.0.2'] }] },
    ]);
  } finally {
    w.mon.close();
    w.nft.close();
  }
});

it('leaving the loop closes the subscription: no descriptor stays open', async () => {
  const n = ns();
  const nft = Nftables.open({ netns: n.name });
  // This process's netlink sockets in the test's namespace (its /proc/net/netlink lists their
  // inodes): the test runner opens and closes pipes and sockets of its own meanwhile.
  const fds = (): number => {
    const inodes = new Set(n.exec('cat', ['/proc/net/netlink']).split('\n').slice(1).map((l) => l.trim().split(/\s+/)[9]));
    return readdirSync('/proc/self/fd').filter((f) => {
      try {
        return inodes.has(/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${f}`))?.[1]);
      } catch {
        return false;
      }
    }).length;
  };
  // The socket closes with its poll handle, in the close phase of the event loop's turn.
  const closed = (): Promise<void> => new Promise((r) => setTimeout(r, 10));
  try {
    const mon0 = nft.monitor();
    await mon0.started();
    mon0.close();
    await closed();
    const before = fds();
    for (let i = 0; i < 20; i++) {
      const mon = nft.monitor();
      await mon.started();
      expect(fds()).toBe(before + 1);
      n.nftApply(`add table ip t${i}\n`);
      for await (const ev of mon) {
        expect(ev).toMatchObject({ type: 'transaction', changes: [{ verb: 'add', kind: 'table', table: { name: `t${i}` } }] });
        break;
      }
      await closed();
      expect(fds()).toBe(before);
      // Ended: a further next() is done at once, whatever is committed.
      n.nftApply(`add table ip u${i}\n`);
      expect(await mon.next()).toEqual({ value: undefined, done: true });
    }
  } finally {
    nft.close();
  }
});
