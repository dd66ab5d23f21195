import { describe, expect, it, vi } from 'vitest';
import { ElementStore, Transaction, types } from '../../../src/index.js';
import type { NftSet, SetElement } from '../../../src/index.js';
import { ElementIndex } from '../../../src/proxy/sync/element-index.js';

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

  it('writes a kept key with other data over the old element: the same delta, and the key stays where it was in the store', () => {
    const eps: NftSet = { family: 'ip', table: 't', name: 'eps', key: [types.integer(4, 'host')], data: [ipv4_addr, inet_service] };
    const slots = (...ips: string[]): Map<string, SetElement[]> => new Map([['eps', ips.map((ip, i) => ({ key: [i], value: [ip, 8080] }))]]);
    const index = new ElementIndex();
    index.declare(eps);
    const commitEps = (): string => {
      const tx = new Transaction({ sets: [eps] });
      index.queue(tx);
      index.committed();
      return tx.render();
    };
    const a = slots('198.18.0.1', '198.18.0.2', '198.18.0.3');
    index.contribute(undefined, a);
    commitEps();
    // Slot 0 goes to another endpoint (fresh objects, as the layout builds them).
    const a2 = slots('198.18.0.9', '198.18.0.2', '198.18.0.3');
    index.contribute(a, a2);
    expect(commitEps()).toBe('delete element ip t eps { 0 }\nadd element ip t eps { 0 : 198.18.0.9 . 8080 }\n');
    // Written over in place: a delete and an add of the key would have moved it to the end.
    expect(index.elements('eps').map((e) => e.key[0])).toEqual([0, 1, 2]);
    expect(index.elements('eps')[0]).toBe(a2.get('eps')![0]);
    // Withdrawing by the newest objects removes every key.
    index.contribute(a2, undefined);
    expect(commitEps()).toBe('delete element ip t eps { 0, 1, 2 }\n');
    expect(index.elements('eps')).toEqual([]);
  });

  it('a kept key with other data that another contributor shares goes the long way: the next contributor\'s element is written', () => {
    const index = new ElementIndex();
    index.declare(set);
    const a = contributions(el('198.18.0.2', 80, 'a'));
    const b = contributions(el('198.18.0.2', 80, 'b'));
    index.contribute(undefined, a);
    index.contribute(undefined, b);
    commit(index);
    // a's element changes its comment: the key passes to b (first in line), a's new element queues behind it.
    const a2 = contributions(el('198.18.0.2', 80, 'a2'));
    index.contribute(a, a2);
    expect(commit(index)).toBe('delete element ip t hairpin { 198.18.0.2 . 80 }\nadd element ip t hairpin { 198.18.0.2 . 80 comment "b" }\n');
    index.contribute(b, undefined);
    expect(commit(index)).toBe('delete element ip t hairpin { 198.18.0.2 . 80 }\nadd element ip t hairpin { 198.18.0.2 . 80 comment "a2" }\n');
    index.contribute(a2, undefined);
    expect(commit(index)).toBe('delete element ip t hairpin { 198.18.0.2 . 80 }\n');
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

describe("ElementIndex: a cold start's elements written before they are keyed", () => {
  const hairpin: NftSet = { family: 'ip', table: 't', name: 'hairpin', key: [ipv4_addr, inet_service] };
  const bucket: NftSet = { family: 'ip', table: 't', name: 'eps-b0', key: [types.integer(4, 'host')], data: [ipv4_addr, inet_service] };
  const dispatch: NftSet = { family: 'ip', table: 't', name: 'dispatch', key: [ipv4_addr], data: [ipv4_addr] };
  const sets = [hairpin, bucket, dispatch];
  const neverShared = (name: string): boolean => name === bucket.name;

  /** xorshift: the same pseudo-random churn on every run. */
  function rng(seed: number): (n: number) => number {
    let x = seed;
    return (n) => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return (x >>> 0) % n;
    };
  }

  /** One service port's contributions: hairpin keys and dispatch keys from small pools (so they collide), its own slots. */
  function service(id: number, gen: number, r: (n: number) => number): Map<string, SetElement[]> {
    const eps = 1 + r(4);
    const addrs = Array.from({ length: eps }, () => `198.18.1.${r(12)}`);
    return new Map<string, SetElement[]>([
      ['hairpin', addrs.map((a) => ({ key: [a, 8080] }))],
      ['eps-b0', addrs.map((a, i) => ({ key: [id * 8 + i], value: [a, 8080 + gen] }))],
      ['dispatch', [{ key: [`198.18.9.${r(20)}`], value: [`198.18.2.${id}`] }]],
    ]);
  }

  function queueAll(index: ElementIndex, parts = 1, contributed: (() => void)[] = []): string[] {
    const out: string[] = [];
    const per = Math.ceil(contributed.length / parts);
    for (let p = 0; p < parts; p++) {
      contributed.slice(p * per, (p + 1) * per).forEach((f) => f());
      const tx = new Transaction({ sets });
      // As a cold start's parts: the verdict-like map waits for the last part.
      index.queue(tx, p === parts - 1);
      out.push(tx.render());
    }
    index.committed();
    return out;
  }

  /** What a batch's adds leave in the kernel, per set: each element once (a repeated equal add is a no-op). */
  function written(texts: string[]): Map<string, Set<string>> {
    const bySet = new Map<string, Set<string>>();
    for (const line of texts.join('').split('\n').filter(Boolean)) {
      const m = /^add element ip t (\S+) \{ (.*) \}$/.exec(line);
      expect(m, line).not.toBeNull();
      const s = bySet.get(m![1]!) ?? new Set<string>();
      for (const e of m![2]!.split(', ')) s.add(e);
      bySet.set(m![1]!, s);
    }
    return bySet;
  }

  it('writes what keying first writes, and afterwards every sync writes the same deltas as an index that keyed first', () => {
    for (const seed of [1, 7, 42, 1234]) {
      const r = rng(seed);
      const keyed = new ElementIndex(neverShared);
      const cold = new ElementIndex(neverShared);
      for (const s of sets) {
        keyed.declare(s);
        cold.declare(s);
      }
      const current = new Map<number, { keyed: Map<string, SetElement[]>; cold: Map<string, SetElement[]> }>();
      const fresh = (id: number, gen: number): void => {
        const state = r(1 << 30);
        const make = (): Map<string, SetElement[]> => service(id, gen, rng(state + 1));
        current.set(id, { keyed: make(), cold: make() });
      };
      for (let id = 0; id < 40; id++) fresh(id, 0);
      const keyedText = queueAll(keyed, 1, [...current.values()].map((c) => () => keyed.contribute(undefined, c.keyed)));
      cold.coldStart();
      const coldText = queueAll(cold, 3, [...current.values()].map((c) => () => cold.contribute(undefined, c.cold)));
      cold.coldStartCommitted();
      // No settle() here: the first partial contribute keys what the cold start wrote.
      expect(written(coldText)).toEqual(written(keyedText));

      for (let step = 1; step <= 60; step++) {
        const id = r(50);
        const before = current.get(id);
        const gone = before !== undefined && r(4) === 0;
        const state = r(1 << 30);
        const after = gone ? undefined : { keyed: service(id, step, rng(state + 1)), cold: service(id, step, rng(state + 1)) };
        keyed.contribute(before?.keyed, after?.keyed);
        cold.contribute(before?.cold, after?.cold);
        if (after) current.set(id, after);
        else current.delete(id);
        const a = queueAll(keyed);
        const b = queueAll(cold);
        expect(b, `seed ${seed}, step ${step}`).toEqual(a);
      }
      for (const s of sets) expect(cold.elements(s.name).map((e) => JSON.stringify(e)).sort()).toEqual(keyed.elements(s.name).map((e) => JSON.stringify(e)).sort());
    }
  });

  it('a full sync against a dump writes nothing when the contributions are what the kernel holds, and afterwards every sync writes what a keyed index writes', () => {
    for (const seed of [3, 11, 99]) {
      const r = rng(seed);
      const keyed = new ElementIndex(neverShared);
      for (const s of sets) keyed.declare(s);
      const current = new Map<number, { keyed: Map<string, SetElement[]>; restarted: Map<string, SetElement[]> }>();
      const make = (id: number, gen: number) => {
        const state = r(1 << 30);
        return { keyed: service(id, gen, rng(state + 1)), restarted: service(id, gen, rng(state + 1)) };
      };
      for (let id = 0; id < 40; id++) current.set(id, make(id, 0));
      for (const c of current.values()) keyed.contribute(undefined, c.keyed);
      queueAll(keyed);
      // A new process: the kernel's elements come from a dump (copies, in another order).
      const restarted = new ElementIndex(neverShared);
      for (const s of sets) {
        restarted.declare(s);
        restarted.resyncFromDump(s.name, { elements: keyed.elements(s.name).map((e) => structuredClone(e)).reverse() });
      }
      for (const c of current.values()) restarted.contribute(undefined, c.restarted);
      expect(queueAll(restarted), `seed ${seed}`).toEqual(['']);
      for (let step = 1; step <= 40; step++) {
        const id = r(50);
        const before = current.get(id);
        const after = before !== undefined && r(4) === 0 ? undefined : make(id, step);
        keyed.contribute(before?.keyed, after?.keyed);
        restarted.contribute(before?.restarted, after?.restarted);
        if (after) current.set(id, after);
        else current.delete(id);
        expect(queueAll(restarted), `seed ${seed}, step ${step}`).toEqual(queueAll(keyed));
      }
    }
  });

  it('a full sync against a dump that differs writes the difference: what is missing, what changed, what nobody contributes', () => {
    const index = new ElementIndex(neverShared);
    for (const s of sets) index.declare(s);
    index.resyncFromDump('hairpin', { elements: [{ key: ['198.18.1.1', 8080] }, { key: ['198.18.1.9', 8080] }] });
    index.resyncFromDump('eps-b0', { elements: [{ key: [0], value: ['198.18.1.1', 8080] }, { key: [1], value: ['198.18.1.2', 8080] }] });
    index.resyncFromDump('dispatch', {});
    // Two contributors of one hairpin key: one kernel element.
    index.contribute(undefined, new Map<string, SetElement[]>([['hairpin', [{ key: ['198.18.1.1', 8080] }, { key: ['198.18.1.2', 8080] }]], ['eps-b0', [{ key: [0], value: ['198.18.1.1', 8080] }, { key: [1], value: ['198.18.1.2', 8081] }]]]));
    index.contribute(undefined, new Map<string, SetElement[]>([['hairpin', [{ key: ['198.18.1.1', 8080] }]]]));
    const tx = new Transaction({ sets });
    index.queue(tx);
    index.committed();
    expect(tx.render()).toBe(
      [
        'delete element ip t hairpin { 198.18.1.9 . 8080 }',
        'add element ip t hairpin { 198.18.1.2 . 8080 }',
        'delete element ip t eps-b0 { 1 }',
        'add element ip t eps-b0 { 1 : 198.18.1.2 . 8081 }',
        '',
      ].join('\n'),
    );
    expect(index.isShared('hairpin', { key: ['198.18.1.1', 8080] })).toBe(true);
  });

  it('a full sync against a dump that matches adopts the contributions: a shared key stays shared, and the next change is a delta', () => {
    const index = new ElementIndex(neverShared);
    for (const s of sets) index.declare(s);
    index.resyncFromDump('hairpin', { elements: [{ key: ['198.18.1.1', 8080] }] });
    index.resyncFromDump('eps-b0', {});
    index.resyncFromDump('dispatch', {});
    const a = new Map<string, SetElement[]>([['hairpin', [{ key: ['198.18.1.1', 8080] }]]]);
    const b = new Map<string, SetElement[]>([['hairpin', [{ key: ['198.18.1.1', 8080] }]]]);
    index.contribute(undefined, a);
    index.contribute(undefined, b);
    const tx = new Transaction({ sets });
    index.queue(tx);
    index.committed();
    expect(tx.render()).toBe('');
    // Nothing keyed yet: the first read keys the adopted contributions.
    expect(index.isShared('hairpin', { key: ['198.18.1.1', 8080] })).toBe(true);
    index.contribute(a, undefined);
    expect(queueAll(index)).toEqual(['']);
    index.contribute(b, undefined);
    expect(queueAll(index)).toEqual(['delete element ip t hairpin { 198.18.1.1 . 8080 }\n']);
  });

  it('a map whose keys can collide compares by hashes too: nothing written when it matches, the first contributor kept when two give one key', () => {
    const a = (): Map<string, SetElement[]> => new Map([['dispatch', [{ key: ['198.18.9.1'], value: ['198.18.2.1'] }]]]);
    const b = (): Map<string, SetElement[]> => new Map([['dispatch', [{ key: ['198.18.9.1'], value: ['198.18.2.2'] }, { key: ['198.18.9.2'], value: ['198.18.2.2'] }]]]);
    const restart = (held: SetElement[]): ElementIndex => {
      const index = new ElementIndex(neverShared);
      for (const s of sets) index.declare(s);
      index.resyncFromDump('hairpin', {});
      index.resyncFromDump('eps-b0', {});
      index.resyncFromDump('dispatch', { elements: held });
      return index;
    };
    const held = (...pairs: [string, string][]): SetElement[] => pairs.map(([k, v]) => ({ key: [k], value: [v] }));
    // No two contributions give one key: the hashes match, nothing is written or keyed, and the
    // contribution is adopted (withdrawing it deletes its element).
    const alone = restart(held(['198.18.9.1', '198.18.2.1']));
    const only = a();
    alone.contribute(undefined, only);
    expect(queueAll(alone)).toEqual(['']);
    alone.contribute(only, undefined);
    expect(queueAll(alone)).toEqual(['delete element ip t dispatch { 198.18.9.1 }\n']);
    // Two give 198.18.9.1 and the kernel holds the first's: written as a keyed index writes, nothing.
    const first = restart(held(['198.18.9.1', '198.18.2.1'], ['198.18.9.2', '198.18.2.2']));
    first.contribute(undefined, a());
    first.contribute(undefined, b());
    expect(queueAll(first)).toEqual(['']);
    expect(first.isShared('dispatch', { key: ['198.18.9.1'] })).toBe(true);
    // The kernel holds the second's: the first contributor's element replaces it.
    const second = restart(held(['198.18.9.1', '198.18.2.2'], ['198.18.9.2', '198.18.2.2']));
    second.contribute(undefined, a());
    second.contribute(undefined, b());
    expect(queueAll(second)).toEqual(['delete element ip t dispatch { 198.18.9.1 }\nadd element ip t dispatch { 198.18.9.1 : 198.18.2.1 }\n']);
  });

  it('a set left out of the dump is flushed and written whole, once, and afterwards every sync is a delta', () => {
    const index = new ElementIndex(neverShared);
    for (const s of sets) index.declare(s);
    index.resyncFromDump('hairpin', { omitted: true });
    index.resyncFromDump('eps-b0', {});
    index.resyncFromDump('dispatch', {});
    const a = new Map<string, SetElement[]>([['hairpin', [{ key: ['198.18.1.1', 8080] }, { key: ['198.18.1.2', 8080] }]]]);
    const b = new Map<string, SetElement[]>([['hairpin', [{ key: ['198.18.1.2', 8080] }]]]);
    index.contribute(undefined, a);
    index.contribute(undefined, b);
    // Unkeyed, as a cold start writes: the key both contribute is added twice (a no-op the second time).
    expect(queueAll(index)).toEqual(['flush set ip t hairpin\nadd element ip t hairpin { 198.18.1.1 . 8080, 198.18.1.2 . 8080, 198.18.1.2 . 8080 }\n']);
    expect(index.isShared('hairpin', { key: ['198.18.1.2', 8080] })).toBe(true);
    index.contribute(a, undefined);
    expect(queueAll(index)).toEqual(['delete element ip t hairpin { 198.18.1.1 . 8080 }\n']);
    expect(() => index.resyncFromDump('dispatch', { omitted: true })).toThrow(/dispatch was left out of the dump/);
  });

  it('keys the dispatch-like map first: of two contributors of one key the first wins, the second is not written', () => {
    const index = new ElementIndex(neverShared);
    for (const s of sets) index.declare(s);
    index.coldStart();
    index.contribute(undefined, new Map([['dispatch', [{ key: ['198.18.9.1'], value: ['198.18.2.1'] }]]]));
    index.contribute(undefined, new Map([['dispatch', [{ key: ['198.18.9.1'], value: ['198.18.2.2'] }]]]));
    const tx = new Transaction({ sets });
    index.queue(tx);
    expect(tx.render()).toBe('add element ip t dispatch { 198.18.9.1 : 198.18.2.1 }\n');
  });

  it("settle() gives every store's table its room for churn, once the store holds every element", () => {
    const index = new ElementIndex(neverShared);
    for (const s of sets) index.declare(s);
    index.coldStart();
    const r = rng(7);
    for (let id = 0; id < 40; id++) index.contribute(undefined, service(id, 0, r));
    queueAll(index);
    index.coldStartCommitted();
    const sizes: number[] = [];
    const reserve = vi.spyOn(ElementStore.prototype, 'reserveChurnRoom').mockImplementation(function (this: ElementStore) {
      sizes.push(this.size);
    });
    try {
      index.settle();
    } finally {
      reserve.mockRestore();
    }
    // One call per set, after the keying: each store's size is every element it holds by then.
    expect(sizes).toEqual(sets.map((s) => index.elements(s.name).length));
    expect(sizes.every((n) => n > 0)).toBe(true);
  });

  it('a settle that fires in the middle of a cold start (a background one of an earlier cold start) waits for its end', () => {
    const index = new ElementIndex(neverShared);
    for (const s of sets) index.declare(s);
    index.coldStart();
    index.contribute(undefined, new Map<string, SetElement[]>([['hairpin', [{ key: ['198.18.1.1', 8080] }]]]));
    index.settle();
    const tx = new Transaction({ sets });
    index.queue(tx);
    expect(tx.render()).toBe('add element ip t hairpin { 198.18.1.1 . 8080 }\n');
    index.committed();
    index.coldStartCommitted();
    index.settle();
    expect(index.elements('hairpin')).toEqual([{ key: ['198.18.1.1', 8080] }]);
    expect(index.isShared('hairpin', { key: ['198.18.1.1', 8080] })).toBe(false);
  });

  it('a refused cold start forgets what it wrote unkeyed: the next sync starts from the kernel', () => {
    const index = new ElementIndex(neverShared);
    for (const s of sets) index.declare(s);
    index.coldStart();
    index.contribute(undefined, new Map<string, SetElement[]>([['hairpin', [{ key: ['198.18.1.1', 8080] }]], ['eps-b0', [{ key: [0], value: ['198.18.1.1', 8080] }]]]));
    index.queue(new Transaction({ sets }));
    index.failed();
    expect(index.elements('hairpin')).toEqual([]);
    expect(index.elements('eps-b0')).toEqual([]);
    const tx = new Transaction({ sets });
    index.queue(tx);
    expect(tx.render()).toBe('');
  });

  it('queues only the sets touched since the last queue, in declaration order with the verdict maps last; after a failure, every set in full', () => {
    const index = new ElementIndex();
    const dispatch: NftSet = { family: 'ip', table: 't', name: 'dispatch', key: [ipv4_addr], data: 'verdict' };
    const a: NftSet = { ...set, name: 'a' };
    const b: NftSet = { ...set, name: 'b' };
    for (const s of [dispatch, a, b]) index.declare(s);
    const sets = [dispatch, a, b];
    const render = (fn: (tx: Transaction) => void): string => {
      const tx = new Transaction({ sets });
      fn(tx);
      return tx.render();
    };
    const go = new Map<string, SetElement[]>([['dispatch', [{ key: ['198.18.0.1'], value: { kind: 'goto', chain: 'svc' } }]], ['b', [el('198.18.0.1', 80)]], ['a', [el('198.18.0.2', 80)]]]);
    index.contribute(undefined, go);
    expect(render((tx) => index.queue(tx))).toBe(
      'add element ip t a { 198.18.0.2 . 80 }\nadd element ip t b { 198.18.0.1 . 80 }\nadd element ip t dispatch { 198.18.0.1 : goto svc }\n',
    );
    index.committed();
    // Nothing touched: nothing queued.
    expect(render((tx) => expect(index.queue(tx)).toBe(0))).toBe('');
    // One set touched: that set alone; the verdict maps may wait for a later queue.
    const more = new Map([['b', [el('198.18.0.3', 80)]]]);
    index.contribute(undefined, more);
    expect(render((tx) => index.queue(tx, false))).toBe('add element ip t b { 198.18.0.3 . 80 }\n');
    // Refused: every set is compared with what the kernel held before, and what the refused
    // transaction wrote is written again.
    index.failed();
    expect(render((tx) => index.queue(tx))).toBe('add element ip t b { 198.18.0.3 . 80 }\n');
    index.committed();
    expect(render((tx) => index.queue(tx))).toBe('');
  });
});

