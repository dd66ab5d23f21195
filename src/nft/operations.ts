// The operations a transaction queues: one verb on one object, with nft's meaning of each verb.

import type { Flowtable, NftObject, NftObjectRef } from './named-objects.js';
import type { Chain, NftSet, Rule, SetElement, SetRef, Table } from './objects.js';

export type Verb = 'add' | 'create' | 'insert' | 'replace' | 'delete' | 'destroy' | 'flush';

export type Operation =
  | { verb: 'add' | 'create'; kind: 'object'; object: NftObject }
  | { verb: 'delete' | 'destroy'; kind: 'object'; object: NftObject | NftObjectRef }
  | { verb: 'add' | 'create' | 'delete' | 'destroy'; kind: 'flowtable'; flowtable: Flowtable }
  | { verb: 'add' | 'create' | 'delete' | 'destroy' | 'flush'; kind: 'table'; table: Table }
  | { verb: 'add' | 'create' | 'delete' | 'destroy' | 'flush'; kind: 'chain'; chain: Chain }
  | { verb: 'add' | 'insert' | 'replace' | 'delete' | 'destroy'; kind: 'rule'; rule: Rule; echo?: true }
  | { verb: 'add' | 'create' | 'delete' | 'destroy' | 'flush'; kind: 'set'; set: NftSet }
  | { verb: 'add' | 'create' | 'delete' | 'destroy'; kind: 'element'; set: NftSet; elements: readonly SetElement[] };

export type OperationKind = Operation['kind'];

/** Per-operation options of `add`, `insert` and `replace`. */
export interface OperationOptions {
  /**
   * Rules only: learn the handle the kernel gives the rule (NLM_F_ECHO), returned by
   * `Nftables.commit` in `ruleHandles` under this operation's index (a replaced rule keeps its handle).
   */
  echo?: boolean;
}

/** What one queued operation names, for error messages: `rule ip kube-proxy services handle 7`. */
export function describeTarget(op: Operation): string {
  switch (op.kind) {
    case 'table':
      return `table ${op.table.family} ${op.table.name}`;
    case 'chain':
      return `chain ${op.chain.family} ${op.chain.table} ${op.chain.name}`;
    case 'rule':
      return `rule ${op.rule.family} ${op.rule.table} ${op.rule.chain}${op.rule.handle !== undefined ? ` handle ${op.rule.handle}` : ''}`;
    case 'set':
      return `${op.set.data || op.set.objects ? 'map' : 'set'} ${op.set.family} ${op.set.table} ${op.set.name}`;
    case 'element':
      return `element ${op.set.family} ${op.set.table} ${op.set.name}`;
    case 'object':
      return `${op.object.type} ${op.object.family} ${op.object.table} ${op.object.name}`;
    case 'flowtable':
      return `flowtable ${op.flowtable.family} ${op.flowtable.table} ${op.flowtable.name}`;
  }
}

export function setRefOf(s: SetRef): SetRef {
  return { family: s.family, table: s.table, name: s.name };
}
