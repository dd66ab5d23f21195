// The compact request format, written and read by a tiny encoder of the tests' own (the real one is
// src/nft/netlink/encode/wire-writer.ts), and the operations the addon's tests send (test/native/*.test.ts).
import { expect } from "vitest";

export type Attr = [id: number, value: Uint8Array];
export interface Expr {
  name: string;
  attrs: Attr[];
  exprs?: Expr[];
}
export interface Elem {
  attrs: Attr[];
  exprs?: Expr[];
}
export interface Op {
  msgType: number;
  kind: number;
  nlFlags?: number;
  family: number;
  attrs: Attr[];
  exprs?: Expr[];
  elems?: Elem[];
}

export class Writer {
  private buf = new ArrayBuffer(1024);
  private view = new DataView(this.buf);
  private bytes = new Uint8Array(this.buf);
  len = 0;
  private grow(n: number): void {
    if (this.len + n <= this.buf.byteLength) return;
    let size = this.buf.byteLength * 2;
    while (size < this.len + n) size *= 2;
    const next = new ArrayBuffer(size);
    new Uint8Array(next).set(this.bytes.subarray(0, this.len));
    this.buf = next;
    this.view = new DataView(next);
    this.bytes = new Uint8Array(next);
  }
  u8(v: number): void {
    this.grow(1);
    this.view.setUint8(this.len, v);
    this.len += 1;
  }
  u16(v: number): void {
    this.grow(2);
    this.view.setUint16(this.len, v, true);
    this.len += 2;
  }
  u32(v: number): void {
    this.grow(4);
    this.view.setUint32(this.len, v >>> 0, true);
    this.len += 4;
  }
  raw(b: Uint8Array): void {
    this.grow(b.length);
    this.bytes.set(b, this.len);
    this.len += b.length;
  }
  done(): Uint8Array {
    return this.bytes.slice(0, this.len);
  }
}

export const CHECK = 1;
export const GENID = 2;

export function writeAttrs(w: Writer, attrs: Attr[]): void {
  w.u16(attrs.length);
  for (const [id, v] of attrs) {
    w.u16(id);
    w.u32(v.length);
    w.raw(v);
  }
}
export function writeExprs(w: Writer, exprs: Expr[]): void {
  w.u16(exprs.length);
  for (const e of exprs) {
    const name = new TextEncoder().encode(e.name);
    w.u8(name.length);
    w.raw(name);
    writeAttrs(w, e.attrs);
    writeExprs(w, e.exprs ?? []);
  }
}
export function encode(ops: Op[], flags = 0, genid = 0): Uint8Array {
  const w = new Writer();
  w.u32(0x4c54464e);
  w.u16(1);
  w.u16(flags);
  w.u32(genid);
  w.u32(ops.length);
  for (const op of ops) {
    w.u8(op.msgType);
    w.u8(op.kind);
    w.u16(op.nlFlags ?? 0);
    w.u8(op.family);
    w.u8(0);
    w.u8(0);
    w.u8(0);
    writeAttrs(w, op.attrs);
    writeExprs(w, op.exprs ?? []);
    if (op.kind === 4) {
      const elems = op.elems ?? [];
      w.u32(elems.length);
      for (const e of elems) {
        writeAttrs(w, e.attrs);
        writeExprs(w, e.exprs ?? []);
      }
    }
  }
  return w.done();
}

export interface DExpr {
  name: string;
  attrs: Map<number, Uint8Array>;
  exprs: DExpr[];
}
export interface DElem {
  attrs: Map<number, Uint8Array>;
  exprs: DExpr[];
}
export interface DOp {
  msgType: number;
  kind: number;
  family: number;
  attrs: Map<number, Uint8Array>;
  exprs: DExpr[];
  elems: DElem[];
}
export function decode(buf: Uint8Array): { genid: number; ops: DOp[] } {
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let p = 0;
  const u8 = () => v.getUint8(p++);
  const u16 = () => ((p += 2), v.getUint16(p - 2, true));
  const u32 = () => ((p += 4), v.getUint32(p - 4, true));
  const attrs = () => {
    const m = new Map<number, Uint8Array>();
    for (let n = u16(); n > 0; n--) {
      const id = u16();
      const len = u32();
      m.set(id, buf.slice(p, p + len));
      p += len;
    }
    return m;
  };
  const exprs = (): DExpr[] => {
    const out: DExpr[] = [];
    for (let n = u16(); n > 0; n--) {
      const nl = u8();
      const name = new TextDecoder().decode(buf.subarray(p, p + nl));
      p += nl;
      const a = attrs();
      out.push({ name, attrs: a, exprs: exprs() });
    }
    return out;
  };
  expect(u32()).toBe(0x4c54464e);
  expect(u16()).toBe(1);
  expect(u16()).toBe(0);
  const genid = u32();
  const count = u32();
  const ops: DOp[] = [];
  for (let i = 0; i < count; i++) {
    const msgType = u8();
    const kind = u8();
    u16();
    const family = u8();
    p += 3;
    const a = attrs();
    const e = exprs();
    const elems: DElem[] = [];
    if (kind === 4) for (let n = u32(); n > 0; n--) elems.push({ attrs: attrs(), exprs: exprs() });
    ops.push({ msgType, kind, family, attrs: a, exprs: e, elems });
  }
  expect(p).toBe(buf.length);
  return { genid, ops };
}

// ---- value helpers ---------------------------------------------------------------------------------

