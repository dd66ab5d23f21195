// One operation applied to the fake's ruleset with nf_tables' semantics: what each verb does to
// each kind of object, and what the kernel refuses (as Faults, in the order the kernel reports
// them for the operation's messages). A refused operation changes nothing.

import type { Chain, Expr, NftSet, Operation, Rule, SetElement, Table } from '../nft/index.js';
import { checkWritable, elementsDigestOf } from '../nft/inline-set.js';
import { ERRNO } from '../nft/netlink/constants.js';
import { setFlags } from '../nft/netlink/encode.js';
import { WireKind } from '../nft/netlink/wire-format.js';
import { NFTA } from '../nft/refusal-reason.js';
import { typeIdOf } from '../nft/types/datatypes.js';
import type { Verdict } from '../nft/types/verdict.js';
import { applyFlowtable, applyObject, namedObjectFault, objectElementFault } from './apply-objects.js';
import { dataOf, fitted, identityOf, overlapsHeld } from './elements.js';
import { elementFault, exprFault, fault, missingAt, type Fault } from './faults.js';
import { chainInUse, setInUse, writableElements, type FakeChain, type FakeSet, type FakeTable, type RulesetState } from './ruleset-state.js';

type Of<K extends Operation['kind']> = Extract<Operation, { kind: K }>;

/** Applies `op` to `state`; the faults the kernel would report for it (none: applied). */
export function applyOperation(state: RulesetState, op: Operation, anonymousName: () => string): Fault[] {
  switch (op.kind) {
    case 'table':
      return applyTable(state, op);
    case 'chain':
      return applyChain(state, op);
    case 'set':
      return applySet(state, op);
    case 'element':
      return applyElements(state, op);
    case 'rule':
      return applyRule(state, op, anonymousName);
    case 'object':
      return applyObject(state, op);
    case 'flowtable':
      return applyFlowtable(state, op);
  }
}

function applyTable(state: RulesetState, op: Of<'table'>): Fault[] {
  const { family, name, flags } = op.table;
  const t = state.table(family, name);
  switch (op.verb) {
    case 'add':
    case 'create':
      if (!t) {
        state.addTable(withoutHandle(op.table));
        return [];
      }
      if (op.verb === 'create') return [fault(ERRNO.EEXIST, WireKind.Table, [NFTA.TABLE_NAME])];
      // The table's flags are sent with every add (see encode.ts), and replace the table's; an
      // add that changes nothing records nothing.
      if ((t.table.flags ?? []).join() !== (flags ?? []).join()) {
        t.table = withFlags(t.table, flags);
        state.changes++;
      }
      return [];
    case 'delete':
    case 'destroy':
      if (!t) return op.verb === 'delete' ? [missingAt(WireKind.Table, NFTA.TABLE_NAME)] : [];
      state.deleteTable(t);
      return [];
    case 'flush':
      // The rules of every chain of the table: its sets keep their elements.
      return flushRules(state, op.table.family, op.table.name, undefined);
  }
}

function applyChain(state: RulesetState, op: Of<'chain'>): Fault[] {
  const c = op.chain;
  if (op.verb === 'flush') return flushRules(state, c.family, c.table, c.name);
  const t = state.table(c.family, c.table);
  if (!t) return [missingAt(WireKind.Chain, NFTA.CHAIN_TABLE)];
  const existing = t.chains.get(c.name);
  if (op.verb === 'delete' || op.verb === 'destroy') {
    if (!existing) return op.verb === 'delete' ? [missingAt(WireKind.Chain, NFTA.CHAIN_NAME)] : [];
    // The chain's own rules go with it; a jump to it from elsewhere keeps it (EBUSY).
    if (chainInUse(t, c.name)) return [fault(ERRNO.EBUSY, WireKind.Chain)];
    t.chains.delete(c.name);
    state.changes++;
    return [];
  }
  if (!existing) {
    t.chains.set(c.name, { chain: { ...withoutHandle(c), handle: ++t.lastHandle }, rules: [] });
    state.changes++;
    return [];
  }
  if (op.verb === 'create') return [fault(ERRNO.EEXIST, WireKind.Chain, [NFTA.CHAIN_NAME])];
  const refused = updateChain(existing, c);
  // The kernel records an update of the chain even when nothing of it changes.
  if (refused.length === 0) state.changes++;
  return refused;
}

