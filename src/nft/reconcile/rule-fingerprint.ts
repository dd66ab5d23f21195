// Two rules are the same when they run the same expressions with the same constants: a canonical
// text of their expressions and comment. What the kernel adds or renames is left out: counter
// values, the names and transaction ids of inline anonymous sets (whose elements are compared,
// sorted, instead). Structural rather than rendered, so a full sync of 30,000 rules stays cheap,
// and so rules nft's grammar cannot print compare too.

import type { Expr } from '../expr/index.js';
import { NF_NAT_RANGE } from '../netlink/constants.js';
import type { NftSet, Rule, SetElement } from '../objects.js';
import type { Datatype } from '../types/datatypes.js';
import { elementKey } from '../values.js';

const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

function typesText(t: readonly Datatype[] | 'verdict' | undefined): string {
  if (t === undefined) return '';
  if (t === 'verdict') return 'verdict';
  return t.map((x) => `${x.name}/${x.size}`).join('.');
}

function elementText(set: NftSet, e: SetElement): string {
  let v = '';
  if (e.value !== undefined) v = Array.isArray(e.value) ? e.value.join(',') : JSON.stringify(e.value);
  return `${elementKey(set, e)}=${v}`;
}

function inlineText(set: NftSet): string {
  const elements = (set.elements ?? []).map((e) => elementText(set, e)).sort();
  return `{${typesText(set.key)}:${typesText(set.data)}|${elements.join(';')}}`;
}

function exprText(e: Expr): string {
  switch (e.type) {
    case 'counter':
      return 'counter';
    case 'lookup': {
      const { set, setId: _id, inline, ...rest } = e;
      return `lookup${inline ? inlineText(inline) : `@${set}`}${canon(rest)}`;
    }
    case 'nat': {
      // The kernel fills in what nft leaves implicit: the range's upper registers (the same as the
      // lower) and the MAP_IPS / PROTO_SPECIFIED flags. Compare what the rule means.
      const n = { ...e };
      if (n.regAddrMax !== undefined && n.regAddrMin !== undefined && word(n.regAddrMax) === word(n.regAddrMin)) delete n.regAddrMax;
      if (n.regProtoMax !== undefined && n.regProtoMin !== undefined && word(n.regProtoMax) === word(n.regProtoMin)) delete n.regProtoMax;
      const flags = (n.flags ?? 0) & ~(NF_NAT_RANGE.MAP_IPS | NF_NAT_RANGE.PROTO_SPECIFIED);
      if (flags) n.flags = flags;
      else delete n.flags;
      return canon(n);
    }
    case 'dynset': {
      const { exprs, ...rest } = e;
      return `dynset${canon(rest)}[${(exprs ?? []).map((x) => exprText(x as Expr)).join(' ')}]`;
    }
    default:
      return canon(e);
  }
}

/**
 * A register as the 32-bit word it starts at: the kernel reports NFT_REG32_04 as NFT_REG_2 (the
 * same storage), so `meta l4proto` loaded into reg 12 dumps as reg 2.
 */
function word(reg: number): number {
  if (reg >= 1 && reg <= 4) return (reg - 1) * 4;
  if (reg >= 8 && reg <= 23) return reg - 8;
  return -1 - reg; // the verdict register, or nonsense: keep distinct
}

const REGISTER_FIELDS = new Set(['dreg', 'sreg', 'sregKey', 'sregData', 'regAddrMin', 'regAddrMax', 'regProtoMin', 'regProtoMax']);

/** Stable text of a plain expression object: sorted keys, bytes as hex, bigints as decimal. */
function canon(o: object): string {
  const keys = Object.keys(o).sort();
  const parts: string[] = [];
  for (const k of keys) {
    const v = (o as Record<string, unknown>)[k];
    if (v === undefined) continue;
    let s: string;
    if (REGISTER_FIELDS.has(k) && typeof v === 'number') s = `w${word(v)}`;
    else if (v instanceof Uint8Array) s = hex(v);
    else if (typeof v === 'bigint') s = v.toString();
    else if (typeof v === 'object' && v !== null) s = Array.isArray(v) ? `[${v.map((x) => (typeof x === 'object' && x !== null ? canon(x as object) : String(x))).join(',')}]` : canon(v);
    else s = String(v);
    parts.push(`${k}=${s}`);
  }
  return `(${parts.join(' ')})`;
}

export function ruleFingerprint(r: Pick<Rule, 'exprs' | 'comment'>): string {
  const body = r.exprs.map(exprText).join(' ');
  return r.comment === undefined ? body : `${body} #${r.comment}`;
}
