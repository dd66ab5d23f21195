// What a kernel refusal means for the operation it answered, in words that name the object. The
// kernel often answers with a bare errno (no extended-ack text), and strerror's words then mislead
// or say nothing: ENOENT's "No such file or directory" does not say which of a rule's table, chain,
// jump target or set is missing. The kernel does point at the attribute it refused
// (NLMSGERR_ATTR_OFFS), and the addon hands that on as a path of (attribute type, index) pairs
// (native/commit.cc, attrPathAt), which is read here against the operation that was sent.

import { isXtExpr, xtExtensionName } from './expr/unknown.js';
import { ERRNO } from './netlink/constants.js';
import { WireKind } from './netlink/wire-format.js';
import type { Rule } from './objects.js';
import type { Operation } from './operations.js';

/** One refusal as the addon reported it, tied back to the caller's operation. */
export interface RefusalSite {
  errno: number;
  op: Operation | undefined;
  /** The kind of object the refused message carried: a rule's operation also sends its inline sets. */
  messageKind: WireKind | undefined;
  /** Where the kernel pointed in that message (native/commit.cc, attrPathAt). */
  attrPath: readonly number[];
  /** The caller's element index, for element messages. */
  elementIndex?: number | undefined;
  /** For a message of a rule's inline set: the index of the rule's expression that holds the set. */
  inlineExpr?: number | undefined;
}

/**
 * The object a refusal is about, as data for a caller that repairs and retries (a CNI that creates
 * the chain its rule jumps to, or declares a full set larger). `name` is the chain's or set's; for
 * an element, its set's; for a rule, its chain's, with the handle (or position) that named it.
 */
export interface RefusedObject {
  kind: 'table' | 'chain' | 'set' | 'element' | 'rule' | 'object' | 'flowtable';
  family: string;
  table: string;
  name?: string;
  handle?: number;
}

/** What an ENOENT refusal found missing (see RefusedObject). */
export type MissingObject = RefusedObject;

/**
 * A refusal explained: the words for the error message and, where the errno says what is wrong
 * with which object, that object: `missing` (ENOENT), `full` (ENFILE: the set, with its declared
 * size), `inUse` (EBUSY: the set or chain something still refers to), `conflict` (EEXIST: the map
 * whose key the element has, with other data).
 */
export interface RefusalExplanation {
  reason: string;
  missing?: MissingObject;
  full?: RefusedObject & { size?: number };
  inUse?: RefusedObject;
  conflict?: RefusedObject;
}

export const KIND_OF_OPERATION: Record<Operation['kind'], WireKind> = {
  table: WireKind.Table,
  chain: WireKind.Chain,
  rule: WireKind.Rule,
  set: WireKind.Set,
  element: WireKind.Elements,
  object: WireKind.Object,
  flowtable: WireKind.Flowtable,
};

/**
 * The kernel's attribute numbers the paths carry (include/uapi/linux/netfilter/nf_tables.h), not
 * libnftnl's ids of netlink/attrs.ts: only those a reason below reads.
 */
export const NFTA = {
  TABLE_NAME: 1,
  CHAIN_TABLE: 1,
  CHAIN_HANDLE: 2,
  CHAIN_NAME: 3,
  RULE_TABLE: 1,
  RULE_CHAIN: 2,
  RULE_HANDLE: 3,
  RULE_EXPRESSIONS: 4,
  RULE_POSITION: 6,
  SET_TABLE: 1,
  SET_NAME: 2,
  SET_ELEM_LIST_TABLE: 1,
  SET_ELEM_LIST_SET: 2,
  SET_ELEM_LIST_ELEMENTS: 3,
  LIST_ELEM: 1,
  OBJ_TABLE: 1,
  OBJ_NAME: 2,
  FLOWTABLE_TABLE: 1,
  FLOWTABLE_NAME: 2,
} as const;

/** The kernel's jump stack (NFT_JUMP_STACK_SIZE): how deep chains may nest through jumps and gotos. */
const JUMP_STACK = 16;

