// A transaction's `sets` option (docs/library.md, Transactions): the sets the kernel holds that
// element operations may name without giving the set whole. Given as a function, it is called the
// first time a set is looked up, and only then (the proxy's partial syncs pass their table's
// hundreds of sets so, and mostly queue elements of sets they give whole). No kernel needed.

import { describe, expect, it } from 'vitest';
import { NftValidationError, Transaction, types } from '../../src/index.js';
import type { NftSet } from '../../src/index.js';

const addrs: NftSet = { family: 'ip', table: 't', name: 'addrs', key: [types.ipv4_addr] };
const ports: NftSet = { family: 'ip', table: 't', name: 'ports', key: [types.inet_service] };
const byName = (name: string) => ({ family: 'ip' as const, table: 't', name });

describe('a transaction given its sets as a function', () => {
  it('calls it once, when a set is first looked up by name, and finds the sets it gives', () => {
    let calls = 0;
    const tx = new Transaction({
      sets: () => {
        calls++;
        return [addrs, ports];
      },
    });
    tx.add({ set: addrs, elements: [{ key: ['198.18.0.1'] }] });
    expect(calls).toBe(0);
    tx.add({ set: byName('ports'), elements: [{ key: [80] }] });
    tx.delete({ set: byName('addrs'), elements: [{ key: ['198.18.0.2'] }] });
    expect(calls).toBe(1);
    expect(tx.render()).toBe('add element ip t addrs { 198.18.0.1 }\nadd element ip t ports { 80 }\ndelete element ip t addrs { 198.18.0.2 }\n');
  });

  it('still refuses a set it does not give, by name', () => {
    const tx = new Transaction({ sets: () => [addrs] });
    expect(() => tx.add({ set: byName('ports'), elements: [{ key: [80] }] })).toThrow(NftValidationError);
    expect(() => tx.add({ set: byName('ports'), elements: [{ key: [80] }] })).toThrow(/the types of set ip t ports are unknown/);
  });

  it('takes any iterable too, such as a Map\'s values', () => {
    const known = new Map([[addrs.name, addrs]]);
    const tx = new Transaction({ sets: known.values() }).add({ set: byName('addrs'), elements: [{ key: ['198.18.0.3'] }] });
    expect(tx.render()).toBe('add element ip t addrs { 198.18.0.3 }\n');
  });
});
