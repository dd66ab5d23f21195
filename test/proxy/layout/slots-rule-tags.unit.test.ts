// The slots layout's rule tags (rule-tags.ts): what adopt() learns from a tag is what it learns from
// the rule's expressions, for pick rules and affinity pin rules alike; a malformed tag is not read.

import { describe, expect, it } from 'vitest';
import { clusterIPServicePort } from '../../fixtures/proxy-model.js';
import { benchConfig } from '../../fixtures/scale-model.js';
import { SlotsLayout } from '../../../src/proxy/layout/slots/index.js';
import { pinOf, slotRangeOf } from '../../../src/proxy/layout/slots/rule-tags.js';
import type { Rule } from '../../../src/nft/index.js';
import type { ServiceEndpoint } from '../../../src/proxy/model/types.js';

const ep = (ip: string): ServiceEndpoint => ({ ip, port: 8080, ready: true, serving: true, terminating: false, isLocal: true });
const untagged = (r: Rule): Rule => ({ ...r, tag: undefined });

describe('slots rule tags', () => {
  it('say what the expressions say: the slot range of each pick rule, the pin of each pinned rule', () => {
    const layout = new SlotsLayout(2);
    const rules: Rule[] = [];
    for (let i = 0; i < 5; i++) {
      // An external IP each: a port reached through its ClusterIP alone has no pick rule of its own.
      const sp = clusterIPServicePort(`s${i}`, `198.18.200.${i + 1}`, { externalIPs: [`198.18.201.${i + 1}`], ...(i % 2 ? { sessionAffinity: 'ClientIP' } : {}) }, 'ns');
      const o = layout.service(benchConfig(), sp, [ep(`198.18.1.${i + 1}`), ep(`198.18.2.${i + 1}`), ep(`198.18.3.${i + 1}`)].slice(0, 1 + (i % 3)));
      for (const c of o.chains) rules.push(...c.rules);
    }
    const ranges = rules.filter((r) => r.tag?.startsWith('slot '));
    const pinned = rules.filter((r) => r.tag?.startsWith('pin '));
    expect(ranges).toHaveLength(5);
    expect(pinned).toHaveLength(2);
    // Buckets of two chains: the fifth service chain is in the third bucket.
    expect(ranges.map((r) => slotRangeOf(r)!.bucket)).toEqual([0, 0, 1, 1, 2]);
    for (const r of ranges) {
      expect(slotRangeOf(r)).toEqual(slotRangeOf(untagged(r)));
      expect(pinOf(r)).toBeUndefined();
    }
    for (const r of pinned) {
      expect(pinOf(r)).toEqual(pinOf(untagged(r)));
      expect(slotRangeOf(r)).toBeUndefined();
    }
  });

  it('reads a tag only when it is well formed', () => {
    const bare: Rule = { family: 'ip', table: 't', chain: 'c', exprs: [] };
    expect(slotRangeOf({ ...bare, tag: 'slot 1 2 3' })).toEqual({ bucket: 1, member: 2, endpoints: 3 });
    expect(pinOf({ ...bare, tag: 'pin 7 1' })).toEqual({ id: 7, bucket: 1 });
    for (const tag of ['slot 1 2', 'slot 1 2 3 4', 'slot 1 x 3', 'slot -1 2 3', 'slots 1 2 3', 'pin 7']) {
      expect(slotRangeOf({ ...bare, tag })).toBeUndefined();
      expect(pinOf({ ...bare, tag })).toBeUndefined();
    }
  });
});
