// elementHashes: a set's elements as sorted, distinct numbers, equal exactly when the kernel would
// hold the same elements (element-hashes.kernel.test.ts compares them with a real dump).

import { describe, expect, it } from 'vitest';
import { types } from '../../src/index.js';
import type { NftSet, SetElement } from '../../src/index.js';
import { elementHashes, sameElementHashes } from '../../src/nft/index.js';

const { ipv4_addr, ipv6_addr, inet_proto, inet_service } = types;
const hairpin: NftSet = { family: 'ip', table: 't', name: 'hairpin', key: [ipv4_addr, ipv4_addr, inet_proto, inet_service] };
const bucket: NftSet = { family: 'ip', table: 't', name: 'b', key: [types.integer(4, 'host')], data: [ipv4_addr, inet_service] };
const dispatch: NftSet = { family: 'ip6', table: 't', name: 'd', key: [ipv6_addr, inet_proto, inet_service], data: 'verdict' };

const same = (set: NftSet, a: SetElement[][], b: SetElement[][]): boolean => sameElementHashes(elementHashes(set, a)!, elementHashes(set, b)!);

describe('elementHashes', () => {
  it('does not depend on order, on how the elements are split into lists, or on repeats', () => {
    const a: SetElement = { key: ['198.18.0.1', '198.18.0.1', 'tcp', 80] };
    const b: SetElement = { key: ['198.18.0.2', '198.18.0.2', 'udp', 53] };
    expect(same(hairpin, [[a, b]], [[b], [a]])).toBe(true);
    expect(same(hairpin, [[a, b, a]], [[b, a]])).toBe(true);
    expect(elementHashes(hairpin, [[a, b, a, b]])!.length).toBe(2);
    expect(same(hairpin, [[a, b]], [[a]])).toBe(false);
  });

  it('tells apart any field of the key, the data, the verdict, the comment and the timeout', () => {
    const base: SetElement = { key: ['198.18.0.1', '198.18.0.1', 'tcp', 80] };
    for (const other of [['198.18.0.2', '198.18.0.1', 'tcp', 80], ['198.18.0.1', '198.18.0.1', 'udp', 80], ['198.18.0.1', '198.18.0.1', 'tcp', 81]]) {
      expect(same(hairpin, [[base]], [[{ key: other }]])).toBe(false);
    }
    expect(same(hairpin, [[base]], [[{ ...base, comment: 'x' }]])).toBe(false);
    expect(same(hairpin, [[{ ...base, comment: 'x' }]], [[{ ...base, comment: 'y' }]])).toBe(false);
    expect(same(hairpin, [[base]], [[{ ...base, timeout: 1000 }]])).toBe(false);
    expect(same(bucket, [[{ key: [7], value: ['198.18.0.1', 80] }]], [[{ key: [7], value: ['198.18.0.1', 81] }]])).toBe(false);
    expect(same(bucket, [[{ key: [7], value: ['198.18.0.1', 80] }]], [[{ key: [8], value: ['198.18.0.1', 80] }]])).toBe(false);
    const jump = (chain: string): SetElement => ({ key: ['2001:db8::1', 'tcp', 80], value: { kind: 'goto', chain } });
    expect(same(dispatch, [[jump('a')]], [[jump('b')]])).toBe(false);
    expect(same(dispatch, [[jump('a')]], [[{ ...jump('a'), value: { kind: 'jump', chain: 'a' } }]])).toBe(false);
    expect(same(dispatch, [[jump('a')]], [[jump('a')]])).toBe(true);
  });

  it('hashes the bytes the kernel holds: one address spelled two ways is one element', () => {
    const a: SetElement = { key: ['2001:db8::1', 'tcp', 80], value: { kind: 'accept' } };
    const b: SetElement = { key: ['2001:0db8:0:0:0:0:0:0001', 'tcp', 80], value: { kind: 'accept' } };
    expect(same(dispatch, [[a]], [[b]])).toBe(true);
  });

  it('answers nothing where it cannot be exact: interval and anonymous sets, range ends, values the types refuse', () => {
    expect(elementHashes({ ...hairpin, flags: ['interval'] }, [[]])).toBeUndefined();
    expect(elementHashes({ ...hairpin, anonymous: true }, [[]])).toBeUndefined();
    expect(elementHashes(hairpin, [[{ key: ['198.18.0.1', '198.18.0.1', 'tcp', 80], keyEnd: ['198.18.0.9', '198.18.0.1', 'tcp', 80] }]])).toBeUndefined();
    expect(elementHashes(hairpin, [[{ key: ['not an address', '198.18.0.1', 'tcp', 80] }]])).toBeUndefined();
    expect(elementHashes(bucket, [[{ key: [1], value: ['198.18.0.1'] }]])).toBeUndefined();
  });
});
