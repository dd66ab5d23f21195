// A rule's expression list -> nft statement text. This is a small symbolic interpreter over the
// registers, in the spirit of nft's netlink_delinearize.c: loads put a named field in a register,
// cmp/lookup/nat/... consume it and print a statement. Protocol matches that only exist as
// dependencies (`meta l4proto tcp` before `tcp dport`) are dropped when a later field implies
// them, as `nft list` does, so the text compiles back to the same bytecode.

import type { Expr, HashExpr, LookupExpr, RtExpr, SocketExpr } from '../expr/index.js';
import { ICMP_CODE, ICMPV6_CODE, ICMPX_CODE, LOG_LEVEL, NF_LOG_FLAGS, NF_NAT_RANGE, type Family, type PayloadBase } from '../netlink/constants.js';
import type { NftSet } from '../objects.js';
import { boolean, bytesToUint, fib_addrtype, ifname, inet_service, integer, ipv4_addr, ipv6_addr, mark, type Datatype } from '../types/datatypes.js';
import { maskPrefixLength } from '../types/address.js';
import { renderVerdict } from '../types/verdict.js';
import { ctField, defaultL3, L3_OF_L4, L4_BY_PROTO, metaField, payloadBitField, payloadField, payloadPrefixField, rawPayload, type L3, type L4 } from './fields.js';
import { exprDebugText, rawStatement, type RawStatementContext } from './raw-exprs.js';
import { elementsText, sortedElements } from './set.js';
import { formatTime, hexBytes as hex, quoteString } from './text.js';
import { OBJREF_KEYWORDS } from '../expr/objref.js';

export interface RuleRenderContext {
  family: Family;
  /** Resolves a named set of the rule's table (for the key layout of a lookup). */
  findSet?(name: string): NftSet | undefined;
}

export class RenderError extends Error {}

/** What a register holds. */
type Sym =
  | { k: 'field'; text: string; dtype: Datatype; len: number; payload?: { base: PayloadBase; offset: number; l4?: L4 }; prefixBytes?: number }
  | { k: 'imm'; bytes: Uint8Array }
  | { k: 'expr'; text: string; dtype: Datatype; len: number; parts?: Datatype[] }
  | { k: 'masked'; base: Extract<Sym, { k: 'field' }>; mask: Uint8Array; xor: Uint8Array; len: number };

interface Item {
  text: string;
  /** A protocol match that later statements may imply. */
  dep?: { kind: 'l4'; proto: L4 } | { kind: 'l3'; proto: L3 };
  dropped?: boolean;
}

/** 32-bit word index of a register: NFT_REG_1..4 are 16-byte registers, NFT_REG32_00.. are 4-byte. */
function wordOf(reg: number): number {
  if (reg >= 1 && reg <= 4) return (reg - 1) * 4;
  if (reg >= 8 && reg <= 23) return reg - 8;
  throw new RenderError(`register ${reg} is not a data register`);
}

const words = (len: number): number => Math.ceil(len / 4);

function symLen(s: Sym): number {
  return s.k === 'imm' ? s.bytes.length : s.len;
}

class RuleRenderer {
  private readonly regs = new Map<number, Sym>();
  /** Load order of each register's symbol: a concatenation is loaded word after word, in order. */
  private readonly loadedAt = new Map<number, number>();
  private loads = 0;
  private readonly items: Item[] = [];
  private l3: L3 | undefined;
  private l4: L4 | undefined;
  private l3Dep: Item | undefined;
  private l4Dep: Item | undefined;
  /** Whether nft -f can read the text back (false once a statement has no nft syntax). */
  loadable = true;
  /** What the statements of expressions nftlink keeps raw read from the rule (raw-exprs.ts). */
  private readonly rawContext: RawStatementContext = {
    portText: (min, max) => this.portText(min, max),
    natFlagsText: (flags) => natFlagsText(flags),
  };

  constructor(private readonly ctx: RuleRenderContext) {
    this.l3 = defaultL3(ctx.family);
  }

  private put(reg: number, s: Sym): void {
    const w = wordOf(reg);
    for (let i = 0; i < words(symLen(s)); i++) this.regs.delete(w + i);
    this.regs.set(w, s);
    this.loadedAt.set(w, ++this.loads);
  }

