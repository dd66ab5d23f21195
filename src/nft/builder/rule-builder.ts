// A fluent builder that writes rules the way nft compiles the same text: the same protocol
// dependencies, register choices and comparison shapes. So the rendered text, fed to `nft -f`,
// produces the same kernel bytecode, and `nft list ruleset` prints both the same.

import type { Expr } from '../expr/index.js';
import { ICMP_CODE, ICMPV6_CODE, ICMPX_CODE, NF_NAT_RANGE, NFT_REG, type CmpOp, type Family } from '../netlink/constants.js';
import type { NftObjectType } from '../named-objects.js';
import type { NftSet, Rule, SetElement } from '../objects.js';
import { maskBytes, parsePrefix, prefixMask } from '../types/address.js';
import { bytesToUint, ifname, inet_service, ipv4_addr, ipv6_addr, nf_proto, inet_proto, paddedSize, type Scalar } from '../types/datatypes.js';
import type { Verdict } from '../types/verdict.js';
import { codeOf } from '../validate.js';
import { meta, type Dependency, type Field, type L4Protocol } from './fields.js';
import { kindOf } from '../input-shape.js';
import { checkBuilderOptions, checkCmpOp, checkField, checkFieldList, checkInteger, checkMatchValue, checkString } from './arguments.js';
import { shared } from './shared-exprs.js';

const REG1 = NFT_REG.R1;
const REG2 = NFT_REG.R2;

/** Register for the i-th 32-bit word of a concatenation starting at NFT_REG_1 (as nft allocates). */
function concatReg(wordOffset: number): number {
  return wordOffset === 0 ? REG1 : NFT_REG.R32_00 + wordOffset;
}

export type MatchValue = Scalar | readonly Scalar[];

export interface NatTarget {
  /** Address family of the translation (the table's, or ip/ip6 in an inet table). */
  family: 'ip' | 'ip6';
  addr?: string;
  /** Upper end of an address range. */
  addrTo?: string;
  port?: number;
  portTo?: number;
  flags?: readonly ('random' | 'fully-random' | 'persistent')[];
}

export interface NatMapTarget {
  family: 'ip' | 'ip6';
  /** The key that selects the endpoint (for example numgen random mod N). */
  key: Field | readonly Field[];
  /** A named map (`@name`, data `addr . port`), or inline elements `key : [addr, port]`. */
  map: { name: string; set?: NftSet } | { elements: readonly SetElement[]; name?: string };
  flags?: readonly ('random' | 'fully-random' | 'persistent')[];
}

const NAT_FLAGS = ['random', 'fully-random', 'persistent'] as const;

function natFlags(flags: NatTarget['flags'] | undefined): number {
  let f = 0;
  if (flags === undefined) return f;
  for (const x of flags) {
    if (!NAT_FLAGS.includes(x)) throw new TypeError(`nat flag ${kindOf(x)} is not one of: ${NAT_FLAGS.join(', ')}`);
    if (x === 'random') f |= NF_NAT_RANGE.PROTO_RANDOM;
    if (x === 'fully-random') f |= NF_NAT_RANGE.PROTO_RANDOM_FULLY;
    if (x === 'persistent') f |= NF_NAT_RANGE.PERSISTENT;
  }
  return f;
}

const NAT_TARGET = { family: 'string', addr: 'string', addrTo: 'string', port: 'number', portTo: 'number', flags: 'array' } as const;
const LIMIT_UNITS: Record<string, bigint> = { second: 1n, minute: 60n, hour: 3600n, day: 86400n, week: 604800n };

/** `1000-2000`: a range match (one module-wide object: a literal in match() is a new RegExp per call). */
const RANGE_SYNTAX = /^[^-:]+-[^-]+$/;

export class RuleBuilder {
  private readonly exprs: Expr[] = [];
  private l3: 'ip' | 'ip6' | undefined;
  private l4: L4Protocol | undefined;
  private tagText: string | undefined;

  constructor(readonly family: Family) {
    this.l3 = family === 'ip' ? 'ip' : family === 'ip6' ? 'ip6' : undefined;
  }

