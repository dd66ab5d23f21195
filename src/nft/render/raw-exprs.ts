// Expressions nftlink keeps raw (expr/unknown.ts) as statement text: the ones nft prints from a
// ruleset someone else wrote (quota, ct count, notrack, redirect, iptables-nft's xt match and
// target), and, for anything else, the raw attributes. `loadable` says whether `nft -f` reads the
// text back: nft 1.0.6 cannot load an xt expression, so a rule holding one is listed as a comment.

import type { Expr, UnknownExpr } from '../expr/index.js';
import { xtExtensionName } from '../expr/unknown.js';
import { hexBytes } from './text.js';

export interface RawStatement {
  text: string;
  loadable: boolean;
  /** False: only the raw attributes, the expression's meaning (and what it wrote) is unknown. */
  known: boolean;
}

/** What a raw statement needs from the rule around it. */
export interface RawStatementContext {
  /** `8080` or `8080-8090`: the ports loaded in registers `min` (and `max`). */
  portText(min: number, max: number | undefined): string;
  /** ` random`, ` persistent`...: NAT range flags as nft appends them. */
  natFlagsText(flags: number): string;
}

function u32(e: UnknownExpr, id: number): number | undefined {
  const b = e.attrs.find(([i]) => i === id)?.[1];
  return b && b.length >= 4 ? (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0 : undefined;
}
function u64(e: UnknownExpr, id: number): bigint | undefined {
  const b = e.attrs.find(([i]) => i === id)?.[1];
  return b && b.length >= 8 ? new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true) : undefined;
}

/** nft's byte units: the largest of bytes, kbytes, mbytes, gbytes that divides the count. */
function byteUnits(n: bigint): string {
  const units = ['bytes', 'kbytes', 'mbytes', 'gbytes'];
  let i = 0;
  while (i < units.length - 1 && n !== 0n && n % 1024n === 0n) {
    n /= 1024n;
    i++;
  }
  return `${n} ${units[i]}`;
}

// libnftnl attribute ids of the expressions below (NFTNL_EXPR_<NAME>_*).
const QUOTA = { BYTES: 1, FLAGS: 2, CONSUMED: 3 } as const;
const CONNLIMIT = { COUNT: 1, FLAGS: 2 } as const;
const REDIR = { REG_PROTO_MIN: 1, REG_PROTO_MAX: 2, FLAGS: 3 } as const;
const NF_NAT_RANGE_PROTO_SPECIFIED = 0x2;
const NFT_QUOTA_F_INV = 1;
const NFT_CONNLIMIT_F_INV = 1;

function quota(e: UnknownExpr): RawStatement | undefined {
  const bytes = u64(e, QUOTA.BYTES);
  if (bytes === undefined) return undefined;
  const over = (u32(e, QUOTA.FLAGS) ?? 0) & NFT_QUOTA_F_INV ? 'over ' : '';
  const used = u64(e, QUOTA.CONSUMED) ?? 0n;
  return { text: `quota ${over}${byteUnits(bytes)}${used ? ` used ${byteUnits(used)}` : ''}`, loadable: true, known: true };
}

function connlimit(e: UnknownExpr): RawStatement | undefined {
  const count = u32(e, CONNLIMIT.COUNT);
  if (count === undefined) return undefined;
  const over = (u32(e, CONNLIMIT.FLAGS) ?? 0) & NFT_CONNLIMIT_F_INV ? 'over ' : '';
  return { text: `ct count ${over}${count}`, loadable: true, known: true };
}

/** `redirect [to :port] [random|persistent...]` (nft_redir). */
function redir(e: UnknownExpr, ctx: RawStatementContext): RawStatement {
  const min = u32(e, REDIR.REG_PROTO_MIN);
  let text = 'redirect';
  if (min !== undefined) text += ` to :${ctx.portText(min, u32(e, REDIR.REG_PROTO_MAX))}`;
  text += ctx.natFlagsText((u32(e, REDIR.FLAGS) ?? 0) & ~NF_NAT_RANGE_PROTO_SPECIFIED);
  return { text, loadable: true, known: true };
}

/** iptables-nft's xtables match or target, as nft prints one it cannot translate. */
function xt(e: UnknownExpr): RawStatement {
  return { text: `xt ${e.name} ${JSON.stringify(xtExtensionName(e) ?? '?')}`, loadable: false, known: true };
}

/** The statement an expression nftlink keeps raw stands for. */
export function rawStatement(e: UnknownExpr, ctx: RawStatementContext): RawStatement {
  let s: RawStatement | undefined;
  switch (e.name) {
    case 'quota':
      s = quota(e);
      break;
    case 'connlimit':
      s = connlimit(e);
      break;
    case 'redir':
      s = redir(e, ctx);
      break;
    case 'notrack':
      s = { text: 'notrack', loadable: true, known: true };
      break;
    case 'match':
    case 'target':
      s = xt(e);
      break;
  }
  return s ?? { text: exprDebugText(e), loadable: false, known: false };
}

function valueText(v: unknown): string {
  if (v instanceof Uint8Array) return hexBytes(v);
  if (typeof v === 'object' && v !== null) return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x instanceof Uint8Array ? valueText(x) : x));
  return String(v);
}

/**
 * Any expression as `[ name attr=value ... ]`, in the spirit of `nft --debug=netlink`: what a rule
 * the renderer cannot write as nft text is listed as (a raw expression by its libnftnl attribute ids).
 */
export function exprDebugText(e: Expr): string {
  if (e.type === 'unknown') {
    const attrs = e.attrs.map(([id, b]) => `${id}=${valueText(b)}`);
    const nested = (e.exprs ?? []).map(exprDebugText);
    return `[ ${[e.name, ...attrs, ...nested].join(' ')} ]`;
  }
  // An anonymous set is named, not spelled out: its elements are in the dump's sets.
  const fields = Object.entries(e)
    .filter(([k, v]) => k !== 'type' && k !== 'inline' && v !== undefined)
    .map(([k, v]) => `${k}=${valueText(v)}`);
  return `[ ${[e.type, ...fields].join(' ')} ]`;
}