/**
 * The reason, or undefined where the errno (and the kernel's own text, if any) says enough. Seen on
 * Linux 6.18, all without extended-ack text:
 * - ENOENT: the path says which object is missing;
 * - ENFILE when an element would take a set past its declared size (nft_add_set_elem); strerror
 *   says "Too many open files in system";
 * - EMLINK when a jump or goto makes chains nest deeper than the jump stack, which a loop of jumps
 *   always does (the chain validation walks the jumps, counting depth); strerror says "Too many
 *   links". ELOOP where the kernel finds the loop itself (nf_tables_check_loops, on kernels that
 *   validate each jump as it is added): "Too many levels of symbolic links";
 * - EEXIST to an `add` of a map element whose key is there with other data (an add of the very same
 *   element is no error), where "File exists" reads as a bug in an idempotent verb;
 * - EBUSY to deleting a set a rule uses, or a chain a rule or a verdict map jumps to;
 * - EINVAL to an element: the kernel points at the element and no deeper, so the reason lists what
 *   nf_tables checks there (what was queued already matched the set object the caller passed, so
 *   the usual cause is a set object that differs from the kernel's).
 */
export function refusalReason(site: RefusalSite): RefusalExplanation | undefined {
  const { errno, op, messageKind, attrPath, elementIndex, inlineExpr } = site;
  if (!op) return undefined;
  if (op.kind === 'rule' && inlineExpr !== undefined) return inlineSetReason(errno, op.rule, inlineExpr, messageKind, attrPath, elementIndex);
  // A path is read against the operation's own message only: under a rule's operation, a refused
  // inline set message has other attribute numbers.
  const path = messageKind === KIND_OF_OPERATION[op.kind] ? attrPath : [];
  if (errno === ERRNO.ENOENT) return missing(op, path, elementIndex);
  return otherReason(errno, op, path);
}

/** The object a refusal is about: a set or chain, or for an element its set, as `kind`. */
function refused(kind: RefusedObject['kind'], o: { family: string; table: string; name: string }): RefusedObject {
  return { kind, family: o.family, table: o.table, name: o.name };
}

/** The reasons of the errnos other than ENOENT (see refusalReason). */
function otherReason(errno: number, op: Operation, path: readonly number[]): RefusalExplanation | undefined {
  if (errno === ERRNO.ENFILE && op.kind === 'element' && (op.verb === 'add' || op.verb === 'create')) {
    const { name, size } = op.set;
    const full: RefusalExplanation['full'] = refused('set', op.set);
    if (size !== undefined) full.size = size;
    return { reason: `set ${name} is full: it holds its declared size${size !== undefined ? ` of ${size} element(s)` : ''}`, full };
  }
  const jumps = op.kind === 'rule' || op.kind === 'element';
  if (errno === ERRNO.EMLINK && jumps) return { reason: `its jumps nest chains more than ${JUMP_STACK} deep, or loop back to a chain on the way` };
  if (errno === ERRNO.ELOOP && jumps) return { reason: 'its jumps loop back to a chain on the way' };
  if (errno === ERRNO.EEXIST && op.kind === 'element' && op.verb === 'add' && op.set.data !== undefined) {
    return {
      reason: `the key is already in map ${op.set.name} with other data (a value is not changed in place: delete the element and add it again, in one transaction)`,
      conflict: refused('element', op.set),
    };
  }
  const deleting = op.verb === 'delete' || op.verb === 'destroy';
  if (errno === ERRNO.EBUSY && deleting && op.kind === 'set') {
    return { reason: `set ${op.set.name} is in use: a rule refers to it`, inUse: refused('set', op.set) };
  }
  if (errno === ERRNO.EBUSY && deleting && op.kind === 'chain') {
    return { reason: `chain ${op.chain.name} is in use: a rule or a verdict map element jumps or goes to it`, inUse: refused('chain', op.chain) };
  }
  if (errno === ERRNO.EBUSY && deleting && (op.kind === 'object' || op.kind === 'flowtable')) {
    const o = op.kind === 'object' ? op.object : op.flowtable;
    return { reason: `${op.kind === 'object' ? `${op.object.type} ${o.name} is in use: a rule or a map element refers to it` : `flowtable ${o.name} is in use: a rule refers to it`}`, inUse: refused(op.kind, o) };
  }
  if (errno === ERRNO.EEXIST && op.verb === 'create' && (op.kind === 'object' || op.kind === 'flowtable')) {
    const o = op.kind === 'object' ? op.object : op.flowtable;
    return { reason: `${op.kind === 'object' ? op.object.type : 'flowtable'} ${o.name} already exists in table ${o.family} ${o.table}` };
  }
  if (errno === ERRNO.EINVAL && op.kind === 'rule') {
    const k = path[0] === NFTA.RULE_EXPRESSIONS && path[2] === NFTA.LIST_ELEM ? path[3] : undefined;
    const e = k === undefined ? undefined : op.rule.exprs[k];
    if (e?.type === 'unknown' && isXtExpr(e)) {
      // x_tables checks the info's size against the extension's and its values, and says why only in the kernel log.
      return { reason: `xt ${e.name} "${xtExtensionName(e) ?? '?'}" (expression ${k}) was refused by the kernel's x_tables: its info is not the size the extension has, or the extension refuses its values or the rule's protocol (the kernel log says which)` };
    }
  }
  if (errno === ERRNO.EINVAL && op.kind === 'element' && path[0] === NFTA.SET_ELEM_LIST_ELEMENTS) {
    return {
      reason: `the element does not fit set ${op.set.name} as the kernel has it (a key or value of another length, a value missing or extra, or a timeout or interval its flags do not allow): compare the set's declared types and flags with the kernel's`,
    };
  }
  return undefined;
}