  /** Adds the protocol match nft would put before this field, once per rule. */
  private depend(dep: Dependency | undefined, what: string): void {
    if (!dep) return;
    if ('l3' in dep) {
      if (this.l3 === dep.l3) return;
      if (this.family !== 'inet') throw new RangeError(`${what}: a ${dep.l3} field in a ${this.family} table`);
      this.exprs.push(meta.nfproto.load(REG1), { type: 'cmp', sreg: REG1, op: 'eq', data: nf_proto.parse(dep.l3 === 'ip' ? 'ipv4' : 'ipv6') });
      this.l3 = dep.l3;
      return;
    }
    if (this.l4 === dep.l4) return;
    if (this.l4 !== undefined) throw new RangeError(`${what}: the rule already matches ${this.l4}`);
    // icmp is ipv4's and icmpv6 ipv6's: in an inet table nft matches the family first.
    if (dep.l4 === 'icmp' || dep.l4 === 'icmpv6') this.depend({ l3: dep.l4 === 'icmp' ? 'ip' : 'ip6' }, what);
    this.exprs.push(meta.l4proto.load(REG1), { type: 'cmp', sreg: REG1, op: 'eq', data: inet_proto.parse(dep.l4 === 'icmpv6' ? 'ipv6-icmp' : dep.l4) });
    this.l4 = dep.l4;
  }

  /**
   * Loads fields into registers as nft does: one into NFT_REG_1, a concatenation word by word.
   * A single field is taken as itself, not wrapped in an array for each match of each rule.
   */
  private loadKey(fields: Field | readonly Field[]): void {
    if (!Array.isArray(fields)) {
      const f = fields as Field;
      this.depend(f.dependency, f.text);
      this.exprs.push(f.load(REG1));
      return;
    }
    for (const f of fields as readonly Field[]) this.depend(f.dependency, f.text);
    let word = 0;
    for (const f of fields) {
      this.exprs.push(f.load(fields.length === 1 ? REG1 : concatReg(word)));
      word += paddedSize(f.dtype) / 4;
    }
  }

  /** Notes a protocol match written explicitly (`meta l4proto tcp`), so fields of it add no second one. */
  private noteExplicit(field: Field, value: Scalar): void {
    if (field === meta.l4proto && (value === 'tcp' || value === 'udp' || value === 'sctp' || value === 'icmp')) this.l4 = value;
    if (field === meta.l4proto && value === 'ipv6-icmp') this.l4 = 'icmpv6';
    if (field === meta.nfproto && (value === 'ipv4' || value === 'ipv6')) this.l3 = value === 'ipv4' ? 'ip' : 'ip6';
  }

  /**
   * `field value`, `field != value`, `field < value`...: a prefix ("198.18.0.0/15") becomes a mask and
   * compare, a range ("1000-2000") two compares, a list an anonymous set, flag lists (ct state) a mask test.
   *
   * Small on purpose, with each special form in a function of its own: V8 optimises a function
   * after it has run a number of bytecodes that grows with its size (Node 20: 3 + size/150
   * budgets of 66 KiB). As one 1.5 KB function, match() ran unoptimised for the first 4,000 of a
   * 10k-service load's rules; the plain `meta l4proto tcp` they all take is a few lines.
   */
  match(field: Field, value: MatchValue, op: CmpOp = 'eq'): this {
    checkField('match', field);
    checkMatchValue(field, value);
    checkCmpOp(field, op);
    if (field.bits) return this.matchBits(field, value, op);
    if (Array.isArray(value)) return this.matchList(field, value as Scalar[], op);
    if (typeof value === 'string' && this.matchText(field, value, op)) return this;
    const v = value as Scalar;
    const t = field.dtype;
    if ((t.name === 'ct_state' || t.name === 'ct_status' || t.name === 'tcp_flag') && op === 'eq') return this.matchFlags(field, v);
    this.loadKey(field);
    this.exprs.push({ type: 'cmp', sreg: REG1, op, data: t.parse(v) });
    this.noteExplicit(field, v);
    return this;
  }