  /** Without the set's declaration: the symbols loaded one after another from `reg` on. */
  private loadedRun(reg: number): Sym[] {
    let w = wordOf(reg);
    const out: Sym[] = [];
    let last = -1;
    for (;;) {
      const s = this.regs.get(w);
      const at = this.loadedAt.get(w) ?? -1;
      if (!s || at <= last) break;
      out.push(s);
      last = at;
      w += words(symLen(s));
    }
    return out;
  }

  private get(reg: number, what: string): Sym {
    const s = this.regs.get(wordOf(reg));
    if (!s) throw new RenderError(`${what} reads register ${reg}, which nothing loaded`);
    return s;
  }

  /** The concatenation of symbols starting at `reg` covering `len` bytes. */
  private getConcat(reg: number, len: number, what: string): Sym[] {
    const out: Sym[] = [];
    let w = wordOf(reg);
    let covered = 0;
    while (covered < len) {
      const s = this.regs.get(w);
      if (!s) throw new RenderError(`${what} reads register word ${w}, which nothing loaded`);
      out.push(s);
      const n = words(symLen(s));
      w += n;
      covered += n * 4;
    }
    return out;
  }

  private emit(text: string, dep?: Item['dep']): Item {
    const item: Item = { text };
    if (dep) item.dep = dep;
    this.items.push(item);
    return item;
  }

  /** A later statement implies the protocol dependency: drop the explicit match, as nft lists it. */
  private consumeL4(proto: L4): void {
    if (this.l4Dep && this.l4Dep.dep?.kind === 'l4' && this.l4Dep.dep.proto === proto) this.l4Dep.dropped = true;
    this.l4Dep = undefined;
  }
  private consumeL3(): void {
    if (this.l3Dep) this.l3Dep.dropped = true;
    this.l3Dep = undefined;
  }

  private symText(s: Sym, as?: Datatype): string {
    switch (s.k) {
      case 'field':
      case 'expr':
        return s.text;
      case 'imm':
        return (as ?? integer(s.bytes.length, 'big')).format(s.bytes);
      case 'masked':
        return this.maskedText(s);
    }
  }

  private maskedText(s: Extract<Sym, { k: 'masked' }>): string {
    const { base, mask, xor } = s;
    const fmt = (b: Uint8Array): string => (base.dtype.size === b.length ? base.dtype.format(b) : hex(b));
    const allOnes = mask.every((b) => b === 0xff);
    const xorZero = xor.every((b) => b === 0);
    if (xorZero) return `${base.text} & ${fmt(mask)}`;
    if (mask.every((b, i) => (b ^ xor[i]!) === 0xff)) return `${base.text} | ${fmt(xor)}`;
    if (allOnes) return `${base.text} ^ ${fmt(xor)}`;
    throw new RenderError(`bitwise (x & ${hex(mask)}) ^ ${hex(xor)} has no nft syntax`);
  }

  private dtypeOf(s: Sym): Datatype {
    if (s.k === 'field' || s.k === 'expr') return s.dtype;
    if (s.k === 'masked') return s.base.dtype;
    return integer(s.bytes.length, 'big');
  }

  private setRef(e: LookupExpr): { text: string; set: NftSet | undefined } {
    if (e.inline) {
      const elements = e.inline.elements ?? [];
      if (!elements.length) throw new RenderError(`anonymous set ${e.set} has no elements`);
      return { text: elementsText(e.inline, sortedElements(e.inline, elements)), set: e.inline };
    }
    return { text: `@${e.set}`, set: this.ctx.findSet?.(e.set) };
  }

  private keyText(e: { sreg: number }, set: NftSet | undefined, what: string): string {
    if (set) {
      const len = set.key.reduce((s, t) => s + (set.key.length > 1 ? words(t.size) * 4 : t.size), 0);
      const parts = set.key.length > 1 ? this.getConcat(e.sreg, len, what) : [this.get(e.sreg, what)];
      return parts.map((p, i) => this.symText(p, set.key[i])).join(' . ');
    }
    this.get(e.sreg, what);
    return this.loadedRun(e.sreg)
      .map((p) => this.symText(p))
      .join(' . ');
  }

