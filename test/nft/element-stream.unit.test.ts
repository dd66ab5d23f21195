// Elements given as an iterable (a generator) are encoded as they are read and never kept: the
// request must be byte for byte the array's, the transaction must still show them (render, error
// messages) by decoding the request, and a bad element must cost nothing. No kernel needed.

import { describe, expect, it } from 'vitest';
import { NftValidationError, Transaction, types } from '../../src/index.js';
import type { NftSet, SetElement } from '../../src/index.js';

const { ipv4_addr, inet_proto, inet_service, mark } = types;
const table = { family: 'ip' as const, name: 's' };
const map: NftSet = { family: 'ip', table: 's', name: 'm', key: [ipv4_addr, inet_proto, inet_service], data: [ipv4_addr, inet_service] };
const vmap: NftSet = { family: 'ip', table: 's', name: 'v', key: [mark], data: 'verdict' };
const ranges: NftSet = { family: 'ip', table: 's', name: 'r', key: [ipv4_addr], flags: ['interval'] };

const element = (i: number): SetElement => ({ key: [`198.18.${i >> 8}.${i & 255}`, 'tcp', 80 + (i % 3)], value: [`198.19.${i >> 8}.${i & 255}`, 8080] });
function* stream(n: number, at?: (i: number) => SetElement): Generator<SetElement> {
  for (let i = 0; i < n; i++) yield at?.(i) ?? element(i);
}
const arrayOf = (n: number): SetElement[] => Array.from({ length: n }, (_, i) => element(i));

function load(elements: Iterable<SetElement>, set: NftSet = map): Transaction {
  return new Transaction().add({ table }).add({ set }).add({ set, elements });
}

describe('elements from an iterable', () => {
  it('encodes byte for byte as the same elements in an array, and renders the same text', () => {
    const streamed = load(stream(3000));
    const array = load(arrayOf(3000));
    expect(Buffer.from(streamed.encode().buffer).equals(Buffer.from(array.encode().buffer))).toBe(true);
    expect(streamed.render()).toBe(array.render());
    expect(streamed.render().includes('198.18.11.183 . tcp . 82 : 198.19.11.183 . 8080 }')).toBe(true);
  });

  it('gives the operation its elements back, decoded from the request', () => {
    const tx = load(stream(5));
    const op = tx.operations[2]!;
    expect(op.kind).toBe('element');
    const elements = op.kind === 'element' ? op.elements : [];
    expect(elements).toEqual(arrayOf(5));
    // Decoded once: the same array on the next read.
    expect(op.kind === 'element' && op.elements).toBe(elements);
  });

  it('keeps comments, timeouts and jump verdicts, and accepts any iterable', () => {
    const chain = { family: 'ip' as const, table: 's', name: 'c' };
    const withExtras: SetElement[] = [
      { key: [1], value: { kind: 'accept' } },
      { key: [2], value: { kind: 'jump', chain: 'c' }, comment: 'to c' },
      { key: [3], value: { kind: 'drop' }, timeout: 5000 },
    ];
    const streamed = new Transaction().add({ table }).add({ chain }).add({ set: { ...vmap, flags: ['timeout'] } }).add({ set: vmap, elements: new Set(withExtras) });
    const array = new Transaction().add({ table }).add({ chain }).add({ set: { ...vmap, flags: ['timeout'] } }).add({ set: vmap, elements: withExtras });
    expect(Buffer.from(streamed.encode().buffer).equals(Buffer.from(array.encode().buffer))).toBe(true);
    const op = streamed.operations[3]!;
    expect(op.kind === 'element' && op.elements).toEqual(withExtras);
  });

  it('refuses a bad element by its index, and leaves the transaction as it was', () => {
    const tx = load(stream(10));
    const size = tx.size;
    const bytes = tx.encodedSize;
    const bad = (i: number): SetElement => (i === 1234 ? { key: ['198.18.0.1', 'tcp', 'not-a-port'], value: ['198.19.0.1', 1] } : element(i));
    let err: unknown;
    try {
      tx.add({ set: map, elements: stream(2000, bad) });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(NftValidationError);
    expect((err as Error).message).toMatch(/add element ip s m: map s m element 1234 key: inet_service: "not-a-port"/);
    expect(tx.size).toBe(size);
    expect(tx.encodedSize).toBe(bytes);
    // Still usable: the next operation goes where the refused one would have.
    tx.add({ set: map, elements: stream(2) });
    expect(tx.size).toBe(size + 1);
  });

  it('checks what it checks for arrays: comment length, and jumps into a table created here', () => {
    const long = 'x'.repeat(129);
    expect(() => load(stream(3, (i) => ({ ...element(i), comment: i === 2 ? long : undefined })))).toThrow(/element 2 of m comment is 129 bytes/);
    const tx = new Transaction().create({ table }).add({ set: vmap });
    expect(() => tx.add({ set: vmap, elements: stream(3, (i) => ({ key: [i], value: { kind: 'goto', chain: i === 2 ? 'nowhere' : 'nowhere-either' } })) })).toThrow(
      /an element of map v jumps to chain nowhere-either, which neither exists/,
    );
  });

  it('writes verdicts in the hot loop as the attribute writer does: jumps, gotos, non-ASCII chain names', () => {
    const chains = ['c', 'dienst-ü', 'svc-7'];
    const elements: SetElement[] = [
      { key: [1], value: { kind: 'goto', chain: 'svc-7' } },
      { key: [2], value: { kind: 'accept' } },
      // Not ASCII: written through the TextEncoder (the general path), between two hot-loop elements.
      { key: [3], value: { kind: 'jump', chain: 'dienst-ü' } },
      { key: [4], value: { kind: 'jump', chain: 'c' } },
      { key: [5], value: { kind: 'drop' }, comment: 'general path' },
    ];
    const tx = new Transaction().add({ table });
    for (const name of chains) tx.add({ chain: { family: 'ip', table: 's', name } });
    tx.add({ set: vmap }).add({ set: vmap, elements: stream(elements.length, (i) => elements[i]!) });
    const op = tx.operations.at(-1)!;
    expect(op.kind === 'element' && op.elements).toEqual(elements);
    expect(tx.render()).toContain('{ 0x00000001 : goto svc-7, 0x00000002 : accept, 0x00000003 : jump "dienst-ü", 0x00000004 : jump c, 0x00000005 comment "general path" : drop }');
  });

  it('refuses a verdict it does not know by element index, instead of sending it as 0 (drop)', () => {
    const odd = [{ key: [1], value: { kind: 'accept' } }, { key: [2], value: { kind: 'acept' } }] as unknown as SetElement[];
    expect(() => new Transaction().add({ table }).add({ set: vmap }).add({ set: vmap, elements: stream(2, (i) => odd[i]!) })).toThrow(
      /map s v element 1 value: unknown verdict "acept"/,
    );
    const noChain = [{ key: [1], value: { kind: 'goto' } }] as unknown as SetElement[];
    expect(() => new Transaction().add({ table }).add({ set: vmap }).add({ set: vmap, elements: noChain })).toThrow(/element 0 value: a goto needs a chain name/);
  });

  it('reads an interval set from an iterable too (it needs them all, and takes them all)', () => {
    const prefixes: SetElement[] = [{ key: ['198.18.0.0/16'] }, { key: ['198.19.1.0/24'] }];
    expect(load(new Set(prefixes), ranges).render()).toBe(load(prefixes, ranges).render());
  });
});