  /** `ip dscp cs1`: the bits of the loaded bytes under the field's mask, compared shifted into place. */
  private matchBits(field: Field, value: MatchValue, op: CmpOp): this {
    const bits = field.bits!;
    if (Array.isArray(value) || (op !== 'eq' && op !== 'neq')) throw new RangeError(`${field.text}: matches one value with == or != only`);
    const code = bytesToUint(field.dtype.parse(value as Scalar), 'big') << BigInt(bits.shift);
    const data = new Uint8Array(bits.mask.length);
    for (let i = 0; i < data.length; i++) data[i] = Number((code >> BigInt(8 * (data.length - 1 - i))) & 0xffn);
    this.loadKey(field);
    this.exprs.push(
      { type: 'bitwise', sreg: REG1, dreg: REG1, len: bits.mask.length, mask: bits.mask, xor: new Uint8Array(bits.mask.length) },
      { type: 'cmp', sreg: REG1, op, data },
    );
    return this;
  }

  /** `field { a, b }` (or `!=`): an anonymous set. */
  private matchList(field: Field, values: readonly Scalar[], op: CmpOp): this {
    if (op !== 'eq' && op !== 'neq') throw new RangeError(`${field.text}: a set can only be matched with == or !=`);
    return this.lookupElements([field], values.map((v) => ({ key: [v] })), op === 'neq');
  }

  /**
   * The forms written inside a string: a prefix, a range, an interface-name wildcard. Adds their
   * expressions and returns true, or returns false for a plain value.
   */
  private matchText(field: Field, v: string, op: CmpOp): boolean {
    const t = field.dtype;
    if ((t === ipv4_addr || t === ipv6_addr) && v.includes('/')) {
      this.matchPrefix(field, v, op);
      return true;
    }
    if ((t.name === 'inet_service' || t.name === 'integer' || t === ipv4_addr || t.name === 'mark') && RANGE_SYNTAX.test(v)) {
      const dash = v.indexOf('-');
      const from = t.parse(v.slice(0, dash));
      const to = t.parse(v.slice(dash + 1));
      this.loadKey(field);
      if (op === 'neq') this.exprs.push({ type: 'range', sreg: REG1, op: 'neq', from, to });
      else if (op === 'eq') this.exprs.push({ type: 'cmp', sreg: REG1, op: 'gte', data: from }, { type: 'cmp', sreg: REG1, op: 'lte', data: to });
      else throw new RangeError(`${field.text}: a range can only be matched with == or !=`);
      return true;
    }
    if (t === ifname && v.endsWith('*')) {
      // `iifname "veth*"`: nft compares only the bytes before the '*' (no NUL after them).
      if (op !== 'eq' && op !== 'neq') throw new RangeError(`${field.text}: a wildcard can only be matched with == or !=`);
      const stem = new TextEncoder().encode(v.slice(0, -1));
      if (stem.length === 0 || stem.length > 15) throw new RangeError(`${field.text}: "${v}" needs 1 to 15 bytes before the '*'`);
      this.loadKey(field);
      this.exprs.push({ type: 'cmp', sreg: REG1, op, data: stem });
      return true;
    }
    return false;
  }

  /** `ip saddr 198.18.0.0/15`: the masked bytes, or only the prefix's bytes when it is byte-aligned. */
  private matchPrefix(field: Field, v: string, op: CmpOp): void {
    const t = field.dtype;
    const p = parsePrefix(v, t === ipv4_addr ? 4 : 6);
    if (!p) throw new RangeError(`${field.text}: "${v}" is not a prefix`);
    if (op !== 'eq' && op !== 'neq') throw new RangeError(`${field.text}: a prefix can only be matched with == or !=`);
    if (p.length % 8 === 0 && p.length < t.size * 8 && field.payload && p.length > 0) {
      // A byte-aligned prefix: nft loads just those bytes and compares them.
      this.depend(field.dependency, field.text);
      const len = p.length / 8;
      this.exprs.push({ type: 'payload', base: field.payload.base, offset: field.payload.offset, len, dreg: REG1 });
      this.exprs.push({ type: 'cmp', sreg: REG1, op, data: p.bytes.slice(0, len) });
      return;
    }
    this.loadKey(field);
    if (p.length < t.size * 8) {
      this.exprs.push({ type: 'bitwise', sreg: REG1, dreg: REG1, len: t.size, mask: prefixMask(t.size, p.length), xor: new Uint8Array(t.size) });
    }
    this.exprs.push({ type: 'cmp', sreg: REG1, op, data: maskBytes(p.bytes, p.length) });
  }