/**
 * A refused message of a rule's inline (anonymous) set: ENOENT on the set is the rule's table
 * missing, and on one of its elements a verdict map's jump target that does not exist
 * (kube-proxy's `numgen ... vmap { 0 : goto endpoint-... }`).
 */
function inlineSetReason(errno: number, r: Rule, exprIndex: number, messageKind: WireKind | undefined, path: readonly number[], elementIndex: number | undefined): RefusalExplanation | undefined {
  if (errno !== ERRNO.ENOENT) return undefined;
  // The inline set is created first, in the rule's table.
  if (messageKind === WireKind.Set && path[0] === NFTA.SET_TABLE) return missingTable(r.family, r.table);
  if (messageKind !== WireKind.Elements || path[0] !== NFTA.SET_ELEM_LIST_ELEMENTS) return undefined;
  const e = r.exprs[exprIndex];
  const value = e?.type === 'lookup' && elementIndex !== undefined && elementIndex >= 0 ? e.inline?.elements?.[elementIndex]?.value : undefined;
  if (!value || Array.isArray(value) || !('chain' in value)) return undefined;
  return missingChain(r.family, r.table, value.chain, `the ${value.kind} target of element ${elementIndex} of expression ${exprIndex}'s inline map`);
}

function missingTable(family: string, table: string): RefusalExplanation {
  return { reason: `table ${family} ${table} does not exist`, missing: { kind: 'table', family, table } };
}

/** `role`: what the chain is to the refused operation (a jump target), when it is not the operation's own. */
function missingChain(family: string, table: string, name: string, role?: string): RefusalExplanation {
  const what = role === undefined ? name : `${name} (${role})`;
  return { reason: `chain ${what} does not exist in table ${family} ${table}`, missing: { kind: 'chain', family, table, name } };
}

function missingSet(family: string, table: string, name: string, role?: string): RefusalExplanation {
  const what = role === undefined ? name : `${name} (${role})`;
  return { reason: `set ${what} does not exist in table ${family} ${table}`, missing: { kind: 'set', family, table, name } };
}

function missingRule(r: Rule, handle: number | undefined, role: string): RefusalExplanation {
  const missing: MissingObject = { kind: 'rule', family: r.family, table: r.table, name: r.chain };
  if (handle !== undefined) missing.handle = handle;
  return { reason: `chain ${r.chain} has no rule with handle ${handle}${role}`, missing };
}

