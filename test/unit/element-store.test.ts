import { describe, expect, it } from 'vitest';
import { Transaction, types } from '../../src/index.js';
import type { NftSet } from '../../src/index.js';
import { ElementStore } from '../../src/nft/reconcile/element-store.js';

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
    st.committed();
    st.ensure({ key: ['198.18.0.1'], value: ['198.18.1.2', 80] });
    st.ensure({ key: ['198.18.0.5'], value: ['198.18.1.5', 80] });
    st.remove({ key: ['198.18.0.7'] });
    const d = st.delta();
    expect(d.add).toHaveLength(2);
    expect(d.delete.map((e) => e.key[0])).toEqual(['198.18.0.1']);
    st.committed();
    expect(st.size).toBe(2);
    st.remove({ key: ['198.18.0.5'] });
    expect(st.delta().delete.map((e) => e.key[0])).toEqual(['198.18.0.5']);
  });

  it('refuses values of the wrong type, naming the set', () => {
    const st = new ElementStore(map);
    expect(() => st.setDesired([{ key: ['198.18.0.1'], value: ['nope', 80] }])).toThrow(/map eps value/);
  });
});