/**
 * What `flush table` and `flush chain` send (encode.ts): a rule delete without a handle, for every
 * rule of the table or of one chain.
 */
function flushRules(state: RulesetState, family: string, table: string, chain: string | undefined): Fault[] {
  const t = state.table(family, table);
  if (!t) return [missingAt(WireKind.Rule, NFTA.RULE_TABLE)];
  const chains = chain === undefined ? [...t.chains.values()] : [t.chains.get(chain)];
  for (const c of chains) {
    if (!c) return [missingAt(WireKind.Rule, NFTA.RULE_CHAIN)];
    state.changes += c.rules.length;
    c.rules = [];
  }
  return [];
}

/** `add` of an existing chain: a base chain's hook must be the same; its policy may change. */
function updateChain(existing: FakeChain, c: Chain): Fault[] {
  if (!c.base) return [];
  const old = existing.chain;
  const base = old.base;
  if (!base) return [fault(ERRNO.EEXIST, WireKind.Chain)];
  if (base.type !== c.base.type) return [fault(ERRNO.EEXIST, WireKind.Chain)];
  // A base chain's hook and priority do not change in place.
  if (base.hook !== c.base.hook || base.priority !== c.base.priority) return [fault(ERRNO.EOPNOTSUPP, WireKind.Chain)];
  if (c.base.policy !== undefined && c.base.policy !== (base.policy ?? 'accept')) existing.chain = { ...old, base: { ...base, policy: c.base.policy } };
  // An ingress chain's update hooks it on the devices it lacks as well (Linux 6.18).
  const added = (c.base.devices ?? []).filter((d) => !(base.devices ?? []).includes(d));
  if (added.length) existing.chain = { ...existing.chain, base: { ...existing.chain.base!, devices: [...(base.devices ?? []), ...added] } };
  return [];
}

function applySet(state: RulesetState, op: Of<'set'>): Fault[] {
  const s = op.set;
  const t = state.table(s.family, s.table);
  if (op.verb === 'flush') {
    if (!t) return [missingAt(WireKind.Elements, NFTA.SET_ELEM_LIST_TABLE)];
    const set = t.sets.get(s.name);
    return set ? flushSet(state, set) : [missingAt(WireKind.Elements, NFTA.SET_ELEM_LIST_SET)];
  }
  if (!t) return [missingAt(WireKind.Set, NFTA.SET_TABLE)];
  const existing = t.sets.get(s.name);
  if (op.verb === 'delete' || op.verb === 'destroy') {
    if (!existing) return op.verb === 'delete' ? [missingAt(WireKind.Set, NFTA.SET_NAME)] : [];
    if (setInUse(t, s.name)) return [fault(ERRNO.EBUSY, WireKind.Set)];
    t.sets.delete(s.name);
    state.changes++;
    return [];
  }
  if (existing) {
    if (op.verb === 'create' || !sameSet(existing.set, s)) return [fault(ERRNO.EEXIST, WireKind.Set, [NFTA.SET_NAME])];
    // Elements given with the set name it by the id of the set this batch creates (encode.ts):
    // the set was not created here, so they name nothing.
    if (s.elements?.length) return [fault(ERRNO.ENOENT, WireKind.Elements)];
    // Recorded as an update of the set, as a chain's (the generation moves on).
    state.changes++;
    return [];
  }
  const created: FakeSet = { set: { ...declaration(s), handle: ++t.lastHandle }, elements: new Map(), ownsElements: true };
  t.sets.set(s.name, created);
  state.changes++;
  return s.elements?.length ? addElements(state, t, created, 'add', s.elements) : [];
}

function flushSet(state: RulesetState, s: FakeSet): Fault[] {
  state.changes += s.elements.size;
  s.elements = new Map();
  s.ownsElements = true;
  return [];
}

/** What the kernel compares when a set is added again (nft_set_is_same): key, data and flags. */
function sameSet(a: NftSet, b: NftSet): boolean {
  const ka = typeIdOf(a.key);
  const kb = typeIdOf(b.key);
  if (ka.id !== kb.id || ka.len !== kb.len || setFlags(a) !== setFlags(b)) return false;
  if (a.data === 'verdict' || b.data === 'verdict' || a.data === undefined || b.data === undefined) return a.data === b.data;
  const da = typeIdOf(a.data);
  const db = typeIdOf(b.data);
  return da.id === db.id && da.len === db.len;
}

