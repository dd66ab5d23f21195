// An element operation with no elements queues nothing (docs/library.md, Transactions): sent, the
// kernel would take a delete or destroy of none as a flush of the whole set, and refuse an add or
// create of none with EINVAL. No kernel needed (empty-elements.kernel.test.ts shows the kernel's side).

import { describe, expect, it } from 'vitest';
import { NftValidationError, Transaction, types } from '../../src/index.js';
import type { NftSet, SetElement } from '../../src/index.js';

const { ipv4_addr, inet_service } = types;
const table = { family: 'ip' as const, name: 't' };
const addrs: NftSet = { family: 'ip', table: 't', name: 'addrs', key: [ipv4_addr] };
const ranges: NftSet = { family: 'ip', table: 't', name: 'ranges', key: [ipv4_addr], flags: ['interval'] };
const ports: NftSet = { family: 'ip', table: 't', name: 'ports', key: [ipv4_addr], data: [inet_service] };

function* nothing(): Generator<SetElement> {}

const VERBS = ['add', 'create', 'delete', 'destroy'] as const;
const EMPTY: [string, () => Iterable<SetElement>][] = [
  ['an empty array', () => []],
  ['a generator that yields nothing', nothing],
  ['an empty Set', () => new Set<SetElement>()],
];

const bytes = (tx: Transaction): Buffer => Buffer.from(tx.encode().buffer);

describe('an element operation with no elements', () => {
  describe.each([addrs, ranges, ports])('set $name', (set) => {
    it.each(VERBS.flatMap((verb) => EMPTY.map(([what, elements]) => [verb, what, elements] as const)))('%s of %s queues nothing', (verb, _what, elements) => {
      const before = new Transaction().add({ table }).add({ set }).add({ set, elements: [{ key: ['198.18.0.1'], ...(set.data ? { value: [80] } : {}) }] });
      const expected = bytes(before);
      const size = before.size;
      const text = before.render();
      before[verb]({ set, elements: elements() });
      expect(before.size).toBe(size);
      expect(before.operations).toHaveLength(size);
      expect(before.render()).toBe(text);
      expect(bytes(before).equals(expected)).toBe(true);
      // The next operation takes the next index: nothing was left half queued.
      before.add({ set, elements: [{ key: ['198.18.0.2'], ...(set.data ? { value: [443] } : {}) }] });
      expect(before.size).toBe(size + 1);
      expect(before.operation(size).kind).toBe('element');
    });
  });

  it('a transaction of nothing else encodes as an empty one', () => {
    const tx = new Transaction().delete({ set: addrs, elements: [] }).destroy({ set: ranges, elements: nothing() }).add({ set: ports, elements: [] });
    expect(tx.size).toBe(0);
    expect(bytes(tx).equals(bytes(new Transaction()))).toBe(true);
  });

  it('is still checked as any element operation: the set must be known, the verb must apply', () => {
    const unknown = { family: 'ip' as const, table: 't', name: 'unknown' };
    expect(() => new Transaction().delete({ set: unknown, elements: [] })).toThrow(NftValidationError);
    expect(() => new Transaction().delete({ set: unknown, elements: [] })).toThrow(/the types of set ip t unknown are unknown/);
    expect(() => new Transaction().flush({ set: addrs, elements: [] } as never)).toThrow(/flush does not apply to elements/);
    // Known from the transaction's sets: no error, nothing queued.
    const tx = new Transaction({ sets: [addrs] }).delete({ set: { family: 'ip', table: 't', name: 'addrs' }, elements: [] });
    expect(tx.size).toBe(0);
  });

  it('a delete of one element still deletes that element (only the empty list is skipped)', () => {
    const tx = new Transaction().delete({ set: addrs, elements: [{ key: ['198.18.0.1'] }] });
    expect(tx.size).toBe(1);
    expect(tx.render()).toBe('delete element ip t addrs { 198.18.0.1 }\n');
  });
});