export function must<T>(v: T | undefined): T {
  if (v === undefined) throw new Error("expected a value");
  return v;
}

export const u8v = (n: number) => Uint8Array.of(n);
export const u16v = (n: number) => {
  const b = new Uint8Array(2);
  new DataView(b.buffer).setUint16(0, n, true);
  return b;
};
export const u32v = (n: number) => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n >>> 0, true);
  return b;
};
export const str = (s: string) => new TextEncoder().encode(s + "\0");
export const cstr = (b: Uint8Array | undefined) => (b ? new TextDecoder().decode(b.subarray(0, b.indexOf(0))) : undefined);
export const leU32 = (b: Uint8Array | undefined) => (b ? new DataView(b.buffer, b.byteOffset).getUint32(0, true) : undefined);
export const hex = (b: Uint8Array | undefined) => (b ? Buffer.from(b).toString("hex") : undefined);
/** 198.18.0.0/15 (benchmarking range): the i-th address, big-endian. */
export const ip4 = (i: number) => Uint8Array.of(198, 18 + ((i >> 16) & 1), (i >> 8) & 0xff, i & 0xff);
export const ip4text = (i: number) => Array.from(ip4(i)).join(".");
/** 2001:db8::/32 (documentation range): the i-th address. */
export const ip6 = (i: number) => {
  const b = new Uint8Array(16);
  b.set([0x20, 0x01, 0x0d, 0xb8]);
  new DataView(b.buffer).setUint32(12, i);
  return b;
};

// libnftnl 1.2.4 ids and kernel constants used below
export const NFPROTO_IPV4 = 2;
export const NLM_F_EXCL = 0x200;
export const NLM_F_CREATE = 0x400;
export const T = { NAME: 0 };
export const C = { NAME: 0, TABLE: 2, HOOKNUM: 3, PRIO: 4, POLICY: 5, TYPE: 10 };
export const R = { TABLE: 1, CHAIN: 2 };
export const S = { TABLE: 0, NAME: 1, FLAGS: 2, KEY_TYPE: 3, KEY_LEN: 4, ID: 8 };
export const E = { KEY: 1 };
export const NF_ACCEPT = 1;
export const NFT_JUMP = -3;
export const ENOENT = 2;
export const EEXIST = 17;
export const EINVAL = 22;
export const ERESTART = 85;
export const TABLE = "nftlink_t";

export const tableOp = (name = TABLE, nlFlags = 0): Op => ({
  msgType: 0,
  kind: 0,
  family: NFPROTO_IPV4,
  nlFlags,
  attrs: [[T.NAME, str(name)]],
});
export const chainOp = (name: string, base = false, nlFlags = NLM_F_CREATE): Op => ({
  msgType: 3,
  kind: 1,
  family: NFPROTO_IPV4,
  nlFlags,
  attrs: [
    [C.TABLE, str(TABLE)],
    [C.NAME, str(name)],
    ...(base
      ? ([
          [C.TYPE, str("filter")],
          [C.HOOKNUM, u32v(1)], // NF_INET_LOCAL_IN
          [C.PRIO, u32v(0)],
          [C.POLICY, u32v(NF_ACCEPT)],
        ] as Attr[])
      : []),
  ],
});
export const setOp = (name: string, keyType: number, keyLen: number, id: number): Op => ({
  msgType: 9,
  kind: 3,
  family: NFPROTO_IPV4,
  nlFlags: NLM_F_CREATE,
  attrs: [
    [S.TABLE, str(TABLE)],
    [S.NAME, str(name)],
    [S.FLAGS, u32v(0)],
    [S.KEY_TYPE, u32v(keyType)],
    [S.KEY_LEN, u32v(keyLen)],
    [S.ID, u32v(id)],
  ],
});
export const elemsOp = (set: string, keys: Uint8Array[], msgType = 12): Op => ({
  msgType,
  kind: 4,
  family: NFPROTO_IPV4,
  nlFlags: NLM_F_CREATE,
  attrs: [
    [S.TABLE, str(TABLE)],
    [S.NAME, str(set)],
  ],
  elems: keys.map((k) => ({ attrs: [[E.KEY, k]] })),
});
// ip saddr: payload network header (base 1) offset 12 len 4 into reg 1
export const saddr: Expr = {
  name: "payload",
  attrs: [
    [1, u32v(1)],
    [2, u32v(1)],
    [3, u32v(12)],
    [4, u32v(4)],
  ],
};
export const ruleOp = (chain: string, exprs: Expr[]): Op => ({
  msgType: 6,
  kind: 2,
  family: NFPROTO_IPV4,
  nlFlags: NLM_F_CREATE | 0x800,
  attrs: [
    [R.TABLE, str(TABLE)],
    [R.CHAIN, str(chain)],
  ],
  exprs,
});
export const cmpEq = (data: Uint8Array): Expr => ({
  name: "cmp",
  attrs: [
    [1, u32v(1)],
    [2, u32v(0)],
    [3, data],
  ],
});
export const jump = (chain: string): Expr => ({
  name: "immediate",
  attrs: [
    [1, u32v(0)],
    [3, u32v(NFT_JUMP)],
    [4, str(chain)],
  ],
});
export const accept: Expr = {
  name: "immediate",
  attrs: [
    [1, u32v(0)],
    [3, u32v(NF_ACCEPT)],
  ],
};
export const lookup = (set: string): Expr => ({
  name: "lookup",
  attrs: [
    [1, u32v(1)],
    [3, str(set)],
  ],
});
