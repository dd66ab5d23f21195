// Chains and rules are not kept by the transaction: they are read back from the request when shown
// (tx.operation(i), tx.operations, render(), error messages). What is read back must be what was
// queued. Every chain and rule of the shared fixtures (every expression and verb shape) is
// recorded as it is queued and compared with its read-back. No kernel needed.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { meta, rule, Transaction } from '../../src/index.js';
import type { Operation, TransactionObject } from '../../src/index.js';
import { RequestEncoder } from '../../src/nft/netlink/encode.js';
import { renderOperation } from '../../src/nft/render/commands.js';
import { FIXTURES } from '../fixtures/index.js';

type Queued = { verb: Operation['verb']; obj: TransactionObject; echo: boolean };

const VERBS = ['add', 'create', 'insert', 'replace', 'delete', 'destroy', 'flush'] as const;
const proto = Transaction.prototype as unknown as Record<string, (this: Transaction, obj: TransactionObject, opts?: { echo?: boolean }) => Transaction>;
const originals = Object.fromEntries(VERBS.map((v) => [v, proto[v]!]));
const log = new Map<Transaction, Queued[]>();

// Records each queued object with the operation index it gets (only those that were accepted).
beforeEach(() => {
  for (const verb of VERBS) {
    proto[verb] = function (this: Transaction, obj, opts) {
      const r = originals[verb]!.call(this, obj, opts);
      const list = log.get(this) ?? [];
      log.set(this, list);
      list.push({ verb, obj, echo: opts?.echo === true });
      return r;
    };
  }
});
afterEach(() => {
  for (const verb of VERBS) proto[verb] = originals[verb]!;
  log.clear();
});

/** The operation as it was queued, for a chain or rule (others are compared as they are kept). */
function expected(q: Queued): Operation | undefined {
  if ('chain' in q.obj) return { verb: q.verb, kind: 'chain', chain: q.obj.chain } as Operation;
  if ('rule' in q.obj) return (q.echo ? { verb: q.verb, kind: 'rule', rule: q.obj.rule, echo: true } : { verb: q.verb, kind: 'rule', rule: q.obj.rule }) as Operation;
  return undefined;
}

/** The operation's message as the encoder writes it. */
function encodedBytes(op: Operation): number[] {
  const e = new RequestEncoder('t_');
  e.add(op, 0);
  return [...e.finish({}).buffer];
}

function withoutExprs(op: Operation): unknown {
  return op.kind === 'rule' ? { ...op, rule: { ...op.rule, exprs: op.rule.exprs.length } } : op;
}

describe('chains and rules read back from the request', () => {
  it.each(FIXTURES)('%s: each one equals what was queued, and renders the same', (_n, build) => {
    const tx = build();
    const queued = log.get(tx)!;
    expect(queued.length).toBe(tx.size);
    // The sets queued: what the lookups of rules load (render needs their types).
    const sets = queued.flatMap((q) => ('set' in q.obj && 'key' in q.obj.set && q.obj.elements === undefined ? [q.obj.set] : []));
    let compared = 0;
    queued.forEach((q, i) => {
      const want = expected(q);
      if (!want) return;
      const got = tx.operation(i);
      // Kept as queued (a rule with an inline set, a base chain): nothing was read back.
      if (got.kind === 'rule' && want.kind === 'rule' && got.rule === want.rule) return;
      if (got.kind === 'chain' && want.kind === 'chain' && got.chain === want.chain) return;
      // The same message to the kernel, the same text, and the same object but for how an
      // expression spells a default (a counter reads back with its zero counts).
      expect(encodedBytes(got), `operation ${i}`).toEqual(encodedBytes(want));
      expect(tx.renderOperation(i)).toBe(renderOperation(want, sets));
      expect(withoutExprs(got), `operation ${i}`).toEqual(withoutExprs(want));
      compared++;
    });
    // The fixtures are mostly chains and rules: a read-back that compared nothing proves nothing.
    expect(compared).toBeGreaterThan(10);
  });

  it('reads back every verb, a comment, a position and a replaced rule handle', () => {
    const table = { family: 'ip' as const, name: 't' };
    const chain = { family: 'ip' as const, table: 't', name: 'c', comment: 'a chain' };
    const r = rule('ip').match(meta.l4proto, 'tcp').accept().rule('t', 'c', 'a rule');
    const tx = new Transaction()
      .add({ table })
      .add({ chain })
      .create({ chain: { family: 'ip', table: 't', name: 'd' } })
      .add({ rule: r })
      .add({ rule: { ...r, position: 4 } })
      .insert({ rule: r })
      .insert({ rule: { ...r, position: 7 } })
      .replace({ rule: { ...r, handle: 9 } })
      .add({ rule: r }, { echo: true });
    const ops = tx.operations;
    expect(ops.map((o) => o.verb)).toEqual(['add', 'add', 'create', 'add', 'add', 'insert', 'insert', 'replace', 'add']);
    expect(ops[1]).toEqual({ verb: 'add', kind: 'chain', chain });
    expect(ops[4]).toEqual({ verb: 'add', kind: 'rule', rule: { ...r, position: 4 } });
    expect(ops[6]).toEqual({ verb: 'insert', kind: 'rule', rule: { ...r, position: 7 } });
    expect(ops[7]).toEqual({ verb: 'replace', kind: 'rule', rule: { ...r, handle: 9 } });
    // Kept as queued: the echoed rule is the caller's own object.
    expect((ops[8] as Extract<Operation, { kind: 'rule' }>).rule).toBe(r);
    expect(tx.echoedRules).toEqual([8]);
    expect(tx.render()).toContain('insert rule ip t c position 7 meta l4proto tcp accept comment "a rule"');
  });

  it('keeps what the message does not carry: a handle on an added chain or rule, a base chain', () => {
    const base = { family: 'ip' as const, table: 't', name: 'b', base: { type: 'filter' as const, hook: 'input' as const, priority: 0 } };
    const withHandle = { family: 'ip' as const, table: 't', name: 'h', handle: 3 };
    const r = { ...rule('ip').accept().rule('t', 'b'), handle: 5 };
    const tx = new Transaction().add({ table: { family: 'ip', name: 't' } }).add({ chain: base }).add({ chain: withHandle }).add({ rule: r });
    expect((tx.operation(1) as Extract<Operation, { kind: 'chain' }>).chain).toBe(base);
    expect((tx.operation(2) as Extract<Operation, { kind: 'chain' }>).chain).toBe(withHandle);
    expect((tx.operation(3) as Extract<Operation, { kind: 'rule' }>).rule).toBe(r);
    expect(() => tx.operation(4)).toThrow(/no operation 4 in a transaction of 4/);
  });
});