/** ENOENT: which object the attribute the kernel pointed at names. */
function missing(op: Operation, path: readonly number[], elementIndex: number | undefined): RefusalExplanation | undefined {
  const at = path[0];
  if (at === undefined) return undefined;
  switch (op.kind) {
    case 'table':
      return at === NFTA.TABLE_NAME ? missingTable(op.table.family, op.table.name) : undefined;
    case 'chain': {
      const c = op.chain;
      if (at === NFTA.CHAIN_TABLE) return missingTable(c.family, c.table);
      return at === NFTA.CHAIN_NAME || at === NFTA.CHAIN_HANDLE ? missingChain(c.family, c.table, c.name) : undefined;
    }
    case 'set': {
      const s = op.set;
      if (at === NFTA.SET_TABLE) return missingTable(s.family, s.table);
      return at === NFTA.SET_NAME ? missingSet(s.family, s.table, s.name) : undefined;
    }
    case 'element': {
      const s = op.set;
      if (at === NFTA.SET_ELEM_LIST_TABLE) return missingTable(s.family, s.table);
      if (at === NFTA.SET_ELEM_LIST_SET) return missingSet(s.family, s.table, s.name);
      if (at !== NFTA.SET_ELEM_LIST_ELEMENTS) return undefined;
      if (op.verb === 'delete') return { reason: `the element is not in set ${s.name}`, missing: refused('element', s) };
      const value = elementIndex !== undefined && elementIndex >= 0 ? op.elements[elementIndex]?.value : undefined;
      if (value && !Array.isArray(value) && 'chain' in value) return missingChain(s.family, s.table, value.chain, `the element's ${value.kind} target`);
      if (s.objects !== undefined && Array.isArray(value)) return { reason: `${s.objects} ${String(value[0])} (the element's object) does not exist in table ${s.family} ${s.table}`, missing: { kind: 'object', family: s.family, table: s.table, name: String(value[0]) } };
      return undefined;
    }
    case 'object':
    case 'flowtable': {
      const o = op.kind === 'object' ? op.object : op.flowtable;
      const what = op.kind === 'object' ? op.object.type : 'flowtable';
      const [tableAttr, nameAttr] = op.kind === 'object' ? [NFTA.OBJ_TABLE, NFTA.OBJ_NAME] : [NFTA.FLOWTABLE_TABLE, NFTA.FLOWTABLE_NAME];
      if (at === tableAttr) return missingTable(o.family, o.table);
      return at === nameAttr ? { reason: `${what} ${o.name} does not exist in table ${o.family} ${o.table}`, missing: refused(op.kind, o) } : undefined;
    }
    case 'rule': {
      const r = op.rule;
      if (at === NFTA.RULE_TABLE) return missingTable(r.family, r.table);
      if (at === NFTA.RULE_CHAIN) return missingChain(r.family, r.table, r.chain);
      if (at === NFTA.RULE_HANDLE) return missingRule(r, r.handle, '');
      if (at === NFTA.RULE_POSITION) return missingRule(r, r.position, ' (the position)');
      if (at !== NFTA.RULE_EXPRESSIONS || path[2] !== NFTA.LIST_ELEM || path[3] === undefined) return undefined;
      const k = path[3];
      const e = r.exprs[k];
      if (!e) return undefined;
      if (e.type === 'immediate' && e.verdict && 'chain' in e.verdict) return missingChain(r.family, r.table, e.verdict.chain, `the ${e.verdict.kind} target of expression ${k}`);
      if (e.type === 'lookup' || e.type === 'dynset') return missingSet(r.family, r.table, e.set, `of expression ${k}, ${e.type}`);
      if (e.type === 'objref' && 'name' in e) return { reason: `${e.objectType ?? 'object'} ${e.name} (of expression ${k}) does not exist in table ${r.family} ${r.table}`, missing: { kind: 'object', family: r.family, table: r.table, name: e.name } };
      if (e.type === 'flow') return { reason: `flowtable ${e.flowtable} (of expression ${k}) does not exist in table ${r.family} ${r.table}`, missing: { kind: 'flowtable', family: r.family, table: r.table, name: e.flowtable } };
      return { reason: `expression ${k} (${e.type}) names something that does not exist` };
    }
  }
}