  expr(e: Expr, next: Expr | undefined): boolean {
    switch (e.type) {
      case 'payload': {
        if (e.dreg === undefined) throw new RenderError('payload writes (mangling) are not supported by the renderer');
        // icmp fields need their network protocol known: nft adds `meta nfproto` for them in inet,
        // so naming one without it would load back as a different rule.
        const l4 = e.base === 'transport' && this.l4 && (L3_OF_L4[this.l4] === undefined || L3_OF_L4[this.l4] === this.l3) ? this.l4 : undefined;
        const named = payloadField(e.base, e.offset, e.len, this.l3, l4);
        const prefixOf = named ? undefined : payloadPrefixField(e.base, e.offset, e.len, this.l3);
        const f = named ?? prefixOf ?? rawPayload(e.base, e.offset, e.len);
        // A raw offset (`@th,0,16`) implies no protocol: nft keeps the match in front of it.
        if (e.base === 'transport' && l4 && named) {
          this.consumeL4(l4);
          // `icmp type` implies ipv4 as well: nft lists it without its `meta nfproto ipv4`.
          if (L3_OF_L4[l4] !== undefined && L3_OF_L4[l4] === this.l3Dep?.dep?.proto) this.consumeL3();
        }
        if (e.base === 'network' && this.ctx.family === 'inet' && (named || prefixOf)) this.consumeL3();
        const sym: Sym = { k: 'field', text: f.text, dtype: f.dtype, len: e.len, payload: l4 ? { base: e.base, offset: e.offset, l4 } : { base: e.base, offset: e.offset } };
        if (prefixOf) sym.prefixBytes = e.len;
        this.put(e.dreg, sym);
        return false;
      }
      case 'meta': {
        if (e.sreg !== undefined) {
          const f = metaField(e.key);
          if (!f) throw new RenderError(`meta ${e.key} cannot be set`);
          this.emit(`${f.text.startsWith('meta ') ? f.text : `meta ${f.text}`} set ${this.symText(this.get(e.sreg, 'meta set'), f.dtype)}`);
          return false;
        }
        const f = metaField(e.key);
        if (!f) throw new RenderError(`meta ${e.key} is not supported by the renderer`);
        this.put(e.dreg!, { k: 'field', text: f.text, dtype: f.dtype, len: f.dtype.size });
        return false;
      }
      case 'ct': {
        const f = ctField(e.key, e.dir, this.l3 ?? defaultL3(this.ctx.family));
        if (!f) throw new RenderError(`ct ${e.key} is not supported by the renderer`);
        if (e.sreg !== undefined) {
          this.emit(`${f.text} set ${this.symText(this.get(e.sreg, 'ct set'), f.dtype)}`);
          return false;
        }
        this.put(e.dreg!, { k: 'field', text: f.text, dtype: f.dtype, len: f.dtype.size });
        return false;
      }
      case 'fib': {
        const flags = e.flags.filter((f) => f !== 'present');
        const dtype = e.result === 'type' ? fib_addrtype : e.result === 'oifname' ? ifname : integer(4, 'host');
        this.put(e.dreg, { k: 'field', text: `fib ${flags.join(' . ')} ${e.result}`, dtype, len: dtype.size });
        return false;
      }
      case 'numgen': {
        const text = `numgen ${e.mode} mod ${e.modulus}${e.offset ? ` offset ${e.offset}` : ''}`;
        this.put(e.dreg, { k: 'field', text, dtype: integer(4, 'host'), len: 4 });
        return false;
      }
      case 'byteorder': {
        // nft converts host-order keys to network order before an interval lookup; the value is the same.
        this.put(e.dreg, this.get(e.sreg, 'byteorder'));
        return false;
      }
      case 'immediate': {
        if (e.verdict) this.emit(renderVerdict(e.verdict));
        else this.put(e.dreg, { k: 'imm', bytes: e.data });
        return false;
      }
      case 'bitwise': {
        const src = this.get(e.sreg, 'bitwise');
        if (src.k !== 'field') throw new RenderError('bitwise on a computed value is not supported by the renderer');
        this.put(e.dreg, { k: 'masked', base: src, mask: e.mask, xor: e.xor, len: e.len });
        return false;
      }
      case 'cmp':
        return this.cmp(e, next);
      case 'range': {
        const s = this.get(e.sreg, 'range');
        const t = this.dtypeOf(s);
        this.emit(`${this.symText(s)} ${e.op === 'neq' ? '!= ' : ''}${t.format(e.from)}-${t.format(e.to)}`);
        return false;
      }
      case 'lookup': {
        const ref = this.setRef(e);
        const key = this.keyText(e, ref.set, `lookup in ${e.set}`);
        if (e.dreg === undefined) {
          this.emit(`${key} ${e.invert ? '!= ' : ''}${ref.text}`);
        } else if (e.dreg === 0) {
          this.emit(`${key} vmap ${ref.text}`);
        } else {
          const data = ref.set?.data;
          const parts = Array.isArray(data) ? data : [integer(4, 'host')];
          const len = parts.length > 1 ? parts.reduce((s, t) => s + words(t.size) * 4, 0) : parts[0]!.size;
          this.put(e.dreg, { k: 'expr', text: `${key} map ${ref.text}`, dtype: parts[0]!, len, parts });
        }
        return false;
      }
      case 'counter':
        this.emit(`counter packets ${e.packets ?? 0n} bytes ${e.bytes ?? 0n}`);
        return false;
      case 'objref': {
        const objectType = e.objectType ?? ('set' in e ? this.ctx.findSet?.(e.set)?.objects : undefined);
        if (objectType === undefined) throw new RenderError(`objref ${'name' in e ? `"${e.name}"` : `map @${e.set}`} names an object of a type nftlink does not know`);
        const keyword = OBJREF_KEYWORDS[objectType];
        if ('name' in e) this.emit(`${keyword} ${quoteString(e.name)}`);
        else this.emit(`${keyword} ${this.keyText(e, this.ctx.findSet?.(e.set), `objref map ${e.set}`)} map @${e.set}`);
        return false;
      }
      case 'flow':
        this.emit(`flow add @${e.flowtable}`);
        return false;
      case 'nat':
        this.nat(e);
        return false;
      case 'masq': {
        let s = 'masquerade';
        if (e.regProtoMin !== undefined) s += ` to :${this.portText(e.regProtoMin, e.regProtoMax)}`;
        s += natFlagsText(e.flags ?? 0);
        this.emit(s);
        return false;
      }
      case 'reject':
        this.reject(e.reject, e.code);
        return false;
      case 'dynset': {
        const set = this.ctx.findSet?.(e.set);
        let body = this.keyText({ sreg: e.sregKey }, set, `dynset ${e.set}`);
        if (e.timeout !== undefined) body += ` timeout ${formatTime(Number(e.timeout))}`;
        for (const n of e.exprs ?? []) {
          const sub = new RuleRenderer(this.ctx);
          sub.expr(n as Expr, undefined);
          if (!sub.loadable) this.loadable = false;
          body += ` ${sub.text()}`;
        }
        if (e.sregData !== undefined) {
          const data = set?.data;
          const dtypes = Array.isArray(data) ? data : undefined;
          const parts = dtypes && dtypes.length > 1 ? this.getConcat(e.sregData, dtypes.reduce((s, t) => s + words(t.size) * 4, 0), 'dynset data') : [this.get(e.sregData, 'dynset data')];
          body += ` : ${parts.map((p, i) => this.symText(p, dtypes?.[i])).join(' . ')}`;
        }
        this.emit(`${e.op} @${e.set} { ${body} }`);
        return false;
      }
      case 'limit': {
        const unit = UNIT_NAMES[Number(e.unit)] ?? 'second';
        const over = e.over ? 'over ' : '';
        if (e.mode === 'bytes') this.emit(`limit rate ${over}${e.rate} bytes/${unit}${e.burst ? ` burst ${e.burst} bytes` : ''}`);
        else this.emit(`limit rate ${over}${e.rate}/${unit}${e.burst ? ` burst ${e.burst} packets` : ''}`);
        return false;
      }
      case 'log': {
        let s = 'log';
        if (e.prefix !== undefined) s += ` prefix ${quoteString(e.prefix)}`;
        if (e.group !== undefined) {
          s += ` group ${e.group}`;
          if (e.snaplen) s += ` snaplen ${e.snaplen}`;
          if (e.qthreshold) s += ` queue-threshold ${e.qthreshold}`;
        } else if (e.level !== undefined) {
          s += ` level ${LEVEL_NAMES[e.level] ?? 'warn'}`;
        }
        if (e.flags) s += logFlagsText(e.flags);
        this.emit(s);
        return false;
      }
      case 'rt':
        this.put(e.dreg, rtSym(e));
        return false;
      case 'socket':
        this.put(e.dreg, socketSym(e));
        return false;
      case 'hash':
        this.put(e.dreg, { k: 'field', text: this.hashText(e), dtype: integer(4, 'host'), len: 4 });
        return false;
      case 'unknown': {
        const s = rawStatement(e, this.rawContext);
        if (!s.loadable) this.loadable = false;
        // What an expression nftlink knows nothing of left in the registers is unknown: a later
        // read of them fails, and the rule is listed raw.
        if (!s.known) this.regs.clear();
        this.emit(s.text);
        return false;
      }
    }
  }

