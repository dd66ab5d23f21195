import { describe, expect, it } from 'vitest';
import { Transaction, types } from '../../../src/index.js';
import type { NftSet } from '../../../src/index.js';
import { ElementIndex } from '../../../src/proxy/sync/element-index.js';
import { Plan } from '../../../src/proxy/sync/plan.js';

const { ipv4_addr, inet_service } = types;
const set: NftSet = { family: 'ip', table: 't', name: 'hairpin', key: [ipv4_addr, inet_service] };

describe('Plan', () => {
  it('makes a transaction for the element index only when it has something to queue', () => {
    let made = 0;
    const plan = new Plan(() => (made++, new Transaction({ sets: [set] })));
    const index = new ElementIndex();
    index.declare(set);
    // Nothing contributed, nothing pending: no transaction (the other family's sync of one endpoint).
    plan.queueElements(index);
    expect(made).toBe(0);
    expect(plan.seal()).toBeUndefined();
    index.contribute(undefined, new Map([['hairpin', [{ key: ['198.18.0.1', 80] }]]]));
    expect(index.hasPending).toBe(true);
    plan.queueElements(index);
    expect(made).toBe(1);
    expect(plan.stats.elementsChanged).toBe(1);
    expect(plan.seal()!.render()).toBe('add element ip t hairpin { 198.18.0.1 . 80 }\n');
    index.committed();
    expect(index.hasPending).toBe(false);
  });
});