  /** `ct state established,related`: nft tests flag types with a mask, (state & bits) != 0. */
  private matchFlags(field: Field, v: Scalar): this {
    const t = field.dtype;
    this.loadKey(field);
    this.exprs.push(
      { type: 'bitwise', sreg: REG1, dreg: REG1, len: t.size, mask: t.parse(v), xor: new Uint8Array(t.size) },
      { type: 'cmp', sreg: REG1, op: 'neq', data: new Uint8Array(t.size) },
    );
    return this;
  }

  /** `field & mask == value` (or !=): `meta mark & 0x4000 == 0`. */
  matchMasked(field: Field, mask: Scalar, value: Scalar, op: 'eq' | 'neq' = 'eq'): this {
    checkField('matchMasked', field);
    checkMatchValue(field, mask);
    checkMatchValue(field, value);
    if (op !== 'eq' && op !== 'neq') throw new TypeError(`${field.text}: a masked match compares with eq or neq, not ${kindOf(op)}`);
    this.loadKey(field);
    const t = field.dtype;
    this.exprs.push(
      { type: 'bitwise', sreg: REG1, dreg: REG1, len: t.size, mask: t.parse(mask), xor: new Uint8Array(t.size) },
      { type: 'cmp', sreg: REG1, op, data: t.parse(value) },
    );
    return this;
  }

  /** `fields @set` (or `!= @set`). */
  inSet(fields: Field | readonly Field[], set: string, invert = false): this {
    checkFieldList('inSet', fields);
    checkString('inSet', 'the set name', set);
    const list = Array.isArray(fields) ? (fields as Field[]) : [fields as Field];
    this.loadKey(list);
    this.exprs.push(invert ? { type: 'lookup', set, sreg: REG1, invert: true } : { type: 'lookup', set, sreg: REG1 });
    return this;
  }

  /** Interval sets hold host-order values in network order: convert the key first, as nft does. */
  private toNetworkOrder(fields: readonly Field[], elements: readonly SetElement[]): void {
    const t = fields[0]!.dtype;
    if (fields.length !== 1 || t.byteorder !== 'host' || t.size < 2) return;
    if (!elements.some((e) => e.keyEnd !== undefined || (typeof e.key[0] === 'string' && /^[^-]+-/.test(e.key[0])))) return;
    this.exprs.push({ type: 'byteorder', sreg: REG1, dreg: REG1, op: 'hton', len: t.size, size: t.size });
  }

  /** `fields { elements }`: an anonymous set bound to this rule. */
  lookupElements(fields: readonly Field[], elements: readonly SetElement[], invert = false): this {
    checkFieldList('lookupElements', fields);
    if (!Array.isArray(elements) || elements.length === 0) throw new TypeError(`lookupElements(): the elements must be a non-empty array of { key: [...] }, not ${kindOf(elements)}`);
    this.loadKey(fields);
    this.toNetworkOrder(fields, elements);
    const inline: NftSet = { family: this.family, table: '', name: '__set%d', key: fields.map((f) => f.dtype), anonymous: true, elements };
    this.exprs.push(invert ? { type: 'lookup', set: inline.name, sreg: REG1, invert: true, inline } : { type: 'lookup', set: inline.name, sreg: REG1, inline });
    return this;
  }

  /** `fields vmap @map`, or `fields vmap { key : verdict, ... }` with elements. */
  vmap(fields: Field | readonly Field[], map: string | readonly SetElement[]): this {
    checkFieldList('vmap', fields);
    if (typeof map !== 'string' && !Array.isArray(map)) throw new TypeError(`vmap(): the map must be a map's name or an array of { key, value: verdict }, not ${kindOf(map)}`);
    const list = Array.isArray(fields) ? (fields as Field[]) : [fields as Field];
    this.loadKey(list);
    if (typeof map === 'string') {
      this.exprs.push({ type: 'lookup', set: map, sreg: REG1, dreg: NFT_REG.VERDICT });
    } else {
      this.toNetworkOrder(list, map);
      const inline: NftSet = { family: this.family, table: '', name: '__map%d', key: list.map((f) => f.dtype), data: 'verdict', anonymous: true, elements: map };
      this.exprs.push({ type: 'lookup', set: inline.name, sreg: REG1, dreg: NFT_REG.VERDICT, inline });
    }
    return this;
  }

