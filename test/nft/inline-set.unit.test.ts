// Inline sets compared by digest when one side was read without its elements (inline-set.ts): what
// the digest tells apart, what it does not (order), and that it is always made from the elements.

import { describe, expect, it } from 'vitest';
import { types, type NftSet, type SetElement } from '../../src/index.js';
import { elementsDigestOf, sameInlineSet } from '../../src/nft/inline-set.js';

const { ipv4_addr, inet_service, integer } = types;

const map = (elements: SetElement[], data: NftSet['data'] = [ipv4_addr, inet_service]): NftSet => ({ family: 'ip', table: 't', name: '__map%d', key: [integer(4)], data, anonymous: true, elements });
/** The set as a dump without its elements reads it: its digest only. */
const read = (s: NftSet): NftSet => {
  const { elements: _e, ...rest } = s;
  return { ...rest, elementsDigest: elementsDigestOf(s) };
};

const base: SetElement[] = [
  { key: [0], value: ['198.18.0.1', 80] },
  { key: [1], value: ['198.18.0.2', 80] },
];

describe('inline sets by digest', () => {
  it('equal for the same elements in any order, and to the text comparison of the same sets', () => {
    expect(sameInlineSet(read(map(base)), map([...base].reverse()))).toBe(true);
    expect(sameInlineSet(map(base), read(map(base)))).toBe(true);
    expect(sameInlineSet(read(map(base)), read(map([...base].reverse())))).toBe(true);
  });

  it('different for any change of what an element holds, or of the types', () => {
    const changed: SetElement[][] = [
      [base[0]!, { key: [1], value: ['198.18.0.3', 80] }], // an endpoint
      [base[0]!, { key: [1], value: ['198.18.0.2', 81] }], // a port
      [base[0]!, { key: [2], value: ['198.18.0.2', 80] }], // a key
      [base[0]!], // one fewer
      [...base, { key: [2], value: ['198.18.0.3', 80] }], // one more
      [base[0]!, { ...base[1]!, comment: 'x' }],
      [base[0]!, { ...base[1]!, timeout: 1000 }],
    ];
    for (const elements of changed) expect(sameInlineSet(read(map(base)), map(elements))).toBe(false);
    expect(sameInlineSet(read(map(base)), { ...map(base), key: [integer(2)] })).toBe(false);
    // Values cannot run into each other.
    expect(elementsDigestOf(map([{ key: [1], value: ['2,3', 4] }]))).not.toBe(elementsDigestOf(map([{ key: [1], value: ['2', '3,4'] }])));
  });

  it('verdict maps: the verdict and its chain count', () => {
    const vmap = (v: SetElement['value']): NftSet => map([{ key: [0], value: v }], 'verdict');
    const goto = read(vmap({ kind: 'goto', chain: 'a' }));
    expect(sameInlineSet(goto, vmap({ kind: 'goto', chain: 'a' }))).toBe(true);
    expect(sameInlineSet(goto, vmap({ kind: 'jump', chain: 'a' }))).toBe(false);
    expect(sameInlineSet(goto, vmap({ kind: 'goto', chain: 'b' }))).toBe(false);
    expect(sameInlineSet(read(vmap({ kind: 'accept' })), vmap({ kind: 'drop' }))).toBe(false);
  });

  it('the digest written is made from the elements, never taken from a set read back', () => {
    const readBack: NftSet = { ...map([{ key: [0], value: ['198.18.0.9', 80] }]), elementsDigest: elementsDigestOf(map(base)) };
    expect(elementsDigestOf(readBack)).toBe(elementsDigestOf(map([{ key: [0], value: ['198.18.0.9', 80] }])));
    expect(elementsDigestOf(readBack)).toMatch(/^[0-9a-f]{32}$/);
  });
});
