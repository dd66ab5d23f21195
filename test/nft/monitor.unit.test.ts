// The monitor's pure parts: batches from the addon decoded and grouped into transactions, the
// filters, the bounded buffer, and the nft monitor text.

import { describe, expect, it } from 'vitest';
import { monitorLines, type MonitorEvent, type MonitorTransaction } from '../../src/index.js';
import { MonitorDecoder, MONITOR_GENERATION_KIND, type MonitorRecord } from '../../src/nft/monitor/event-decoder.js';
import { EventQueue } from '../../src/nft/monitor/event-queue.js';
import { MonitorFilter } from '../../src/nft/monitor/filter.js';
import { eventWeight, TransactionAssembler } from '../../src/nft/monitor/transactions.js';
import { types } from '../../src/index.js';
import { elemsOp, encode, ip4, ruleOp, saddr, cmpEq, accept, setOp, str, tableOp, TABLE, u32v, type Op } from '../native/compact-format.js';

const NEWGEN = 15;
const genOp = (id: number, portid: number, pid = 4242, name = 'nft'): Op => ({
  msgType: NEWGEN,
  kind: MONITOR_GENERATION_KIND,
  family: 0,
  attrs: [
    [0, u32v(id)],
    [1, u32v(pid)],
    [2, str(name)],
    [3, u32v(portid)],
    [4, u32v(1)],
  ],
});

/** Feeds batches through a decoder and an assembler, as the kernel monitor does. */
function run(batches: Op[][], opts: { filter?: MonitorFilter; self?: number; empty?: boolean } = {}): MonitorEvent[] {
  const decoder = new MonitorDecoder(opts.filter ?? new MonitorFilter());
  const assembler = new TransactionAssembler(opts.self, opts.empty);
  const out: MonitorEvent[] = [];
  const take = (r: MonitorRecord): void => {
    const t = assembler.record(r);
    if (t) out.push(t);
  };
  for (const b of batches) decoder.add(encode(b), take);
  return out;
}

describe('decoding and grouping', () => {
  it('a transaction spread over batches (an element run across two) comes as one, with who committed it', () => {
    const events = run(
      [
        [tableOp(), setOp('s', 7, 4, 1), elemsOp('s', [ip4(1)])],
        [elemsOp('s', [ip4(2)]), ruleOp('c', [saddr, cmpEq(ip4(3)), accept]), genOp(7, 99)],
      ],
      { self: 99 },
    );
    expect(events).toHaveLength(1);
    const t = events[0] as MonitorTransaction;
    expect(t).toMatchObject({ type: 'transaction', generation: 7, pid: 4242, processName: 'nft', portid: 99, self: true });
    expect(t.changes.map((c) => `${c.verb} ${c.kind}`)).toEqual(['add table', 'add set', 'add element', 'add rule']);
    expect(t.changes[2]).toMatchObject({ set: { name: 's', key: [types.ipv4_addr] }, elements: [{ key: ['198.18.0.1'] }, { key: ['198.18.0.2'] }] });
    // NLM_F_APPEND: an add, not an insert.
    expect(t.changes[3]).toMatchObject({ verb: 'add', rule: { table: TABLE, chain: 'c' } });
  });

  it('another socket\'s commit is not self; a deleted set is described as it was known', () => {
    const del: Op = { msgType: 11, kind: 3, family: 2, attrs: [[0, str(TABLE)], [1, str('s')]] };
    const events = run([[tableOp(), setOp('s', 7, 4, 1), genOp(2, 5)], [del, genOp(3, 5)]], { self: 99 });
    expect(events.map((e) => (e as MonitorTransaction).self)).toEqual([false, false]);
    expect((events[1] as MonitorTransaction).changes).toEqual([{ verb: 'delete', kind: 'set', set: expect.objectContaining({ name: 's', key: [types.ipv4_addr] }) }]);
  });

  it('elements of a set it never saw come undecoded, counted', () => {
    const events = run([[elemsOp('unknown', [ip4(1), ip4(2)]), genOp(2, 5)]]);
    expect((events[0] as MonitorTransaction).changes).toEqual([
      { verb: 'add', kind: 'element', set: { family: 'ip', table: TABLE, name: 'unknown', key: [] }, elements: [], undecoded: 2 },
    ]);
  });

  it('filters before decoding; transactions left empty are skipped unless asked for', () => {
    const batches = [[tableOp(), tableOp('other'), setOp('s', 7, 4, 1), elemsOp('s', [ip4(1)]), genOp(2, 5)], [tableOp('other'), genOp(3, 5)]];
    const only = run(batches, { filter: new MonitorFilter({ table: TABLE, kinds: ['element'] }) });
    expect(only).toHaveLength(1);
    expect((only[0] as MonitorTransaction).changes.map((c) => c.kind)).toEqual(['element']);
    const all = run(batches, { filter: new MonitorFilter({ table: TABLE }), empty: true });
    expect(all.map((e) => (e as MonitorTransaction).changes.length)).toEqual([3, 0]);
    expect(run(batches, { filter: new MonitorFilter({ family: 'ip6' }) })).toEqual([]);
  });

  it('a loss drops the transaction being received', () => {
    const a = new TransactionAssembler(1);
    a.record({ type: 'change', change: { verb: 'add', kind: 'table', table: { family: 'ip', name: 't' } } });
    expect(a.lost()).toEqual({ type: 'lost' });
    expect(a.record({ type: 'generation', generation: 9, portid: 1 })).toBeUndefined();
  });
});

