import { describe, expect, it } from 'vitest';
import { ip } from '../../src/nft/builder/fields.js';
import { rule } from '../../src/nft/builder/rule-builder.js';
import type { Chain, Rule } from '../../src/nft/objects.js';
import { chainChange, knownChain, rulesByChain } from '../../src/nft/reconcile/known-chain.js';

const chain: Chain = { family: 'ip', table: 't', name: 'c' };
const accept = (addr: string, handle?: number): Rule => ({ ...rule('ip').match(ip.daddr, addr).accept().rule('t', 'c'), ...(handle !== undefined ? { handle } : {}) });

describe('chain changes', () => {
  it('writes nothing for the same rules, replaces a lone rule by handle, and rewrites anything else', () => {
    const dumped = knownChain(chain, [accept('198.18.0.1', 7)]);
    expect(dumped.handles).toEqual([7]);
    expect(chainChange(dumped, chain, [accept('198.18.0.1')])).toEqual({ kind: 'same' });
    expect(chainChange(dumped, chain, [accept('198.18.0.2')])).toEqual({ kind: 'replace', handle: 7 });
    expect(chainChange(dumped, chain, [accept('198.18.0.2'), accept('198.18.0.3')])).toEqual({ kind: 'rewrite', flush: true });
    expect(chainChange(dumped, chain, [])).toEqual({ kind: 'rewrite', flush: true });
    expect(chainChange(undefined, chain, [accept('198.18.0.2')])).toEqual({ kind: 'rewrite', flush: false });
  });

  it('rewrites without handles, on a changed base, and when forced', () => {
    const built = knownChain(chain, [accept('198.18.0.1')]);
    expect(built.handles).toBeUndefined();
    expect(chainChange(built, chain, [accept('198.18.0.2')])).toEqual({ kind: 'rewrite', flush: true });
    const base: Chain = { ...chain, base: { type: 'nat', hook: 'prerouting', priority: -100 } };
    expect(chainChange(knownChain(chain, [accept('198.18.0.1', 7)]), base, [accept('198.18.0.1')])).toEqual({ kind: 'rewrite', flush: true });
    expect(chainChange(knownChain(chain, []), chain, [], true)).toEqual({ kind: 'rewrite', flush: false });
    expect(chainChange(knownChain(chain, [accept('198.18.0.1', 7)]), chain, [accept('198.18.0.1')], true)).toEqual({ kind: 'rewrite', flush: true });
  });

  it('groups rules by chain, in order', () => {
    const a = accept('198.18.0.1');
    const b = { ...accept('198.18.0.2'), chain: 'd' };
    const c = accept('198.18.0.3');
    expect([...rulesByChain([a, b, c])]).toEqual([['c', [a, c]], ['d', [b]]]);
  });
});