  private hashText(e: HashExpr): string {
    let s: string;
    if (e.mode === 'symhash') s = 'symhash';
    else {
      const parts = e.len > 4 ? this.getConcat(e.sreg, e.len, 'jhash') : [this.get(e.sreg, 'jhash')];
      s = `jhash ${parts.map((p) => this.symText(p)).join(' . ')}`;
    }
    s += ` mod ${e.modulus}`;
    if (e.mode === 'jhash' && e.seed !== undefined) s += ` seed 0x${e.seed.toString(16)}`;
    if (e.offset) s += ` offset ${e.offset}`;
    return s;
  }

  private cmp(e: Extract<Expr, { type: 'cmp' }>, next: Expr | undefined): boolean {
    const s = this.get(e.sreg, 'cmp');
    // nft writes `a-b` on a field as two comparisons (>= a, <= b) and lists them as one range.
    if (e.op === 'gte' && next?.type === 'cmp' && next.op === 'lte' && next.sreg === e.sreg && s.k === 'field') {
      this.emit(`${s.text} ${s.dtype.format(e.data)}-${s.dtype.format(next.data)}`);
      return true;
    }
    const opText = { eq: '', neq: '!= ', lt: '< ', lte: '<= ', gt: '> ', gte: '>= ' }[e.op];
    if (s.k === 'masked') {
      const { base, mask } = s;
      const zero = e.data.every((b) => b === 0);
      const isAddr = base.dtype === ipv4_addr || base.dtype === ipv6_addr;
      const prefix = maskPrefixLength(mask);
      if (isAddr && prefix >= 0 && (e.op === 'eq' || e.op === 'neq') && s.xor.every((b) => b === 0)) {
        this.emit(`${base.text} ${opText}${base.dtype.format(e.data)}/${prefix}`);
        return false;
      }
      const flagType = base.dtype.name === 'ct_state' || base.dtype.name === 'ct_status' || base.dtype.name === 'tcp_flag';
      if (flagType && zero && e.op === 'neq') {
        this.emit(`${base.text} ${base.dtype.format(mask)}`);
        return false;
      }
      // `tcp flags syn / syn,ack`: (flags & mask) == value, as nft 1.0.6 lists it.
      if (flagType && e.op === 'eq' && s.xor.every((b) => b === 0) && e.data.length === base.dtype.size) {
        this.emit(`${base.text} ${base.dtype.format(e.data)} / ${base.dtype.format(mask)}`);
        return false;
      }
      const bits = base.payload ? payloadBitField(base.payload.base, base.payload.offset, base.len, mask, this.l3) : undefined;
      if (bits && s.xor.every((b) => b === 0) && (e.op === 'eq' || e.op === 'neq')) {
        if (this.ctx.family === 'inet') this.consumeL3();
        const value = Number(bytesToUint(e.data, 'big') >> BigInt(bits.shift));
        this.emit(`${bits.text} ${opText}${bits.dtype.format(Uint8Array.of(value))}`);
        return false;
      }
      const fmt = (b: Uint8Array): string => (base.dtype.size === b.length ? base.dtype.format(b) : hex(b));
      this.emit(`${this.maskedText(s)} ${e.op === 'eq' ? '==' : opText.trim()} ${fmt(e.data)}`);
      return false;
    }
    if (s.k === 'field' && s.prefixBytes !== undefined && (e.op === 'eq' || e.op === 'neq')) {
      this.emit(`${s.text} ${opText}${s.dtype.format(padTo(e.data, s.dtype.size))}/${s.prefixBytes * 8}`);
      return false;
    }
    const dtype = this.dtypeOf(s);
    // An interface name compared on fewer bytes than IFNAMSIZ with no NUL among them is a wildcard.
    const wildcard = dtype === ifname && e.data.length < dtype.size && !e.data.includes(0);
    const value = wildcard
      ? JSON.stringify(`${new TextDecoder().decode(e.data)}*`)
      : dtype.size === e.data.length || dtype === ifname ? dtype.format(padTo(e.data, dtype.size)) : hex(e.data);
    const item = this.emit(`${this.symText(s)} ${opText}${value}`);
    // Remember protocol matches: a later field or statement of that protocol implies them.
    if (s.k === 'field' && e.op === 'eq') {
      if (s.text === 'meta l4proto' || s.text === 'ip protocol' || s.text === 'ip6 nexthdr') {
        const proto = L4_BY_PROTO[e.data[0]!];
        if (proto) {
          item.dep = { kind: 'l4', proto };
          this.l4 = proto;
          this.l4Dep = item;
        }
      } else if (s.text === 'meta nfproto' && this.ctx.family === 'inet') {
        const proto = e.data[0] === 2 ? 'ip' : e.data[0] === 10 ? 'ip6' : undefined;
        if (proto) {
          item.dep = { kind: 'l3', proto };
          this.l3 = proto;
          this.l3Dep = item;
        }
      }
    }
    return false;
  }

