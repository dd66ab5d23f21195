import { describe, expect, it } from 'vitest';
// From the package's entry: CNIs that embed the library use the store directly.
import { ElementStore, Transaction, types } from '../../src/index.js';
import type { NftSet } from '../../src/index.js';

const { ipv4_addr, inet_service } = types;
const map: NftSet = { family: 'ip', table: 't', name: 'eps', key: [ipv4_addr], data: [ipv4_addr, inet_service] };

describe('ElementStore', () => {
  it('adds new keys, deletes and re-adds changed values, sweeps leftovers', () => {
    const st = new ElementStore(map);
    st.resync([
      { key: ['198.18.0.1'], value: ['198.18.1.1', 80] },
      { key: ['198.18.0.2'], value: ['198.18.1.2', 80] },
      { key: ['198.18.0.3'], value: ['198.18.1.3', 80] },
    ]);
    st.setDesired([
      { key: ['198.18.0.1'], value: ['198.18.1.1', 80] },
      { key: ['198.18.0.2'], value: ['198.18.1.9', 80] },
      { key: ['198.18.0.4'], value: ['198.18.1.4', 80] },
    ]);
    const d = st.delta();
    expect(d.add.map((e) => e.key[0])).toEqual(['198.18.0.2', '198.18.0.4']);
    expect(d.delete.map((e) => e.key[0]).sort()).toEqual(['198.18.0.2', '198.18.0.3']);
    const tx = new Transaction();
    expect(st.queue(tx)).toBe(4);
    expect(tx.render()).toBe('delete element ip t eps { 198.18.0.2, 198.18.0.3 }\nadd element ip t eps { 198.18.0.2 : 198.18.1.9 . 80, 198.18.0.4 : 198.18.1.4 . 80 }\n');
    st.committed();
    expect(st.delta()).toEqual({ add: [], delete: [] });
  });

  it('partial updates compare only the keys they touched', () => {
    const st = new ElementStore(map);
    st.setDesired([{ key: ['198.18.0.1'], value: ['198.18.1.1', 80] }]);
    st.queue(new Transaction());
    st.committed();
    st.ensure({ key: ['198.18.0.1'], value: ['198.18.1.2', 80] });
    st.ensure({ key: ['198.18.0.5'], value: ['198.18.1.5', 80] });
    st.remove({ key: ['198.18.0.7'] });
    const d = st.delta();
    expect(d.add).toHaveLength(2);
    expect(d.delete.map((e) => e.key[0])).toEqual(['198.18.0.1']);
    st.queue(new Transaction());
    st.committed();
    expect(st.size).toBe(2);
    st.remove({ key: ['198.18.0.5'] });
    expect(st.delta().delete.map((e) => e.key[0])).toEqual(['198.18.0.5']);
  });

  it('refuses keys of the wrong type at once and values when queued, naming the set', () => {
    const st = new ElementStore(map);
    expect(() => st.setDesired([{ key: ['nope'], value: ['198.18.1.1', 80] }])).toThrow(/set eps/);
    st.setDesired([{ key: ['198.18.0.1'], value: ['nope', 80] }]);
    expect(() => st.queue(new Transaction())).toThrow(/eps.*nope/);
    // A refused queue leaves the store as after a failure: the next queue compares everything again.
    st.setDesired([{ key: ['198.18.0.1'], value: ['198.18.1.1', 80] }]);
    const tx = new Transaction();
    expect(st.queue(tx)).toBe(1);
  });

  it('queues in parts: each queue compares against what the previous ones wrote', () => {
    const st = new ElementStore(map);
    st.resync([{ key: ['198.18.0.9'], value: ['198.18.1.9', 80] }]);
    st.setDesired([]);
    st.ensure({ key: ['198.18.0.1'], value: ['198.18.1.1', 80] });
    const first = new Transaction();
    expect(st.queue(first)).toBe(2); // the new key, and the leftover swept
    st.ensure({ key: ['198.18.0.1'], value: ['198.18.1.1', 80] }); // the same again: nothing to write
    st.ensure({ key: ['198.18.0.2'], value: ['198.18.1.2', 80] });
    const second = new Transaction();
    expect(st.queue(second)).toBe(1);
    expect(second.render()).toBe('add element ip t eps { 198.18.0.2 : 198.18.1.2 . 80 }\n');
    st.committed();
    expect(st.delta()).toEqual({ add: [], delete: [] });
    st.remove({ key: ['198.18.0.1'] });
    expect(st.delta().delete.map((e) => e.key[0])).toEqual(['198.18.0.1']);
  });

  it('after a failed commit, queues again what the kernel still lacks, across parts', () => {
    const st = new ElementStore(map);
    st.resync([{ key: ['198.18.0.1'], value: ['198.18.1.1', 80] }]);
    st.setDesired([{ key: ['198.18.0.1'], value: ['198.18.1.1', 80] }]);
    expect(st.queue(new Transaction())).toBe(0);
    st.committed();
    // Two parts of one plan, then the kernel refuses: it still holds only the first element.
    st.ensure({ key: ['198.18.0.2'], value: ['198.18.1.2', 80] });
    st.ensure({ key: ['198.18.0.1'], value: ['198.18.1.9', 80] });
    expect(st.queue(new Transaction())).toBe(3);
    st.remove({ key: ['198.18.0.2'] });
    st.ensure({ key: ['198.18.0.3'], value: ['198.18.1.3', 80] });
    const second = new Transaction();
    expect(st.queue(second)).toBe(2);
    expect(second.render()).toBe('delete element ip t eps { 198.18.0.2 }\nadd element ip t eps { 198.18.0.3 : 198.18.1.3 . 80 }\n');
    st.failed();
    const d = st.delta();
    expect(d.delete.map((e) => e.value)).toEqual([['198.18.1.1', 80]]);
    expect(d.add.map((e) => e.key[0]).sort()).toEqual(['198.18.0.1', '198.18.0.3']);
    const retry = new Transaction();
    expect(st.queue(retry)).toBe(3);
    st.committed();
    expect(st.delta()).toEqual({ add: [], delete: [] });
  });
});