function applyElements(state: RulesetState, op: Of<'element'>): Fault[] {
  const { verb } = op;
  const adding = verb === 'add' || verb === 'create';
  // A message without elements: the kernel refuses it to add, and takes it as a flush to delete.
  // Transaction.queue queues no such operation; modelled all the same, so that a fake-backed test
  // sees the flush if that ever changes.
  if (adding && op.elements.length === 0) return [fault(ERRNO.EINVAL, WireKind.Elements)];
  const t = state.table(op.set.family, op.set.table);
  if (!t) return [missingAt(WireKind.Elements, NFTA.SET_ELEM_LIST_TABLE)];
  const s = t.sets.get(op.set.name);
  if (!s) return [missingAt(WireKind.Elements, NFTA.SET_ELEM_LIST_SET)];
  if (verb === 'add' || verb === 'create') return addElements(state, t, s, verb, op.elements);
  if (op.elements.length === 0) return flushSet(state, s);
  for (let i = 0; i < op.elements.length; i++) {
    const id = identityOf(s.set, op.elements[i]!);
    if (id === undefined) return [elementFault(ERRNO.EINVAL, i)];
    if (!s.elements.has(id)) {
      if (op.verb === 'destroy') continue;
      return [elementFault(ERRNO.ENOENT, i)];
    }
    writableElements(s).delete(id);
    state.changes++;
  }
  return [];
}

/**
 * Adds elements in order, as nft_add_set_elem does: the data first (a jump target must exist),
 * then the key (an existing key is no error to `add` with the same data), then the set's size.
 */
function addElements(state: RulesetState, t: FakeTable, s: FakeSet, verb: 'add' | 'create', elements: readonly SetElement[]): Fault[] {
  for (let i = 0; i < elements.length; i++) {
    const fit = fitted(s.set, elements[i]!);
    if (fit === undefined) return [elementFault(ERRNO.EINVAL, i)];
    const { id, element } = fit;
    const target = verdictFault(t, element.value) ?? objectElementFault(t, s.set, element);
    if (target !== undefined) return [elementFault(target, i)];
    const old = s.elements.get(id);
    if (old) {
      if (verb === 'create' || dataOf(s.set, old) !== dataOf(s.set, element)) return [elementFault(ERRNO.EEXIST, i)];
      continue;
    }
    if (overlapsHeld(s.set, s.elements.values(), element)) return [elementFault(ERRNO.EEXIST, i)];
    if (s.set.size !== undefined && s.elements.size >= s.set.size) return [elementFault(ERRNO.ENFILE, i)];
    writableElements(s).set(id, element);
    state.changes++;
  }
  return [];
}

/** The errno the kernel answers a verdict with (a jump or goto to a missing or a base chain), if any. */
function verdictFault(t: FakeTable, v: SetElement['value'] | Verdict | undefined): number | undefined {
  if (!v || Array.isArray(v) || !('chain' in v)) return undefined;
  const target = t.chains.get(v.chain);
  if (!target) return ERRNO.ENOENT;
  return target.chain.base ? ERRNO.EOPNOTSUPP : undefined;
}

function applyRule(state: RulesetState, op: Of<'rule'>, anonymousName: () => string): Fault[] {
  const r = op.rule;
  const t = state.table(r.family, r.table);
  if (op.verb === 'delete' || op.verb === 'destroy') {
    // `destroy` answers no error for a missing table, chain or rule alike.
    const quiet = op.verb === 'destroy';
    if (!t) return quiet ? [] : [missingAt(WireKind.Rule, NFTA.RULE_TABLE)];
    const chain = t.chains.get(r.chain);
    if (!chain) return quiet ? [] : [missingAt(WireKind.Rule, NFTA.RULE_CHAIN)];
    const at = chain.rules.findIndex((x) => x.handle === r.handle);
    if (at < 0) return quiet ? [] : [missingAt(WireKind.Rule, NFTA.RULE_HANDLE)];
    chain.rules.splice(at, 1);
    state.changes++;
    return [];
  }
  // A rule's inline sets are messages of their own, before the rule's.
  const faults: Fault[] = [];
  const exprs = r.exprs.map((e, k) => (e.type === 'lookup' && e.inline ? bindInlineSet(state, t, r, e, k, anonymousName, faults) : e));
  if (!t) return [...faults, missingAt(WireKind.Rule, NFTA.RULE_TABLE)];
  const chain = t.chains.get(r.chain);
  if (!chain) return [...faults, missingAt(WireKind.Rule, NFTA.RULE_CHAIN)];
  // A new rule's handle is taken before its position and expressions are checked (and stays
  // taken when they are refused): a replaced rule keeps its own.
  const handle = op.verb === 'replace' ? r.handle! : ++t.lastHandle;
  const at = placeOf(chain, op);
  if (typeof at !== 'number') return [...faults, at];
  const refused = exprFaultOf(t, exprs);
  if (refused) return [...faults, refused];
  if (faults.length) return faults;
  const stored: Rule = { family: r.family, table: r.table, chain: r.chain, exprs, handle };
  if (r.comment !== undefined) stored.comment = r.comment;
  if (r.tag !== undefined) stored.tag = r.tag;
  if (op.verb === 'replace') chain.rules[at] = stored;
  else chain.rules.splice(at, 0, stored);
  state.changes++;
  return [];
}