  private addrType(family: 'ip' | 'ip6'): Datatype {
    return family === 'ip6' ? ipv6_addr : ipv4_addr;
  }

  private portText(min: number, max: number | undefined): string {
    const lo = this.get(min, 'nat port');
    const loText = this.symText(lo, inet_service);
    if (max === undefined || max === min) return loText;
    const hi = this.get(max, 'nat port');
    const hiText = this.symText(hi, inet_service);
    return hiText === loText ? loText : `${loText}-${hiText}`;
  }

  private nat(e: Extract<Expr, { type: 'nat' }>): void {
    const famWord = this.ctx.family === 'inet' ? ` ${e.family}` : '';
    const flags = natFlagsText((e.flags ?? 0) & ~(NF_NAT_RANGE.MAP_IPS | NF_NAT_RANGE.PROTO_SPECIFIED));
    if (e.regAddrMin === undefined) {
      if (e.regProtoMin === undefined) {
        this.emit(`${e.nat}${flags}`);
        return;
      }
      this.emit(`${e.nat}${famWord} to :${this.portText(e.regProtoMin, e.regProtoMax)}${flags}`);
      return;
    }
    const addr = this.get(e.regAddrMin, 'nat address');
    const addrType = this.addrType(e.family);
    // addr . port from one map: `dnat ip addr . port to <key> map { ... }`.
    if (addr.k === 'expr' && addr.parts && addr.parts.length === 2 && e.regProtoMin !== undefined) {
      const expected = wordOf(e.regAddrMin) + words(addr.parts[0]!.size);
      if (wordOf(e.regProtoMin) === expected) {
        this.emit(`${e.nat} ${e.family} addr . port to ${addr.text}${flags}`);
        return;
      }
    }
    let addrText = this.symText(addr, addrType);
    if (e.regAddrMax !== undefined && e.regAddrMax !== e.regAddrMin) {
      addrText += `-${this.symText(this.get(e.regAddrMax, 'nat address'), addrType)}`;
    }
    if (e.regProtoMin !== undefined) {
      const port = this.portText(e.regProtoMin, e.regProtoMax);
      const a = e.family === 'ip6' && addr.k === 'imm' ? `[${addrText}]` : addrText;
      this.emit(`${e.nat}${famWord} to ${a}:${port}${flags}`);
      return;
    }
    this.emit(`${e.nat}${famWord} to ${addrText}${flags}`);
  }

