// The addon's monitor batches -> changes and generation marks, in kernel order. A batch is a reply
// in the compact format (native/README.md, "The monitor"): each event an op whose msgType is the
// kernel's (NEWTABLE, DELRULE ...) and whose nlFlags are the event's, decoded by the dump's decoders;
// NFT_MSG_NEWGEN is an op of kind 5.

import { FAMILY_BY_NUMBER, NFT_MSG, NLM_F, type Family } from '../netlink/constants.js';
import { CHAIN_ATTR, RULE_ATTR, SET_ATTR, TABLE_ATTR } from '../netlink/attrs.js';
import { getStr, getU32 } from '../netlink/decode/attr-values.js';
import { decodeChain } from '../netlink/decode/chain.js';
import { SetElementsDecoder } from '../netlink/decode/elements.js';
import { decodeRule } from '../netlink/decode/rule.js';
import { attachInline } from '../netlink/decode/ruleset-decoder.js';
import { decodeSet } from '../netlink/decode/set.js';
import { decodeTable } from '../netlink/decode/table.js';
import type { WireObject } from '../netlink/decode/wire-objects.js';
import type { SetElement } from '../objects.js';
import { WireReader } from '../netlink/decode/wire-reader.js';
import { WireKind } from '../netlink/wire-format.js';
import type { MonitorChange } from './events.js';
import type { MonitorFilter } from './filter.js';
import { KnownSets } from './known-sets.js';

/** The op kind of NFT_MSG_NEWGEN in a monitor batch, and its attributes (native/monitor.h). */
export const MONITOR_GENERATION_KIND = 5;
export const GEN_ATTR = { ID: 0, PID: 1, PROC_NAME: 2, PORTID: 3, SEQ: 4 } as const;

export type MonitorRecord =
  | { type: 'change'; change: MonitorChange }
  | { type: 'generation'; generation: number; pid?: number; processName?: string; portid: number };

/** Element events of one set in a row (one message per element: an interval's two ends pair up here). */
interface ElementRun {
  msgType: number;
  family: Family;
  table: string;
  name: string;
  objects: WireObject[];
}

export class MonitorDecoder {
  private run: ElementRun | undefined;

  constructor(
    private readonly filter: MonitorFilter,
    readonly sets = new KnownSets(),
  ) {}

  /** Reads one batch; its records go to `out` in kernel order (an element run may wait for the next batch). */
  add(batch: Uint8Array, out: (r: MonitorRecord) => void): void {
    const reader = new WireReader(batch);
    const { count } = reader.header();
    for (let i = 0; i < count; i++) this.object(reader.object(i === count - 1), out);
  }

  /** Forgets a half-read transaction (after a loss). */
  reset(): void {
    this.run = undefined;
    this.sets.endTransaction();
  }

  private object(o: WireObject, out: (r: MonitorRecord) => void): void {
    if (o.kind === (MONITOR_GENERATION_KIND as WireKind)) {
      this.endRun(out);
      this.sets.endTransaction();
      const r: MonitorRecord = { type: 'generation', generation: getU32(o.attrs, GEN_ATTR.ID) ?? 0, portid: getU32(o.attrs, GEN_ATTR.PORTID) ?? 0 };
      const pid = getU32(o.attrs, GEN_ATTR.PID);
      if (pid !== undefined) r.pid = pid;
      const name = getStr(o.attrs, GEN_ATTR.PROC_NAME);
      if (name !== undefined) r.processName = name;
      out(r);
      return;
    }
    const family = FAMILY_BY_NUMBER[o.family];
    if (!family || !this.filter.scope(family, tableOf(o))) return;
    if (o.kind === WireKind.Elements) {
      const table = getStr(o.attrs, SET_ATTR.TABLE) ?? '';
      const name = getStr(o.attrs, SET_ATTR.NAME) ?? '';
      const run = this.run;
      if (run && run.msgType === o.msgType && run.family === family && run.table === table && run.name === name) {
        run.objects.push(o);
        return;
      }
      this.endRun(out);
      this.run = { msgType: o.msgType, family, table, name, objects: [o] };
      return;
    }
    this.endRun(out);
    const added = o.msgType === NFT_MSG.NEWTABLE || o.msgType === NFT_MSG.NEWCHAIN || o.msgType === NFT_MSG.NEWRULE || o.msgType === NFT_MSG.NEWSET;
    switch (o.kind) {
      case WireKind.Table:
        if (this.filter.kind('table')) out({ type: 'change', change: { verb: added ? 'add' : 'delete', kind: 'table', table: decodeTable(o) } });
        return;
      case WireKind.Chain:
        if (this.filter.kind('chain')) out({ type: 'change', change: { verb: added ? 'add' : 'delete', kind: 'chain', chain: decodeChain(o) } });
        return;
      case WireKind.Rule: {
        if (!this.filter.kind('rule')) return;
        const rule = decodeRule(o);
        rule.exprs = rule.exprs.map((e) => attachInline(e, rule, this.sets.byKey, new Map()));
        // The kernel marks an appended rule NLM_F_APPEND; one put before another (or first) has none.
        const verb = !added ? 'delete' : o.nlFlags & NLM_F.APPEND ? 'add' : 'insert';
        out({ type: 'change', change: { verb, kind: 'rule', rule } });
        return;
      }
      case WireKind.Set: {
        // Decoded for the element events that follow, whether or not set changes pass the filter.
        const decoded = decodeSet(o);
        const anonymous = this.sets.anonymous(decoded);
        const set = added ? decoded : this.sets.described(decoded);
        if (added) this.sets.added(set);
        else this.sets.deleted(set);
        if (!anonymous && this.filter.kind('set')) out({ type: 'change', change: { verb: added ? 'add' : 'delete', kind: 'set', set } });
        return;
      }
    }
  }

  private endRun(out: (r: MonitorRecord) => void): void {
    const run = this.run;
    if (!run) return;
    this.run = undefined;
    const added = run.msgType === NFT_MSG.NEWSETELEM;
    const set = this.sets.get(run.family, run.table, run.name);
    if (set?.anonymous) {
      // The elements of an anonymous set go with the set, into the lookup of the rule that follows.
      if (added) {
        const d = new SetElementsDecoder(set, (set.elements ??= []) as SetElement[]);
        for (const o of run.objects) d.add(o);
        d.finish();
      }
      return;
    }
    if (!this.filter.kind('element')) return;
    if (!set) {
      const undecoded = run.objects.reduce((n, o) => n + o.elementCount, 0);
      const unknown = { family: run.family, table: run.table, name: run.name, key: [] };
      out({ type: 'change', change: { verb: added ? 'add' : 'delete', kind: 'element', set: unknown, elements: [], undecoded } });
      return;
    }
    const elements: SetElement[] = [];
    const d = new SetElementsDecoder(set, elements);
    for (const o of run.objects) d.add(o);
    d.finish();
    const { elements: _none, ...bare } = set;
    out({ type: 'change', change: { verb: added ? 'add' : 'delete', kind: 'element', set: bare, elements } });
  }
}

function tableOf(o: WireObject): string {
  switch (o.kind) {
    case WireKind.Table:
      return getStr(o.attrs, TABLE_ATTR.NAME) ?? '';
    case WireKind.Chain:
      return getStr(o.attrs, CHAIN_ATTR.TABLE) ?? '';
    case WireKind.Rule:
      return getStr(o.attrs, RULE_ATTR.TABLE) ?? '';
    default:
      return getStr(o.attrs, SET_ATTR.TABLE) ?? '';
  }
}