  /**
   * `update @set { fields [timeout T] }` (or add): the packet path adds or refreshes the key; with
   * `data`, a map entry `key : data` (an existing entry keeps its data: update only slides its timeout).
   */
  dynset(op: 'add' | 'update' | 'delete', set: string, fields: Field | readonly Field[], opts: { timeoutMs?: number; data?: readonly Field[] } = {}): this {
    if (op !== 'add' && op !== 'update' && op !== 'delete') throw new TypeError(`dynset(): the operation must be add, update or delete, not ${kindOf(op)}`);
    checkString('dynset', 'the set name', set);
    checkFieldList('dynset', fields);
    checkBuilderOptions('dynset', opts, { timeoutMs: 'number', data: 'array' });
    if (opts.timeoutMs !== undefined) checkInteger('dynset', 'timeoutMs', opts.timeoutMs, 0, Number.MAX_SAFE_INTEGER);
    if (opts.data !== undefined) checkFieldList('dynset', opts.data);
    const list = Array.isArray(fields) ? (fields as Field[]) : [fields as Field];
    this.loadKey(list);
    const e: Expr = { type: 'dynset', op, set, sregKey: REG1 };
    if (opts.data?.length) {
      // nft puts the data in the next 128-bit register after the key (netlink_gen_map_stmt).
      const keyWords = list.reduce((n, f) => n + paddedSize(f.dtype) / 4, 0);
      const first = 4 * Math.ceil(keyWords / 4);
      let word = first;
      for (const f of opts.data) {
        this.depend(f.dependency, f.text);
        this.exprs.push(f.load(word === first ? NFT_REG.R1 + first / 4 : concatReg(word)));
        word += paddedSize(f.dtype) / 4;
      }
      e.sregData = NFT_REG.R1 + first / 4;
    }
    if (opts.timeoutMs !== undefined) e.timeout = BigInt(opts.timeoutMs);
    this.exprs.push(e);
    return this;
  }

  /** `meta mark set meta mark | bits` (or a plain value). */
  setMark(value: { or: number } | { and: number } | { xor: number } | number): this {
    if (typeof value !== 'number') {
      checkBuilderOptions('setMark', value, { or: 'number', and: 'number', xor: 'number' });
      if (Object.keys(value).length !== 1) throw new TypeError('setMark(): give a number, or exactly one of { or }, { and }, { xor }');
    }
    const t = meta.mark.dtype;
    if (typeof value === 'number') {
      this.exprs.push({ type: 'immediate', dreg: REG1, data: t.parse(value) }, { type: 'meta', key: 'mark', sreg: REG1 });
      return this;
    }
    let mask: number;
    let xor: number;
    if ('or' in value) [mask, xor] = [~value.or >>> 0, value.or >>> 0];
    else if ('and' in value) [mask, xor] = [value.and >>> 0, 0];
    else [mask, xor] = [0xffffffff, value.xor >>> 0];
    this.exprs.push(
      meta.mark.load(REG1),
      { type: 'bitwise', sreg: REG1, dreg: REG1, len: 4, mask: t.parse(mask), xor: t.parse(xor) },
      { type: 'meta', key: 'mark', sreg: REG1 },
    );
    return this;
  }

  counter(): this {
    this.exprs.push({ type: 'counter' });
    return this;
  }