  private reject(kind: 'icmp' | 'tcp-reset' | 'icmpx', code: number): void {
    if (kind === 'tcp-reset') {
      this.consumeL4('tcp');
      this.emit('reject with tcp reset');
      return;
    }
    if (kind === 'icmpx') {
      this.emit(`reject with icmpx ${nameOf(ICMPX_CODE, code)}`);
      return;
    }
    if (this.ctx.family === 'inet') this.consumeL3();
    if (this.l3 === 'ip6') this.emit(`reject with icmpv6 ${nameOf(ICMPV6_CODE, code)}`);
    else this.emit(`reject with icmp ${nameOf(ICMP_CODE, code)}`);
  }

  text(): string {
    return this.items
      .filter((i) => !i.dropped)
      .map((i) => i.text)
      .join(' ');
  }
}

function padTo(b: Uint8Array, size: number): Uint8Array {
  if (b.length >= size) return b;
  const out = new Uint8Array(size);
  out.set(b);
  return out;
}

function nameOf(table: Record<string, number>, code: number): string {
  const name = Object.entries(table).find(([, v]) => v === code)?.[0];
  return name ?? String(code);
}

const UNIT_NAMES: Record<number, string> = { 1: 'second', 60: 'minute', 3600: 'hour', 86400: 'day', 604800: 'week' };
const LEVEL_NAMES = Object.fromEntries(Object.entries(LOG_LEVEL).map(([k, v]) => [v, k])) as Record<number, string>;