/** Where in its chain the rule goes: the index, or ENOENT for a handle or position not there. */
function placeOf(chain: FakeChain, op: Of<'rule'>): number | Fault {
  const { handle, position } = op.rule;
  if (op.verb === 'replace') {
    const at = chain.rules.findIndex((x) => x.handle === handle);
    return at < 0 ? missingAt(WireKind.Rule, NFTA.RULE_HANDLE) : at;
  }
  if (position === undefined) return op.verb === 'add' ? chain.rules.length : 0;
  const at = chain.rules.findIndex((x) => x.handle === position);
  if (at < 0) return missingAt(WireKind.Rule, NFTA.RULE_POSITION);
  return op.verb === 'add' ? at + 1 : at;
}

/** The first expression the kernel refuses: a jump to a chain that is missing or a base chain, a missing set. */
function exprFaultOf(t: FakeTable, exprs: readonly Expr[]): Fault | undefined {
  for (let k = 0; k < exprs.length; k++) {
    const e = exprs[k]!;
    let errno: number | undefined;
    if (e.type === 'immediate' && e.verdict) errno = verdictFault(t, e.verdict);
    else if ((e.type === 'lookup' && !e.inline) || e.type === 'dynset') errno = t.sets.has(e.set) ? undefined : ERRNO.ENOENT;
    else errno = namedObjectFault(t, e);
    if (errno !== undefined) return exprFault(errno, k);
  }
  return undefined;
}

/**
 * A rule's inline set, as the kernel binds it: anonymous, named, with a handle of the table and
 * its elements. It lives inside the rule's lookup and goes with the rule.
 */
function bindInlineSet(state: RulesetState, t: FakeTable | undefined, r: Rule, e: Extract<Expr, { type: 'lookup' }>, k: number, anonymousName: () => string, faults: Fault[]): Expr {
  const inline = e.inline!;
  checkWritable(inline, r.chain);
  const elements = inline.elements ?? [];
  if (!t) {
    faults.push({ ...missingAt(WireKind.Set, NFTA.SET_TABLE), inlineExpr: k });
    if (elements.length) faults.push({ ...missingAt(WireKind.Elements, NFTA.SET_ELEM_LIST_TABLE), inlineExpr: k });
    return e;
  }
  const name = inline.name && !inline.name.includes('%d') ? inline.name : anonymousName();
  // With the digest the encoder writes into its userdata (inline-set.ts).
  const set: NftSet = { ...declaration(inline), family: r.family, table: r.table, name, anonymous: true, handle: ++t.lastHandle, elementsDigest: elementsDigestOf(inline) };
  const fakeSet: FakeSet = { set, elements: new Map(), ownsElements: true };
  const refused = addElements(state, t, fakeSet, 'add', elements);
  faults.push(...refused.map((f) => ({ ...f, inlineExpr: k })));
  return { ...e, set: name, inline: { ...set, elements: [...fakeSet.elements.values()] } };
}

/** A set's declaration as the fake keeps it: no elements, no handle of the caller's. */
function declaration(s: NftSet): NftSet {
  const { elements: _e, elementKeys: _k, handle: _h, ...decl } = s;
  return decl;
}

function withoutHandle<T extends Table | Chain>(o: T): T {
  const { handle: _h, ...rest } = o;
  return rest as T;
}

function withFlags(t: Table, flags: Table['flags']): Table {
  const { flags: _f, ...rest } = t;
  return flags?.length ? { ...rest, flags: [...flags] } : rest;
}