  verdict(v: Verdict): this {
    this.exprs.push({ type: 'immediate', dreg: 0, verdict: v });
    return this;
  }
  accept(): this {
    return this.verdict({ kind: 'accept' });
  }
  drop(): this {
    return this.verdict({ kind: 'drop' });
  }
  return(): this {
    return this.verdict({ kind: 'return' });
  }
  continue(): this {
    return this.verdict({ kind: 'continue' });
  }
  jump(chain: string): this {
    checkString('jump', 'the chain name', chain);
    return this.verdict({ kind: 'jump', chain });
  }
  goto(chain: string): this {
    checkString('goto', 'the chain name', chain);
    return this.verdict({ kind: 'goto', chain });
  }

  private requireL4(what: string): void {
    if (!this.l4) throw new RangeError(`${what}: a port needs a transport protocol match first (meta l4proto tcp|udp|sctp); nft refuses it otherwise`);
  }

  /** `dnat to 198.18.1.1:80`, `snat to 198.18.0.1`, `dnat to :8080`. */
  nat(kind: 'snat' | 'dnat', to: NatTarget): this {
    checkBuilderOptions(kind, to, NAT_TARGET);
    if (to.family !== 'ip' && to.family !== 'ip6') throw new TypeError(`${kind}(): family must be ip or ip6, not ${kindOf(to.family)}`);
    const addrType = to.family === 'ip6' ? ipv6_addr : ipv4_addr;
    let flags = natFlags(to.flags);
    const e: Expr = { type: 'nat', nat: kind, family: to.family };
    // nft puts the address in NFT_REG_1 (and its upper end in REG_2), the port after them.
    let reg: number = REG1;
    if (to.addr !== undefined) {
      this.exprs.push({ type: 'immediate', dreg: reg, data: addrType.parse(to.addr) });
      e.regAddrMin = reg++;
      if (to.addrTo !== undefined) {
        this.exprs.push({ type: 'immediate', dreg: reg, data: addrType.parse(to.addrTo) });
        e.regAddrMax = reg++;
      } else {
        e.regAddrMax = e.regAddrMin;
      }
      flags |= NF_NAT_RANGE.MAP_IPS;
    }
    if (to.port !== undefined) {
      this.requireL4(`${kind} to port ${to.port}`);
      this.exprs.push({ type: 'immediate', dreg: reg, data: inet_service.parse(to.port) });
      e.regProtoMin = reg++;
      if (to.portTo !== undefined) {
        this.exprs.push({ type: 'immediate', dreg: reg, data: inet_service.parse(to.portTo) });
        e.regProtoMax = reg++;
      } else {
        e.regProtoMax = e.regProtoMin;
      }
      flags |= NF_NAT_RANGE.PROTO_SPECIFIED;
    }
    if (to.addr !== undefined && to.addrTo === undefined) delete e.regAddrMax;
    if (to.port !== undefined && to.portTo === undefined) delete e.regProtoMax;
    // nft 1.0.6 leaves MAP_IPS to the kernel and only sends PROTO_SPECIFIED and the user's flags.
    flags &= ~NF_NAT_RANGE.MAP_IPS;
    if (flags) e.flags = flags;
    this.exprs.push(e);
    return this;
  }

  dnat(to: NatTarget): this {
    return this.nat('dnat', to);
  }
  snat(to: NatTarget): this {
    return this.nat('snat', to);
  }

  /** `dnat ip addr . port to <key> map <map>`: one rule that picks an endpoint (kube-proxy's shape). */
  dnatMap(target: NatMapTarget): this {
    checkBuilderOptions('dnatMap', target, { family: 'string', key: 'any', map: 'object', flags: 'array' });
    if (target.family !== 'ip' && target.family !== 'ip6') throw new TypeError(`dnatMap(): family must be ip or ip6, not ${kindOf(target.family)}`);
    checkFieldList('dnatMap', target.key);
    this.requireL4('dnat to a map of addr . port');
    this.loadKey(target.key);
    const addrType = target.family === 'ip6' ? ipv6_addr : ipv4_addr;
    if ('elements' in target.map) {
      const keys = Array.isArray(target.key) ? (target.key as Field[]) : [target.key as Field];
      const inline: NftSet = {
        family: this.family,
        table: '',
        name: target.map.name ?? '__map%d',
        key: keys.map((k) => k.dtype),
        data: [addrType, inet_service],
        anonymous: true,
        elements: target.map.elements,
      };
      this.exprs.push({ type: 'lookup', set: inline.name, sreg: REG1, dreg: REG1, inline });
    } else {
      this.exprs.push({ type: 'lookup', set: target.map.name, sreg: REG1, dreg: REG1 });
    }
    const e: Expr = {
      type: 'nat',
      nat: 'dnat',
      family: target.family,
      regAddrMin: REG1,
      regProtoMin: concatReg(paddedSize(addrType) / 4),
    };
    const flags = natFlags(target.flags);
    if (flags) e.flags = flags;
    this.exprs.push(e);
    return this;
  }