function natFlagsText(flags: number): string {
  let s = '';
  if (flags & NF_NAT_RANGE.PROTO_RANDOM) s += ' random';
  if (flags & NF_NAT_RANGE.PROTO_RANDOM_FULLY) s += ' fully-random';
  if (flags & NF_NAT_RANGE.PERSISTENT) s += ' persistent';
  return s;
}

function logFlagsText(flags: number): string {
  const all = NF_LOG_FLAGS.tcpseq | NF_LOG_FLAGS.tcpopt | NF_LOG_FLAGS.ipopt | NF_LOG_FLAGS.uid | NF_LOG_FLAGS.macdecode;
  if ((flags & all) === all) return ' flags all';
  const parts: string[] = [];
  const tcp = [flags & NF_LOG_FLAGS.tcpseq ? 'sequence' : '', flags & NF_LOG_FLAGS.tcpopt ? 'options' : ''].filter(Boolean);
  if (tcp.length) parts.push(`tcp ${tcp.join(',')}`);
  if (flags & NF_LOG_FLAGS.ipopt) parts.push('ip options');
  if (flags & NF_LOG_FLAGS.uid) parts.push('skuid');
  if (flags & NF_LOG_FLAGS.macdecode) parts.push('ether');
  return parts.map((p) => ` flags ${p}`).join('');
}

export interface RenderedRule {
  /** The statements as nft text, or, when they have none, each expression raw (`[ name ... ]`). */
  text: string;
  /**
   * Whether `nft -f` reads `text` back into the same rule. False for a rule holding an expression
   * nft cannot load (iptables-nft's xt match and target) or one the renderer cannot write as nft
   * text: its text is for reading, and the ruleset renderer lists it as a comment.
   */
  loadable: boolean;
}

/**
 * Renders a rule's statements (no `add rule` prefix, no comment). Never throws: a rule someone else
 * wrote, with expressions nftlink has no text for, comes back raw and not loadable.
 */
export function renderRule(exprs: readonly Expr[], ctx: RuleRenderContext): RenderedRule {
  const r = new RuleRenderer(ctx);
  try {
    for (let i = 0; i < exprs.length; i++) {
      const skipNext = r.expr(exprs[i]!, exprs[i + 1]);
      if (skipNext) i++;
    }
    return { text: r.text(), loadable: r.loadable };
  } catch {
    // A shape nft's grammar has no text for (a payload write, a value read from a register nothing
    // loaded, a double quote in a log prefix): the expressions as they are.
    return { text: exprs.map(exprDebugText).join(' '), loadable: false };
  }
}

/** renderRule's text. */
export function renderRuleExprs(exprs: readonly Expr[], ctx: RuleRenderContext): string {
  return renderRule(exprs, ctx).text;
}

/** `rt classid`, `rt ip nexthop`, `rt ip6 nexthop`, `rt mtu`, `rt ipsec`. */
function rtSym(e: RtExpr): Sym {
  const [text, dtype]: [string, Datatype] =
    e.key === 'classid'
      ? ['rt classid', integer(4, 'host')]
      : e.key === 'nexthop4'
        ? ['rt ip nexthop', ipv4_addr]
        : e.key === 'nexthop6'
          ? ['rt ip6 nexthop', ipv6_addr]
          : e.key === 'tcpmss'
            ? ['rt mtu', integer(2, 'host')]
            : ['rt ipsec', boolean];
  return { k: 'field', text, dtype, len: dtype.size };
}

/** `socket transparent`, `socket mark`, `socket wildcard`, `socket cgroupv2 level N`. */
function socketSym(e: SocketExpr): Sym {
  const [text, dtype]: [string, Datatype] =
    e.key === 'mark'
      ? ['socket mark', mark]
      : e.key === 'cgroupv2'
        ? [`socket cgroupv2 level ${e.level ?? 0}`, integer(8, 'host')]
        : [`socket ${e.key}`, integer(1, 'host')];
  return { k: 'field', text, dtype, len: dtype.size };
}
