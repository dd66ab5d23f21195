import { describe, expect, it } from 'vitest';
import { Transaction, types } from '../../src/index.js';
import type { NftSet, SetElement } from '../../src/index.js';
import { ElementIndex } from '../../src/proxy/sync/element-index.js';

const { ipv4_addr, inet_service } = types;
const set: NftSet = { family: 'ip', table: 't', name: 'hairpin', key: [ipv4_addr, inet_service] };
const el = (ip: string, port: number, comment?: string): SetElement => (comment ? { key: [ip, port], comment } : { key: [ip, port] });
const contributions = (...elements: SetElement[]): Map<string, SetElement[]> => new Map([['hairpin', elements]]);

/** Queues and commits the index's delta; returns it as nft text. */
function commit(index: ElementIndex): string {
  const tx = new Transaction({ sets: [set] });
  index.queue(tx);
  index.committed();
  return tx.render();
}

describe('ElementIndex', () => {
  it('keeps a key that two service ports contribute until the last one withdraws it', () => {
    const index = new ElementIndex();
    index.declare(set);
    const a = contributions(el('198.18.0.1', 80, 'a'), el('198.18.0.2', 80, 'a'));
    const b = contributions(el('198.18.0.2', 80, 'b'));
    index.contribute(undefined, a);
    index.contribute(undefined, b);
    // The first contributor's element is the one written.
    expect(commit(index)).toBe('add element ip t hairpin { 198.18.0.1 . 80 comment "a", 198.18.0.2 . 80 comment "a" }\n');
    expect(index.isShared('hairpin', el('198.18.0.2', 80))).toBe(true);
    // a goes: its own key goes, the shared one stays and becomes b's (a delete and re-add: the comment changed).
    index.contribute(a, undefined);
    expect(commit(index)).toBe('delete element ip t hairpin { 198.18.0.1 . 80, 198.18.0.2 . 80 }\nadd element ip t hairpin { 198.18.0.2 . 80 comment "b" }\n');
    expect(index.isShared('hairpin', el('198.18.0.2', 80))).toBe(false);
    // Withdrawing what a no longer holds changes nothing.
    index.contribute(a, undefined);
    expect(commit(index)).toBe('');
    // b goes: the key goes.
    index.contribute(b, undefined);
    expect(commit(index)).toBe('delete element ip t hairpin { 198.18.0.2 . 80 }\n');
    expect(index.elements('hairpin')).toEqual([]);
  });

  it('replaces one contributor\'s elements by another set of its own, element by element', () => {
    const index = new ElementIndex();
    index.declare(set);
    const before = contributions(el('198.18.0.1', 80), el('198.18.0.2', 80));
    index.contribute(undefined, before);
    commit(index);
    const after = contributions(el('198.18.0.2', 80), el('198.18.0.3', 80));
    index.contribute(before, after);
    expect(commit(index)).toBe('delete element ip t hairpin { 198.18.0.1 . 80 }\nadd element ip t hairpin { 198.18.0.3 . 80 }\n');
  });

  it('keeps an unchanged element: nothing is written, the new list gets the old object back, and withdrawing the new list removes it', () => {
    const index = new ElementIndex();
    index.declare(set);
    const before = contributions(el('198.18.0.1', 80, 'x'), el('198.18.0.2', 80));
    index.contribute(undefined, before);
    commit(index);
    // The same contents in fresh objects (the layout builds them afresh): no operation at all.
    const same = contributions(el('198.18.0.1', 80, 'x'), el('198.18.0.2', 80));
    index.contribute(before, same);
    expect(commit(index)).toBe('');
    // The new list holds the objects the index already had.
    expect(same.get('hairpin')![1]).toBe(before.get('hairpin')![1]);
    // A changed comment is not kept: delete and re-add; the other element is kept.
    const changed = contributions(el('198.18.0.1', 80, 'y'), el('198.18.0.2', 80));
    index.contribute(same, changed);
    expect(commit(index)).toBe('delete element ip t hairpin { 198.18.0.1 . 80 }\nadd element ip t hairpin { 198.18.0.1 . 80 comment "y" }\n');
    // Withdrawing by the newest objects removes everything: the store holds them, not the first ones.
    index.contribute(changed, undefined);
    expect(commit(index)).toBe('delete element ip t hairpin { 198.18.0.1 . 80, 198.18.0.2 . 80 }\n');
    expect(index.elements('hairpin')).toEqual([]);
  });

  it('keeps unchanged elements that moved in the list (an endpoint added in front): only the new one is written', () => {
    const index = new ElementIndex();
    index.declare(set);
    const before = contributions(el('198.18.0.2', 80), el('198.18.0.3', 80), el('198.18.0.4', 80));
    index.contribute(undefined, before);
    commit(index);
    // Shifted by one, so no element is at its old position; the port as text pairs only by its encoded key.
    const after = contributions(el('198.18.0.1', 80), el('198.18.0.2', 80), { key: ['198.18.0.3', '80'] }, el('198.18.0.4', 80));
    index.contribute(before, after);
    expect(commit(index)).toBe('add element ip t hairpin { 198.18.0.1 . 80 }\n');
    expect(after.get('hairpin')![1]).toBe(before.get('hairpin')![0]);
    expect(after.get('hairpin')![2]).toBe(before.get('hairpin')![1]);
    expect(after.get('hairpin')![3]).toBe(before.get('hairpin')![2]);
    // And by position, in place: the same list again keeps every object.
    const again = contributions(el('198.18.0.1', 80), el('198.18.0.2', 80), el('198.18.0.3', 80), el('198.18.0.4', 80));
    index.contribute(after, again);
    expect(commit(index)).toBe('');
    expect(again.get('hairpin')![0]).toBe(after.get('hairpin')![0]);
  });

  it('keeps an unchanged element of a shared key without giving the key away', () => {
    const index = new ElementIndex();
    index.declare(set);
    const a = contributions(el('198.18.0.2', 80));
    const b = contributions(el('198.18.0.2', 80));
    index.contribute(undefined, a);
    index.contribute(undefined, b);
    expect(commit(index)).toBe('add element ip t hairpin { 198.18.0.2 . 80 }\n');
    // b keeps its element (new object), then a goes: the key stays, held for b.
    const b2 = contributions(el('198.18.0.2', 80));
    index.contribute(b, b2);
    index.contribute(a, undefined);
    expect(commit(index)).toBe('');
    expect(index.isShared('hairpin', el('198.18.0.2', 80))).toBe(false);
    // b goes by its newest objects: the key goes.
    index.contribute(b2, undefined);
    expect(commit(index)).toBe('delete element ip t hairpin { 198.18.0.2 . 80 }\n');
  });
});
