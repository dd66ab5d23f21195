// Named objects and flowtables applied to the fake's ruleset with nf_tables' semantics: add keeps
// an existing one (the kernel updates what may change: a quota's or limit's parameters; a
// flowtable's devices grow), create refuses it, delete refuses a missing one or one a rule uses.

import type { Expr, Flowtable, NftObject, NftSet, Operation, SetElement } from '../nft/index.js';
import { ERRNO } from '../nft/netlink/constants.js';
import { WireKind } from '../nft/netlink/wire-format.js';
import { NFTA } from '../nft/refusal-reason.js';
import { fault, missingAt, type Fault } from './faults.js';
import type { FakeTable, RulesetState } from './ruleset-state.js';

type Of<K extends Operation['kind']> = Extract<Operation, { kind: K }>;

/** The object types with an update operation (Linux 6.18: nft_quota, nft_synproxy). */
const UPDATABLE = new Set(['quota', 'synproxy']);

const objectKey = (type: string, name: string): string => `${type} ${name}`;

export function applyObject(state: RulesetState, op: Of<'object'>): Fault[] {
  const o = op.object;
  const t = state.table(o.family, o.table);
  if (!t) return [missingAt(WireKind.Object, NFTA.OBJ_TABLE)];
  const k = objectKey(o.type, o.name);
  const existing = t.objects.get(k);
  if (op.verb === 'delete' || op.verb === 'destroy') {
    if (!existing) return op.verb === 'delete' ? [missingAt(WireKind.Object, NFTA.OBJ_NAME)] : [];
    if (usesTable(t, (e) => e.type === 'objref' && 'name' in e && e.name === o.name && e.objectType === o.type) || inMaps(t, o.type, o.name)) return [fault(ERRNO.EBUSY, WireKind.Object)];
    t.objects.delete(k);
    state.changes++;
    return [];
  }
  if (existing) {
    if (op.verb === 'create') return [fault(ERRNO.EEXIST, WireKind.Object, [NFTA.OBJ_NAME])];
    // nf_tables_newobj: an add of an existing object is an update for the types that have one
    // (nf_tables_updobj takes the new parameters); for the others it does nothing at all.
    if (!UPDATABLE.has(o.type)) return [];
    t.objects.set(k, { ...stored(op.object as NftObject), handle: existing.handle! });
    state.changes++;
    return [];
  }
  t.objects.set(k, { ...stored(op.object as NftObject), handle: ++t.lastHandle });
  state.changes++;
  return [];
}

/** What a dump of a fresh object shows: counts start at what was given, else 0. */
function stored(o: NftObject): NftObject {
  if (o.type === 'counter') return { ...o, packets: o.packets ?? 0n, bytes: o.bytes ?? 0n };
  return { ...o };
}

export function applyFlowtable(state: RulesetState, op: Of<'flowtable'>): Fault[] {
  const f = op.flowtable;
  const t = state.table(f.family, f.table);
  if (!t) return [missingAt(WireKind.Flowtable, NFTA.FLOWTABLE_TABLE)];
  const existing = t.flowtables.get(f.name);
  if (op.verb === 'delete' || op.verb === 'destroy') {
    if (!existing) return op.verb === 'delete' ? [missingAt(WireKind.Flowtable, NFTA.FLOWTABLE_NAME)] : [];
    if (usesTable(t, (e) => e.type === 'flow' && e.flowtable === f.name)) return [fault(ERRNO.EBUSY, WireKind.Flowtable)];
    t.flowtables.delete(f.name);
    state.changes++;
    return [];
  }
  if (existing) {
    if (op.verb === 'create') return [fault(ERRNO.EEXIST, WireKind.Flowtable, [NFTA.FLOWTABLE_NAME])];
    // An update may add devices; the hook and priority stay (EOPNOTSUPP otherwise).
    if (f.priority !== existing.priority) return [fault(ERRNO.EOPNOTSUPP, WireKind.Flowtable)];
    const devices = [...existing.devices, ...f.devices.filter((d) => !existing.devices.includes(d))];
    t.flowtables.set(f.name, { ...existing, devices });
    state.changes++;
    return [];
  }
  const created: Flowtable = { ...f, hook: 'ingress', devices: [...f.devices], handle: ++t.lastHandle };
  t.flowtables.set(f.name, created);
  state.changes++;
  return [];
}

function usesTable(t: FakeTable, uses: (e: Expr) => boolean): boolean {
  for (const c of t.chains.values()) for (const r of c.rules) if (r.exprs.some(uses)) return true;
  return false;
}

/** Whether an element of a map of objects of `type` names the object. */
function inMaps(t: FakeTable, type: string, name: string): boolean {
  for (const s of t.sets.values()) {
    if (s.set.objects !== type) continue;
    for (const e of s.elements.values()) if (Array.isArray(e.value) && e.value[0] === name) return true;
  }
  return false;
}

/** ENOENT for an element of a map of objects that names an object the table lacks. */
export function objectElementFault(t: FakeTable, s: NftSet, e: SetElement): number | undefined {
  if (s.objects === undefined || !Array.isArray(e.value)) return undefined;
  return t.objects.has(objectKey(s.objects, String(e.value[0]))) ? undefined : ERRNO.ENOENT;
}

/** ENOENT for a rule's reference to a named object or flowtable the table lacks. */
export function namedObjectFault(t: FakeTable, e: Expr): number | undefined {
  if (e.type === 'objref' && 'name' in e) return e.objectType !== undefined && t.objects.has(objectKey(e.objectType, e.name)) ? undefined : ERRNO.ENOENT;
  if (e.type === 'objref') return t.sets.has(e.set) ? undefined : ERRNO.ENOENT;
  if (e.type === 'flow') return t.flowtables.has(e.flowtable) ? undefined : ERRNO.ENOENT;
  return undefined;
}