  masquerade(opts: { flags?: readonly ('random' | 'fully-random' | 'persistent')[]; port?: number; portTo?: number } = {}): this {
    checkBuilderOptions('masquerade', opts, { flags: 'array', port: 'number', portTo: 'number' });
    const e: Expr = { type: 'masq' };
    const flags = natFlags(opts.flags);
    if (opts.port !== undefined) {
      this.requireL4('masquerade to a port');
      this.exprs.push({ type: 'immediate', dreg: REG1, data: inet_service.parse(opts.port) });
      e.regProtoMin = REG1;
      if (opts.portTo !== undefined) {
        this.exprs.push({ type: 'immediate', dreg: REG2, data: inet_service.parse(opts.portTo) });
        e.regProtoMax = REG2;
      }
    }
    if (flags) e.flags = flags;
    this.exprs.push(e);
    return this;
  }

  /**
   * `reject` (icmp port-unreachable; icmpx in inet), `reject with tcp reset`,
   * `reject with icmp|icmpv6|icmpx <code>`.
   */
  reject(how: { tcpReset: true } | { icmp: keyof typeof ICMP_CODE } | { icmpv6: keyof typeof ICMPV6_CODE } | { icmpx: keyof typeof ICMPX_CODE } = { icmpx: 'port-unreachable' }): this {
    checkBuilderOptions('reject', how, { tcpReset: 'boolean', icmp: 'string', icmpv6: 'string', icmpx: 'string' });
    if (Object.keys(how).length !== 1) throw new TypeError('reject(): give exactly one of { tcpReset: true }, { icmp }, { icmpv6 }, { icmpx }');
    if ('tcpReset' in how) {
      this.depend({ l4: 'tcp' }, 'reject with tcp reset');
      this.exprs.push({ type: 'reject', reject: 'tcp-reset', code: 0 });
    } else if ('icmp' in how) {
      this.depend({ l3: 'ip' }, 'reject with icmp');
      this.exprs.push({ type: 'reject', reject: 'icmp', code: codeOf(ICMP_CODE, how.icmp, 'reject with icmp') });
    } else if ('icmpv6' in how) {
      this.depend({ l3: 'ip6' }, 'reject with icmpv6');
      this.exprs.push({ type: 'reject', reject: 'icmp', code: codeOf(ICMPV6_CODE, how.icmpv6, 'reject with icmpv6') });
    } else if (this.family === 'inet' || this.family === 'bridge' || this.family === 'netdev') {
      this.exprs.push({ type: 'reject', reject: 'icmpx', code: codeOf(ICMPX_CODE, how.icmpx, 'reject with icmpx') });
    } else {
      // In ip and ip6 tables nft writes the family's own ICMP code for an icmpx name.
      // An icmpx name first: one that is none is told the names, not that it has no equivalent.
      codeOf(ICMPX_CODE, how.icmpx, 'reject with icmpx');
      const code = this.family === 'ip6' ? ICMPV6_CODE[how.icmpx as keyof typeof ICMPV6_CODE] : ICMP_CODE[how.icmpx as keyof typeof ICMP_CODE];
      if (code === undefined) throw new RangeError(`reject with icmpx ${how.icmpx} has no ${this.family} equivalent`);
      this.exprs.push({ type: 'reject', reject: 'icmp', code });
    }
    return this;
  }