describe('the bounded buffer', () => {
  function queue(high: number) {
    const calls: string[] = [];
    const q = new EventQueue<number>({ pause: () => calls.push('pause'), resume: () => calls.push('resume'), close: () => calls.push('close') }, high, (n) => n);
    return { q, calls };
  }

  it('pauses the source at `high` buffered and resumes it at half', async () => {
    const { q, calls } = queue(10);
    for (const n of [4, 4, 4]) q.push(n);
    expect(calls).toEqual(['pause']);
    expect(q.size).toBe(12);
    expect(await q.next()).toEqual({ value: 4, done: false });
    expect(calls).toEqual(['pause']);
    await q.next();
    expect(calls).toEqual(['pause', 'resume']);
  });

  it('a waiting next() gets the next item at once; close() ends it and the source', async () => {
    const { q, calls } = queue(10);
    const pending = q.next();
    q.push(1);
    expect(await pending).toEqual({ value: 1, done: false });
    const waiting = q.next();
    q.close();
    expect(await waiting).toEqual({ value: undefined, done: true });
    expect(calls).toEqual(['close']);
    q.push(2);
    expect(await q.next()).toEqual({ value: undefined, done: true });
  });

  it('a failure comes after what was buffered', async () => {
    const { q } = queue(10);
    q.push(1);
    q.fail(new Error('socket gone'));
    expect(await q.next()).toEqual({ value: 1, done: false });
    await expect(q.next()).rejects.toThrow('socket gone');
    expect(await q.next()).toEqual({ value: undefined, done: true });
  });

  it('weighs an event by its changes, an element change by its elements', () => {
    const set = { family: 'ip' as const, table: 't', name: 's', key: [] };
    expect(eventWeight({ type: 'lost' })).toBe(1);
    expect(eventWeight({ type: 'transaction', generation: 1, portid: 0, self: false, changes: [] })).toBe(1);
    expect(eventWeight({ type: 'transaction', generation: 1, portid: 0, self: false, changes: [{ verb: 'add', kind: 'element', set, elements: [{ key: [1] }, { key: [2] }] }, { verb: 'add', kind: 'table', table: { family: 'ip', name: 't' } }] })).toBe(3);
  });
});

describe('nft monitor text', () => {
  it('one line per change and per element, then the generation', () => {
    const s = { family: 'ip' as const, table: 't', name: 's', key: [types.ipv4_addr] };
    const lines = monitorLines({
      type: 'transaction',
      generation: 5,
      pid: 77,
      processName: 'nft',
      portid: 77,
      self: false,
      changes: [
        { verb: 'add', kind: 'table', table: { family: 'ip', name: 't', comment: 'x' } },
        { verb: 'add', kind: 'set', set: s },
        { verb: 'add', kind: 'element', set: s, elements: [{ key: ['198.18.0.1'] }, { key: ['198.18.0.2'] }] },
        { verb: 'delete', kind: 'chain', chain: { family: 'ip', table: 't', name: 'c', handle: 3 } },
        { verb: 'delete', kind: 'rule', rule: { family: 'ip', table: 't', chain: 'c', exprs: [], handle: 4 } },
      ],
    });
    expect(lines).toEqual([
      'add table ip t',
      'add set ip t s { type ipv4_addr; }',
      'add element ip t s { 198.18.0.1 }',
      'add element ip t s { 198.18.0.2 }',
      'delete chain ip t c',
      'delete rule ip t c handle 4',
      '# new generation 5 by process 77 (nft)',
    ]);
    expect(monitorLines({ type: 'lost' })[0]).toMatch(/^# events lost/);
  });
});