  limit(rate: number, per: 'second' | 'minute' | 'hour' | 'day' | 'week', opts: { burst?: number; over?: boolean; bytes?: boolean } = {}): this {
    checkInteger('limit', 'the rate', rate, 1, Number.MAX_SAFE_INTEGER);
    const unit = LIMIT_UNITS[per];
    if (typeof unit !== 'bigint') throw new TypeError(`limit(): the period must be one of: ${Object.keys(LIMIT_UNITS).join(', ')}, not ${kindOf(per)}`);
    checkBuilderOptions('limit', opts, { burst: 'number', over: 'boolean', bytes: 'boolean' });
    if (opts.burst !== undefined) checkInteger('limit', 'burst', opts.burst, 0, 0xffffffff);
    const e: Expr = { type: 'limit', rate: BigInt(rate), unit, burst: opts.burst ?? (opts.bytes ? 0 : 5), mode: opts.bytes ? 'bytes' : 'packets' };
    if (opts.over) e.over = true;
    this.exprs.push(e);
    return this;
  }

  log(opts: { prefix?: string; level?: number; group?: number } = {}): this {
    checkBuilderOptions('log', opts, { prefix: 'string', level: 'number', group: 'number' });
    if (opts.level !== undefined) checkInteger('log', 'level', opts.level, 0, 8);
    if (opts.group !== undefined) checkInteger('log', 'group', opts.group, 0, 0xffff);
    const e: Expr = { type: 'log' };
    if (opts.prefix !== undefined) e.prefix = opts.prefix;
    if (opts.group !== undefined) e.group = opts.group;
    else if (opts.level !== undefined) e.level = opts.level;
    this.exprs.push(e);
    return this;
  }

  /**
   * Uses the named stateful object `name` of `type` (objects.ts: NftObject): `counter name "c"`,
   * `quota name "q"`, `limit name "l"`, `ct helper set "h"`, `ct timeout set "t"`, `ct
   * expectation set "e"`, `synproxy name "s"`, `meta secmark set "s"`.
   */
  object(type: NftObjectType, name: string): this {
    checkString('object', 'the object type', type);
    checkString('object', 'the object name', name);
    this.exprs.push({ type: 'objref', objectType: type, name });
    return this;
  }

  /**
   * Uses the object a map of named objects (NftSet.objects) holds for the key: `counter name ip
   * saddr map @m`, `ct helper set tcp dport map @helpers`.
   */
  objectFromMap(fields: Field | readonly Field[], map: string): this {
    checkFieldList('objectFromMap', fields);
    checkString('objectFromMap', 'the map name', map);
    const list = Array.isArray(fields) ? (fields as Field[]) : [fields as Field];
    this.loadKey(list);
    this.exprs.push({ type: 'objref', set: map, sreg: REG1 });
    return this;
  }

  /** `flow add @flowtable`: offloads the connection to the flowtable (forward chains). */
  flowOffload(flowtable: string): this {
    checkString('flowOffload', 'the flowtable name', flowtable);
    this.exprs.push({ type: 'flow', flowtable });
    return this;
  }

  /** Keeps the writer's own text with the rule (Rule.tag). */
  tag(text: string): this {
    this.tagText = text;
    return this;
  }

  /** Appends raw expressions (for compositions nft cannot write). */
  raw(...exprs: Expr[]): this {
    this.exprs.push(...exprs);
    return this;
  }

  build(): Expr[] {
    // slice(), not map(): once V8 optimises this, map() makes holey arrays, the first ones packed,
    // and every optimised function that reads rules then deopts on the new array map and is
    // compiled again (the encoder's rule(): three TurboFan compiles, 100 ms, in a 10k-rule load;
    // Node 20). Not push() either: an array grown by push reserves 17 slots, and a proxy keeps its
    // rules (152 bytes per rule instead of 56).
    const out = this.exprs.slice();
    for (let i = 0; i < out.length; i++) out[i] = shared(out[i]!);
    return out;
  }

  /** Builds a Rule for a chain. */
  rule(table: string, chain: string, comment?: string): Rule {
    const r: Rule = { family: this.family, table, chain, exprs: this.build() };
    if (comment !== undefined) r.comment = comment;
    if (this.tagText !== undefined) r.tag = this.tagText;
    return r;
  }
}

/** Starts a rule for a table of this family. */
export function rule(family: Family): RuleBuilder {
  return new RuleBuilder(family);
}
