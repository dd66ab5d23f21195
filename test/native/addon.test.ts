// Kernel tests for the C++ addon (native/README.md). Every kernel test runs in a fresh network
// namespace it creates and deletes; the root namespace's ruleset is never written.
// As root they run; without privileges they are skipped locally and FAIL in CI (CI=true).
import { Netns as SharedNetns } from "../helpers/netns.js";
import { execFileSync } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { loadNative, type NativeBinding, type NativeHandle } from "../../src/native/binding.js";

// ---- a tiny local encoder/decoder of the compact format (the real one is src/nft/netlink/wire.ts) --

type Attr = [id: number, value: Uint8Array];
interface Expr {
  name: string;
  attrs: Attr[];
  exprs?: Expr[];
}
interface Elem {
  attrs: Attr[];
  exprs?: Expr[];
}
interface Op {
  msgType: number;
  kind: number;
  nlFlags?: number;
  family: number;
  attrs: Attr[];
  exprs?: Expr[];
  elems?: Elem[];
}

class Writer {
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

const CHECK = 1;
const GENID = 2;

function writeAttrs(w: Writer, attrs: Attr[]): void {
  w.u16(attrs.length);
  for (const [id, v] of attrs) {
    w.u16(id);
    w.u32(v.length);
    w.raw(v);
  }
}
function writeExprs(w: Writer, exprs: Expr[]): void {
  w.u16(exprs.length);
  for (const e of exprs) {
    const name = new TextEncoder().encode(e.name);
    w.u8(name.length);
    w.raw(name);
    writeAttrs(w, e.attrs);
    writeExprs(w, e.exprs ?? []);
  }
}
function encode(ops: Op[], flags = 0, genid = 0): Uint8Array {
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

interface DExpr {
  name: string;
  attrs: Map<number, Uint8Array>;
  exprs: DExpr[];
}
interface DElem {
  attrs: Map<number, Uint8Array>;
  exprs: DExpr[];
}
interface DOp {
  msgType: number;
  kind: number;
  family: number;
  attrs: Map<number, Uint8Array>;
  exprs: DExpr[];
  elems: DElem[];
}
function decode(buf: Uint8Array): { genid: number; ops: DOp[] } {
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

function must<T>(v: T | undefined): T {
  if (v === undefined) throw new Error("expected a value");
  return v;
}

const u8v = (n: number) => Uint8Array.of(n);
const u16v = (n: number) => {
  const b = new Uint8Array(2);
  new DataView(b.buffer).setUint16(0, n, true);
  return b;
};
const u32v = (n: number) => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n >>> 0, true);
  return b;
};
const str = (s: string) => new TextEncoder().encode(s + "\0");
const cstr = (b: Uint8Array | undefined) => (b ? new TextDecoder().decode(b.subarray(0, b.indexOf(0))) : undefined);
const leU32 = (b: Uint8Array | undefined) => (b ? new DataView(b.buffer, b.byteOffset).getUint32(0, true) : undefined);
const hex = (b: Uint8Array | undefined) => (b ? Buffer.from(b).toString("hex") : undefined);
/** 198.18.0.0/15 (benchmarking range): the i-th address, big-endian. */
const ip4 = (i: number) => Uint8Array.of(198, 18 + ((i >> 16) & 1), (i >> 8) & 0xff, i & 0xff);
const ip4text = (i: number) => Array.from(ip4(i)).join(".");
/** 2001:db8::/32 (documentation range): the i-th address. */
const ip6 = (i: number) => {
  const b = new Uint8Array(16);
  b.set([0x20, 0x01, 0x0d, 0xb8]);
  new DataView(b.buffer).setUint32(12, i);
  return b;
};

// libnftnl 1.2.4 ids and kernel constants used below
const NFPROTO_IPV4 = 2;
const NLM_F_EXCL = 0x200;
const NLM_F_CREATE = 0x400;
const T = { NAME: 0 };
const C = { NAME: 0, TABLE: 2, HOOKNUM: 3, PRIO: 4, POLICY: 5, TYPE: 10 };
const R = { TABLE: 1, CHAIN: 2 };
const S = { TABLE: 0, NAME: 1, FLAGS: 2, KEY_TYPE: 3, KEY_LEN: 4, ID: 8 };
const E = { KEY: 1 };
const NF_ACCEPT = 1;
const NFT_JUMP = -3;
const ENOENT = 2;
const EEXIST = 17;
const EINVAL = 22;
const ERESTART = 85;
const TABLE = "nftlink_t";

const tableOp = (name = TABLE, nlFlags = 0): Op => ({
  msgType: 0,
  kind: 0,
  family: NFPROTO_IPV4,
  nlFlags,
  attrs: [[T.NAME, str(name)]],
});
const chainOp = (name: string, base = false, nlFlags = NLM_F_CREATE): Op => ({
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
const setOp = (name: string, keyType: number, keyLen: number, id: number): Op => ({
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
const elemsOp = (set: string, keys: Uint8Array[], msgType = 12): Op => ({
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
const saddr: Expr = {
  name: "payload",
  attrs: [
    [1, u32v(1)],
    [2, u32v(1)],
    [3, u32v(12)],
    [4, u32v(4)],
  ],
};
const ruleOp = (chain: string, exprs: Expr[]): Op => ({
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
const cmpEq = (data: Uint8Array): Expr => ({
  name: "cmp",
  attrs: [
    [1, u32v(1)],
    [2, u32v(0)],
    [3, data],
  ],
});
const jump = (chain: string): Expr => ({
  name: "immediate",
  attrs: [
    [1, u32v(0)],
    [3, u32v(NFT_JUMP)],
    [4, str(chain)],
  ],
});
const accept: Expr = {
  name: "immediate",
  attrs: [
    [1, u32v(0)],
    [3, u32v(NF_ACCEPT)],
  ],
};
const lookup = (set: string): Expr => ({
  name: "lookup",
  attrs: [
    [1, u32v(1)],
    [3, str(set)],
  ],
});

// ---- namespaces ------------------------------------------------------------------------------------

function probePrivileges(): string | null {
  if (process.platform !== "linux") return "not Linux";
  if (typeof process.getuid === "function" && process.getuid() !== 0) return "not root";
  const name = `nftlink-t-probe-${randomBytes(4).toString("hex")}`;
  try {
    execFileSync("ip", ["netns", "add", name], { stdio: "pipe" });
    execFileSync("ip", ["netns", "del", name], { stdio: "pipe" });
    return null;
  } catch (e) {
    return `cannot create a network namespace: ${(e as Error).message}`;
  }
}

const privilegeProblem = probePrivileges();

/** The shared test namespace, with the two calls these tests use. */
class Netns {
  private readonly ns = SharedNetns.create();
  get name(): string {
    return this.ns.name;
  }
  nft(...args: string[]): string {
    return this.ns.exec("nft", args);
  }
  delete(): void {
    this.ns.remove();
  }
}

let nativeBinding: NativeBinding | undefined;
function native(): NativeBinding {
  nativeBinding ??= loadNative();
  return nativeBinding;
}

// Kernel tests never skip: without the privileges they fail, in CI and everywhere else.
if (privilegeProblem) {
  describe("native addon (kernel)", () => {
    it("has the privileges it needs", () => {
      throw new Error(`nftlink kernel tests need root and ip netns: ${privilegeProblem}`);
    });
  });
}

const kernel = describe;

/** Sets up a fresh namespace with the base ruleset for a describe block. */
function withNamespace(): { ns: () => Netns; h: () => NativeHandle } {
  let ns: Netns | undefined;
  let h: NativeHandle | undefined;
  beforeAll(() => {
    ns = new Netns();
    h = native().open(ns.name);
  });
  afterAll(() => {
    if (h) native().close(h);
    ns?.delete();
  });
  return {
    ns: () => ns as Netns,
    h: () => h as NativeHandle,
  };
}

const KEYS_1000 = Array.from({ length: 1000 }, (_, i) => ip4(i + 1));

function baseRuleset(): Op[] {
  return [
    tableOp(),
    chainOp("input", true),
    chainOp("target"),
    setOp("s", 7 /* ipv4_addr */, 4, 1),
    elemsOp("s", KEYS_1000),
    ruleOp("input", [saddr, cmpEq(ip4(1)), jump("target")]),
    ruleOp("input", [saddr, lookup("s"), accept]),
  ];
}

// ---- tests -------------------------------------------------------------------------------------------

kernel("native addon: commit and dump", () => {
  const { ns, h } = withNamespace();

  it("commits table + chain + set + 1000 elements + rules, and nft lists them", async () => {
    const before = await native().getGeneration(h());
    const res = await native().commit(h(), encode(baseRuleset()));
    expect(res).toEqual({ errors: [], handles: [] });
    const after = await native().getGeneration(h());
    expect(after).toBeGreaterThan(before);
    const text = ns().nft("list", "ruleset");
    expect(text).toContain(`table ip ${TABLE}`);
    expect(text).toMatch(/chain input \{\s*type filter hook input priority filter; policy accept;/);
    expect(text).toContain("chain target");
    expect(text).toContain("ip saddr 198.18.0.1 jump target");
    expect(text).toContain("ip saddr @s accept");
    expect(text).toContain("set s {");
    for (const i of [1, 2, 500, 999, 1000]) expect(text).toContain(ip4text(i));
  });

  it("dump returns what was sent, one generation", async () => {
    const gen = await native().getGeneration(h());
    const { genid, ops } = decode(await native().dump(h(), 31, 0, null));
    expect(genid).toBe(gen);
    const tables = ops.filter((o) => o.kind === 0);
    expect(tables.map((t) => cstr(t.attrs.get(T.NAME)))).toEqual([TABLE]);
    expect(tables[0]?.family).toBe(NFPROTO_IPV4);

    const chains = ops.filter((o) => o.kind === 1);
    const input = chains.find((c) => cstr(c.attrs.get(C.NAME)) === "input");
    expect(input).toBeDefined();
    expect(cstr(input?.attrs.get(C.TYPE))).toBe("filter");
    expect(leU32(input?.attrs.get(C.HOOKNUM))).toBe(1);
    expect(leU32(input?.attrs.get(C.PRIO))).toBe(0);
    expect(leU32(input?.attrs.get(C.POLICY))).toBe(NF_ACCEPT);
    expect(chains.map((c) => cstr(c.attrs.get(C.NAME))).sort()).toEqual(["input", "target"]);

    const set = ops.find((o) => o.kind === 3);
    expect(cstr(set?.attrs.get(S.NAME))).toBe("s");
    expect(leU32(set?.attrs.get(S.KEY_TYPE))).toBe(7);
    expect(leU32(set?.attrs.get(S.KEY_LEN))).toBe(4);

    const elems = ops.find((o) => o.kind === 4);
    expect(cstr(elems?.attrs.get(S.NAME))).toBe("s");
    expect(cstr(elems?.attrs.get(S.TABLE))).toBe(TABLE);
    expect(elems?.elems.length).toBe(1000);
    const got = new Set(elems?.elems.map((e) => hex(e.attrs.get(E.KEY))));
    expect(got).toEqual(new Set(KEYS_1000.map((k) => hex(k))));

    const rules = ops.filter((o) => o.kind === 2);
    expect(rules.length).toBe(2);
    const r0 = must(rules[0]);
    const r1 = must(rules[1]);
    expect(cstr(r0.attrs.get(R.CHAIN))).toBe("input");
    expect(r0.exprs.map((e) => e.name)).toEqual(["payload", "cmp", "immediate"]);
    const [pl, cmp, imm] = [must(r0.exprs[0]), must(r0.exprs[1]), must(r0.exprs[2])];
    expect([1, 2, 3, 4].map((id) => leU32(pl.attrs.get(id)))).toEqual([1, 1, 12, 4]);
    expect(leU32(cmp.attrs.get(1))).toBe(1);
    expect(leU32(cmp.attrs.get(2))).toBe(0);
    expect(hex(cmp.attrs.get(3))).toBe(hex(ip4(1)));
    expect(leU32(imm.attrs.get(1))).toBe(0);
    expect(leU32(imm.attrs.get(3))).toBe(NFT_JUMP >>> 0);
    expect(cstr(imm.attrs.get(4))).toBe("target");
    expect(r1.exprs.map((e) => e.name)).toEqual(["payload", "lookup", "immediate"]);
    expect(cstr(r1.exprs[1]?.attrs.get(3))).toBe("s");

    // filters
    const onlyTables = decode(await native().dump(h(), 1, NFPROTO_IPV4, TABLE)).ops;
    expect(onlyTables.map((o) => o.kind)).toEqual([0]);
    expect(decode(await native().dump(h(), 31, 0, "no_such_table")).ops).toEqual([]);
    expect(decode(await native().dump(h(), 31, 10 /* ip6 */, null)).ops).toEqual([]);
    const one = decode(await native().dumpSetElements(h(), NFPROTO_IPV4, TABLE, "s"));
    expect(one.ops.length).toBe(1);
    expect(one.ops[0]?.elems.length).toBe(1000);
  });

  it("attributes a jump to a missing chain (ENOENT) to its op and leaves the kernel unchanged", async () => {
    const before = ns().nft("list", "ruleset");
    const gen = await native().getGeneration(h());
    const res = await native().commit(
      h(),
      encode([chainOp("c1"), ruleOp("input", [saddr, cmpEq(ip4(2)), jump("nope")]), chainOp("c2")]),
    );
    expect(res.errors.length).toBe(1);
    expect(res.errors[0]).toMatchObject({ op: 1, element: -1, errno: ENOENT, phase: "op" });
    expect(ns().nft("list", "ruleset")).toBe(before);
    expect(await native().getGeneration(h())).toBe(gen);
  });

  it("attributes a duplicate NLM_F_EXCL create (EEXIST)", async () => {
    const before = ns().nft("list", "ruleset");
    const res = await native().commit(
      h(),
      encode([chainOp("c1"), chainOp("input", true, NLM_F_CREATE | NLM_F_EXCL), chainOp("c2")]),
    );
    expect(res.errors).toEqual([expect.objectContaining({ op: 1, element: -1, errno: EEXIST, phase: "op" })]);
    expect(ns().nft("list", "ruleset")).toBe(before);
  });

  it("attributes an element with the wrong key length (EINVAL) to its op and element, across chunks", async () => {
    const before = ns().nft("list", "ruleset");
    for (const [count, bad] of [
      [50, 37],
      [20000, 13337], // ~4000 elements per 64 KiB message: the third message
      [20000, 0],
      [20000, 19999],
    ] as const) {
      const keys = Array.from({ length: count }, (_, i) => (i === bad ? Uint8Array.of(1, 2) : ip4(5000 + i)));
      const res = await native().commit(h(), encode([tableOp(), elemsOp("s", keys)]));
      expect(res.errors.length).toBe(1);
      expect(res.errors[0]).toMatchObject({ op: 1, element: bad, errno: EINVAL, phase: "op" });
    }
    expect(ns().nft("list", "ruleset")).toBe(before);
  });

  it("attributes one bad op in a 10,000-op batch (random positions)", async () => {
    const before = ns().nft("list", "ruleset");
    for (let trial = 0; trial < 3; trial++) {
      const bad = Math.floor(Math.random() * 10000);
      const ops: Op[] = [];
      for (let i = 0; i < 10000; i++) {
        if (i === bad) ops.push(ruleOp("target", [saddr, cmpEq(ip4(i)), jump("missing_chain")]));
        else if (i % 2 === 0) ops.push(ruleOp("target", [saddr, cmpEq(ip4(i)), accept]));
        else ops.push(elemsOp("s", [ip4(20000 + i)]));
      }
      const res = await native().commit(h(), encode(ops));
      expect(res.errors.length, `trial ${trial}, bad op ${bad}`).toBe(1);
      expect(res.errors[0]).toMatchObject({ op: bad, element: -1, errno: ENOENT, phase: "op" });
    }
    expect(ns().nft("list", "ruleset")).toBe(before);
  }, 60_000);

  it("commits 200,000 elements in one batch", async () => {
    const keys = Array.from({ length: 200_000 }, (_, i) => ip6(i));
    const buf = encode([setOp("big", 8 /* ipv6_addr */, 16, 2), elemsOp("big", keys)]);
    const t0 = performance.now();
    const res = await native().commit(h(), buf);
    const t1 = performance.now();
    expect(res).toEqual({ errors: [], handles: [] });
    const dumped = decode(await native().dumpSetElements(h(), NFPROTO_IPV4, TABLE, "big"));
    const t2 = performance.now();
    const bigOp = must(dumped.ops[0]);
    expect(bigOp.elems.length).toBe(200_000);
    const got = new Set(bigOp.elems.map((e) => hex(e.attrs.get(E.KEY))));
    expect(got.size).toBe(200_000);
    expect(got.has(hex(ip6(199_999)))).toBe(true);
    console.log(
      `200k elements: request ${(buf.length / 1048576).toFixed(1)} MiB, commit ${(t1 - t0).toFixed(0)} ms, ` +
        `dumpSetElements ${(t2 - t1).toFixed(0)} ms`,
    );
    // DELSET (and keep `nft list ruleset` fast for the tests below)
    const del: Op = { msgType: 11, kind: 3, family: NFPROTO_IPV4, attrs: [[S.TABLE, str(TABLE)], [S.NAME, str("big")]] };
    expect(await native().commit(h(), encode([del]))).toEqual({ errors: [], handles: [] });
    expect(ns().nft("list", "ruleset")).not.toContain("set big");
  }, 120_000);

  it("reports a jump loop", async () => {
    const before = ns().nft("list", "ruleset");
    const res = await native().commit(
      h(),
      encode([
        chainOp("loop_a"),
        chainOp("loop_b"),
        ruleOp("loop_a", [jump("loop_b")]),
        ruleOp("loop_b", [jump("loop_a")]),
        ruleOp("input", [jump("loop_a")]), // loops only count when reachable from a base chain
      ]),
    );
    // Kernel fact (6.x): commit-time validation fails with EAGAIN, nfnetlink replays the batch
    // validating each rule as it is added, so the loop lands on the rule that closed it: EMLINK when
    // the walk exceeds the jump stack (ELOOP on kernels that detect the loop itself).
    expect(res.errors).toEqual([expect.objectContaining({ op: 4, element: -1, phase: "op" })]);
    expect([31 /* EMLINK */, 40 /* ELOOP */]).toContain(res.errors[0]?.errno);
    expect(ns().nft("list", "ruleset")).toBe(before);
  });

  it("CHECK mode validates, reports errors, and commits nothing", async () => {
    const before = ns().nft("list", "ruleset");
    const gen = await native().getGeneration(h());
    expect(await native().commit(h(), encode([chainOp("checked")], CHECK))).toEqual({ errors: [], handles: [] });
    const bad = await native().commit(
      h(),
      encode([chainOp("checked"), chainOp("input", true, NLM_F_CREATE | NLM_F_EXCL)], CHECK),
    );
    expect(bad.errors).toEqual([expect.objectContaining({ op: 1, errno: EEXIST, phase: "op" })]);
    expect(ns().nft("list", "ruleset")).toBe(before);
    expect(await native().getGeneration(h())).toBe(gen);
  });

  it("genid compare-and-swap: a stale generation is refused on the batch (ERESTART)", async () => {
    const gen = await native().getGeneration(h());
    const stale = await native().commit(h(), encode([chainOp("cas")], GENID, gen - 1));
    expect(stale.errors).toEqual([{ op: -1, element: -1, errno: ERESTART, message: expect.any(String), phase: "batch", attrPath: [] }]);
    expect(ns().nft("list", "ruleset")).not.toContain("chain cas");
    const ok = await native().commit(h(), encode([chainOp("cas")], GENID, gen));
    expect(ok).toEqual({ errors: [], handles: [] });
    expect(await native().getGeneration(h())).toBeGreaterThan(gen);
    expect(ns().nft("list", "ruleset")).toContain("chain cas");
  });

  it("opens a namespace by name, by path and by fd, and never the root namespace's ruleset", async () => {
    const byPath = native().open(`/run/netns/${ns().name}`);
    const fd = openSync(`/run/netns/${ns().name}`, "r");
    try {
      const byFd = native().open(fd);
      const g = await native().getGeneration(h());
      expect(await native().getGeneration(byPath)).toBe(g);
      expect(await native().getGeneration(byFd)).toBe(g);
      expect(await native().commit(byFd, encode([chainOp("via_fd")]))).toEqual({ errors: [], handles: [] });
      const chains = decode(await native().dump(byPath, 2, NFPROTO_IPV4, TABLE)).ops;
      expect(chains.map((c) => cstr(c.attrs.get(C.NAME)))).toContain("via_fd");
      native().close(byFd);
    } finally {
      closeSync(fd);
      native().close(byPath);
    }
    // Read-only look at the caller's namespace: our table must not be there.
    const root = native().open();
    try {
      const tables = decode(await native().dump(root, 1, 0, null)).ops;
      expect(tables.map((t) => cstr(t.attrs.get(T.NAME)))).not.toContain(TABLE);
    } finally {
      native().close(root);
    }
    expect(() => native().open("nftlink-t-does-not-exist")).toThrow(/cannot open network namespace/);
    expect(() => native().open(-1)).toThrow(TypeError);
  });

  it("close is idempotent and a closed handle rejects", async () => {
    const x = native().open(ns().name);
    native().close(x);
    native().close(x);
    await expect(native().getGeneration(x)).rejects.toThrow(/closed/);
    await expect(native().commit(x, encode([chainOp("never")]))).rejects.toThrow(/closed/);
    await expect(native().dump(x, 31, 0, null)).rejects.toThrow(/closed/);
    // close while a request is in flight: the request finishes (or fails cleanly), nothing crashes
    const y = native().open(ns().name);
    const p = native().dump(y, 31, 0, null);
    native().close(y);
    await p.then(
      (buf) => expect(buf).toBeInstanceOf(Uint8Array),
      (err: unknown) => expect(err).toBeInstanceOf(Error),
    );
  });

  it("overlapping calls on one handle are serialised", async () => {
    const results = await Promise.all([
      native().dump(h(), 31, 0, null),
      native().getGeneration(h()),
      native().commit(h(), encode([chainOp("overlap")])),
      native().dump(h(), 3, 0, null),
    ]);
    expect(results[2]).toEqual({ errors: [], handles: [] });
    decode(results[0] as Uint8Array);
    decode(results[3] as Uint8Array);
  });
});

kernel("native addon: rule handles (NLM_F_ECHO)", () => {
  const { ns, h } = withNamespace();
  const NLM_F_ECHO = 0x8;
  const NLM_F_REPLACE = 0x100;
  const R_HANDLE = 3;
  const echoed = (op: Op): Op => ({ ...op, nlFlags: (op.nlFlags ?? 0) | NLM_F_ECHO });
  /** A rule that matches the i-th test address (so a dump tells the rules apart). */
  const addrRule = (chain: string, i: number, verdict: Expr = accept): Op => ruleOp(chain, [saddr, cmpEq(ip4(i)), verdict]);
  const leU64 = (b: Uint8Array | undefined) => (b ? Number(new DataView(b.buffer, b.byteOffset).getBigUint64(0, true)) : undefined);
  const u64v = (n: number) => {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigUint64(0, BigInt(n), true);
    return b;
  };
  /** The chain's rules in order, as [matched address (hex), handle]. */
  async function dumpedRules(chain: string): Promise<Array<[string | undefined, number | undefined]>> {
    const { ops } = decode(await native().dump(h(), 16, NFPROTO_IPV4, TABLE, chain));
    return ops.map((o) => [hex(o.exprs[1]?.attrs.get(3)), leU64(o.attrs.get(R_HANDLE))]);
  }

  /** The commit's result, after checking that the kernel's ruleset and generation did not move. */
  async function unchangedBy(buf: Uint8Array) {
    const [before, gen] = [ns().nft("list", "ruleset"), await native().getGeneration(h())];
    const res = await native().commit(h(), buf);
    expect([ns().nft("list", "ruleset"), await native().getGeneration(h())]).toEqual([before, gen]);
    return res;
  }

  beforeAll(async () => {
    expect(await native().commit(h(), encode([tableOp(), chainOp("e"), chainOp("big"), chainOp("target")]))).toEqual({
      errors: [],
      handles: [],
    });
  });

  it("returns the handle of every echoed rule, the one a dump shows; nothing for the others", async () => {
    const res = await native().commit(
      h(),
      encode([chainOp("e"), echoed(addrRule("e", 1)), addrRule("e", 2), echoed(addrRule("e", 3)), echoed(addrRule("e", 4))]),
    );
    expect(res.errors).toEqual([]);
    const dumped = new Map(await dumpedRules("e"));
    expect(dumped.size).toBe(4);
    expect(res.handles).toEqual([
      { op: 1, handle: dumped.get(hex(ip4(1))) },
      { op: 3, handle: dumped.get(hex(ip4(3))) },
      { op: 4, handle: dumped.get(hex(ip4(4))) },
    ]);
    for (const { handle } of res.handles) expect(handle).toBeGreaterThan(0);
  });

  it("a replace by that handle changes exactly that rule, which keeps its handle", async () => {
    const before = await dumpedRules("e");
    const [, target] = must(before[1]);
    const replace: Op = {
      ...addrRule("e", 99),
      nlFlags: NLM_F_REPLACE | NLM_F_ECHO,
      attrs: [[R.TABLE, str(TABLE)], [R.CHAIN, str("e")], [R_HANDLE, u64v(must(target))]],
    };
    const res = await native().commit(h(), encode([replace]));
    expect(res).toEqual({ errors: [], handles: [{ op: 0, handle: target }] });
    const after = await dumpedRules("e");
    expect(after).toEqual(before.map(([addr, handle], i) => (i === 1 ? [hex(ip4(99)), handle] : [addr, handle])));
  });

  it("check mode echoes nothing and commits nothing", async () => {
    const res = await unchangedBy(encode([echoed(addrRule("e", 50)), echoed(addrRule("e", 51))], CHECK));
    expect(res).toEqual({ errors: [], handles: [] });
  });

  it("a refused batch returns no handles, attributes the error, and leaves no echo for the next commit", async () => {
    const bad = await unchangedBy(
      encode([echoed(addrRule("e", 60)), echoed(addrRule("e", 61, jump("no_such_chain"))), echoed(addrRule("e", 62))]),
    );
    expect(bad.handles).toEqual([]);
    expect(bad.errors).toEqual([expect.objectContaining({ op: 1, element: -1, errno: ENOENT, phase: "op" })]);
    const good = await native().commit(h(), encode([echoed(addrRule("e", 63))]));
    const dumped = new Map(await dumpedRules("e"));
    expect(good).toEqual({ errors: [], handles: [{ op: 0, handle: dumped.get(hex(ip4(63))) }] });
  });

  it("5000 echoed rules in one batch: 5000 handles, each the dump's, no ENOBUFS", async () => {
    // Each echo ~2.3 KiB, more than half of NLMSG_GOODSIZE: the kernel cannot pack two in one skb, so
    // this is the receive queue's worst case (5000 skbs of 8 KiB), not what small rules need.
    const logs: Expr[] = Array.from({ length: 14 }, (_, k) => ({ name: "log", attrs: [[1, str(`${k}`.padEnd(120, "p"))]] }));
    const n = 5000;
    const ops: Op[] = [];
    for (let i = 0; i < n; i++) ops.push(echoed(ruleOp("big", [saddr, cmpEq(ip4(1000 + i)), ...logs, accept])));
    const t0 = performance.now();
    const res = await native().commit(h(), encode(ops));
    const t1 = performance.now();
    expect(res.errors).toEqual([]);
    const dumped = await dumpedRules("big");
    expect(dumped.length).toBe(n);
    // Echoes come in batch order, and an appended rule lands at the chain's end: both are request order.
    expect(res.handles).toEqual(dumped.map(([addr, handle], i) => {
      expect(addr).toBe(hex(ip4(1000 + i)));
      return { op: i, handle };
    }));
    expect(new Set(res.handles.map((x) => x.handle)).size).toBe(n);
    console.log(`5000 echoed rules: commit ${(t1 - t0).toFixed(0)} ms`);
  }, 60_000);

  it("refuses NLM_F_ECHO on anything but NEWRULE", async () => {
    const re = /NLM_F_ECHO \(0x0008\) is only for NEWRULE/;
    await expect(native().commit(h(), encode([echoed(chainOp("x"))]))).rejects.toThrow(re);
    await expect(native().commit(h(), encode([echoed(tableOp())]))).rejects.toThrow(re);
    const delRule: Op = { ...addrRule("e", 1), msgType: 8, exprs: [], attrs: [[R.TABLE, str(TABLE)], [R.CHAIN, str("e")], [R_HANDLE, u64v(1)]] };
    await expect(native().commit(h(), encode([echoed(delRule)]))).rejects.toThrow(re);
    await expect(native().commit(h(), encode([echoed(elemsOp("s", [ip4(1)]))]))).rejects.toThrow(re);
  });
});

kernel("native addon: malformed requests never crash", () => {
  const { h } = withNamespace();
  const valid = () =>
    encode([
      tableOp("m"),
      {
        msgType: 6,
        kind: 2,
        family: NFPROTO_IPV4,
        attrs: [
          [R.TABLE, str("m")],
          [R.CHAIN, str("c")],
        ],
        exprs: [saddr, cmpEq(ip4(3)), accept],
      },
    ]);

  async function expectRejected(buf: Uint8Array, re: RegExp = /nftlink: malformed transaction at byte \d+: /) {
    await expect(native().commit(h(), buf)).rejects.toThrow(re);
  }

  it("rejects every truncation of a valid buffer", async () => {
    const buf = valid();
    for (let len = 0; len < buf.length; len++) await expectRejected(buf.slice(0, len));
  });

  it("rejects wrong lengths, ids, names, kinds and trailing bytes with the reason", async () => {
    const one = (op: Op) => encode([op]);
    await expectRejected(
      one({ ...tableOp(), attrs: [[2 /* flags */, Uint8Array.of(1, 2, 3)]] }),
      /table attribute 2 \(flags\) is 3 bytes, must be exactly 4/,
    );
    await expectRejected(
      one({ ...tableOp(), attrs: [[7, u32v(0)]] }),
      /table attribute 7 is past the maximum id 6/,
    );
    await expectRejected(
      one({ ...tableOp(), attrs: [[0, new TextEncoder().encode("no-nul")]] }),
      /table attribute 0 \(name\) is not NUL-terminated/,
    );
    await expectRejected(
      one({ ...tableOp(), attrs: [[0, new Uint8Array(300).fill(65).fill(0, 299)]] }),
      /is 300 bytes, at most 256/,
    );
    await expectRejected(
      one(ruleOp("c", [{ name: "cmp", attrs: [[3, new Uint8Array(80)]] }])),
      /cmp attribute 3 \(data\) is 80 bytes, at most 64/,
    );
    await expectRejected(one(ruleOp("c", [{ name: "payload", attrs: [[1, u16v(1)]] }])), /must be exactly 4/);
    await expectRejected(one(ruleOp("c", [{ name: "ct", attrs: [[3, u32v(1)]] }])), /ct attribute 3 \(dir\) is 4 bytes, must be exactly 1/);
    await expectRejected(one(ruleOp("c", [{ name: "log", attrs: [[2, u8v(1)]] }])), /log attribute 2 \(group\)/);
    await expectRejected(one(ruleOp("c", [{ name: "bogus", attrs: [] }])), /unknown expression "bogus"/);
    await expectRejected(one(ruleOp("c", [{ name: "match", attrs: [] }])), /xtables compat/);
    await expectRejected(
      one(ruleOp("c", [{ name: "dynset", attrs: [[7, u32v(0)]] }])),
      /dynset attribute 7 \(expr\) is a libnftnl object pointer/,
    );
    await expectRejected(
      one(ruleOp("c", [{ name: "cmp", attrs: [], exprs: [accept] }])),
      /only a top-level dynset may have them/,
    );
    await expectRejected(one({ ...setOp("x", 7, 4, 9), attrs: [[16, Uint8Array.of(4, 0)]] }), /concat\) field length 1 is zero/);
    await expectRejected(one({ ...setOp("x", 7, 4, 9), attrs: [[17, new Uint8Array(8)]] }), /object pointer/);
    await expectRejected(
      one({ ...elemsOp("s", [ip4(1)]), attrs: [[2, u32v(0)]] }),
      /does not name a set/,
    );
    await expectRejected(
      one({ ...elemsOp("s", []), elems: [{ attrs: [[E.KEY, new Uint8Array(65)]] }] }),
      /element attribute 1 \(key\) is 65 bytes, at most 64/,
    );
    await expectRejected(one({ ...tableOp(), kind: 9 }), /unknown kind 9/);
    await expectRejected(one({ ...tableOp(), msgType: 3 }), /message type 3 is not a table verb/);
    await expectRejected(one({ ...tableOp(), nlFlags: 0x4 }), /NLM_F_ACK is never needed/);
    await expectRejected(one({ ...tableOp(), attrs: [[0, str("a")], [0, str("b")]] }), /given twice/);
    const trailing = new Uint8Array(valid().length + 3);
    trailing.set(valid());
    await expectRejected(trailing, /3 trailing bytes/);
    const badMagic = valid();
    badMagic[0] = must(badMagic[0]) ^ 0xff;
    await expectRejected(badMagic, /magic/);
    const bigCount = valid();
    new DataView(bigCount.buffer).setUint32(12, 0xffffffff, true);
    await expectRejected(bigCount, /declares 4294967295 operations/);
    await expect(native().commit(h(), "nope" as unknown as Uint8Array)).rejects.toThrow(TypeError);
    await expect(native().commit(h(), new Uint16Array(8) as unknown as Uint8Array)).rejects.toThrow(TypeError);
  });

  it("survives random bytes and 2000 random mutations of a valid buffer", async () => {
    for (let i = 0; i < 300; i++) {
      const buf = randomBytes(Math.floor(Math.random() * 200));
      if (i % 2 === 0 && buf.length >= 8) buf.writeUInt32LE(0x4c54464e, 0), buf.writeUInt16LE(1, 4);
      await expect(native().commit(h(), new Uint8Array(buf))).rejects.toBeInstanceOf(Error);
    }
    const base = valid();
    let resolved = 0;
    for (let i = 0; i < 2000; i++) {
      const m = base.slice();
      const flips = 1 + Math.floor(Math.random() * 4);
      for (let f = 0; f < flips; f++) {
        const at = Math.floor(Math.random() * m.length);
        m[at] = Math.random() < 0.5 ? Math.floor(Math.random() * 256) : must(m[at]) ^ (1 << Math.floor(Math.random() * 8));
      }
      try {
        const r = await native().commit(h(), m);
        expect(Array.isArray(r.errors)).toBe(true);
        resolved++;
      } catch (e) {
        expect(e).toBeInstanceOf(Error);
        expect((e as Error).message).toMatch(/^nftlink: /);
      }
    }
    // the handle still works afterwards
    expect(typeof (await native().getGeneration(h()))).toBe("number");
    expect(resolved).toBeGreaterThanOrEqual(0);
  }, 60_000);
});

// ---- streamed commits (commitStream / commitStreamFeed / commitStreamEnd) -----------------------------

/** The operations' bytes without the header, in parts cut before the given operation indices. */
function partsOf(ops: Op[], cuts: number[]): Array<{ bytes: Uint8Array; count: number }> {
  const bounds = [0, ...cuts, ops.length];
  const parts: Array<{ bytes: Uint8Array; count: number }> = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    const slice = ops.slice(must(bounds[i]), must(bounds[i + 1]));
    parts.push({ bytes: encode(slice).subarray(16), count: slice.length });
  }
  return parts;
}

/** A streamed commit of `ops`, fed in the parts `cuts` makes. */
function streamed(h: NativeHandle, ops: Op[], cuts: number[], flags = 0, genid = 0) {
  const s = native().commitStream(h);
  for (const p of partsOf(ops, cuts)) native().commitStreamFeed(s, p.bytes, p.count);
  return native().commitStreamEnd(s, flags, genid);
}

kernel("native addon: streamed commits", () => {
  const { ns, h } = withNamespace();
  const second = withNamespace();

  it("builds the same batch as commit(): both namespaces list the same ruleset", async () => {
    const ops = baseRuleset();
    expect(await native().commit(second.h(), encode(ops))).toEqual({ errors: [], handles: [] });
    // Cut everywhere, including an empty part and one before the element operation.
    const s = native().commitStream(h());
    native().commitStreamFeed(s, new Uint8Array(0), 0);
    for (const p of partsOf(ops, [1, 2, 4, 5])) native().commitStreamFeed(s, p.bytes, p.count);
    expect(await native().commitStreamEnd(s, 0, 0)).toEqual({ errors: [], handles: [] });
    expect(ns().nft("list", "ruleset")).toBe(second.ns().nft("list", "ruleset"));
  });

  it("numbers operations and elements across parts: a refusal names the right one, and nothing changes", async () => {
    const before = ns().nft("list", "ruleset");
    const gen = await native().getGeneration(h());
    const missingJump = [chainOp("c1"), chainOp("c2"), ruleOp("input", [saddr, cmpEq(ip4(2)), jump("nope")]), chainOp("c3")];
    let res = await streamed(h(), missingJump, [2]);
    expect(res.errors).toEqual([expect.objectContaining({ op: 2, element: -1, errno: ENOENT, phase: "op" })]);
    const keys = Array.from({ length: 20000 }, (_, i) => (i === 13337 ? Uint8Array.of(1, 2) : ip4(5000 + i)));
    res = await streamed(h(), [chainOp("c1"), tableOp(), elemsOp("s", keys)], [1, 2]);
    expect(res.errors).toEqual([expect.objectContaining({ op: 2, element: 13337, errno: EINVAL, phase: "op" })]);
    expect(ns().nft("list", "ruleset")).toBe(before);
    expect(await native().getGeneration(h())).toBe(gen);
  });

  it("CHECK commits nothing; GENID is compared as in commit()", async () => {
    const before = ns().nft("list", "ruleset");
    expect(await streamed(h(), [chainOp("checked"), chainOp("input", true, NLM_F_CREATE | NLM_F_EXCL)], [1], CHECK)).toEqual({
      errors: [expect.objectContaining({ op: 1, errno: EEXIST, phase: "op" })],
      handles: [],
    });
    expect(ns().nft("list", "ruleset")).toBe(before);
    const gen = await native().getGeneration(h());
    const stale = await streamed(h(), [chainOp("cas")], [], GENID, gen - 1);
    expect(stale.errors).toEqual([expect.objectContaining({ op: -1, errno: ERESTART, phase: "batch" })]);
    expect(ns().nft("list", "ruleset")).toBe(before);
    expect(await streamed(h(), [chainOp("cas")], [], GENID, gen)).toEqual({ errors: [], handles: [] });
    expect(ns().nft("list", "ruleset")).toContain("chain cas");
  });

  it("a malformed part rejects the end with the byte as commit() names it, and sends nothing", async () => {
    const ops = [chainOp("m1"), { ...tableOp(), attrs: [[2, Uint8Array.of(1, 2, 3)]] as Attr[] }, chainOp("m2")];
    const whole = await native().commit(h(), encode(ops)).then(
      () => "resolved",
      (e: Error) => e.message,
    );
    expect(whole).toMatch(/^nftlink: malformed transaction at byte \d+: table attribute 2 \(flags\) is 3 bytes/);
    const before = ns().nft("list", "ruleset");
    await expect(streamed(h(), ops, [1])).rejects.toThrow(whole);
    await expect(streamed(h(), ops, [1, 2])).rejects.toThrow(whole);
    // A part whose count is wrong: trailing bytes, or too few.
    const s = native().commitStream(h());
    const [p] = partsOf([chainOp("x"), chainOp("y")], []);
    native().commitStreamFeed(s, must(p).bytes, 1);
    await expect(native().commitStreamEnd(s, 0, 0)).rejects.toThrow(/trailing bytes after the last operation/);
    expect(ns().nft("list", "ruleset")).toBe(before);
  });

  it("cancel sends nothing; a stream takes no part after its end; bad arguments are errors", async () => {
    const before = ns().nft("list", "ruleset");
    const s = native().commitStream(h());
    const [p] = partsOf([chainOp("cancelled")], []);
    native().commitStreamFeed(s, must(p).bytes, 1);
    native().commitStreamCancel(s);
    native().commitStreamCancel(s);
    expect(() => native().commitStreamFeed(s, must(p).bytes, 1)).toThrow(/has ended/);
    await expect(native().commitStreamEnd(s, 0, 0)).rejects.toThrow(/cancelled/);
    expect(ns().nft("list", "ruleset")).toBe(before);

    const t = native().commitStream(h());
    native().commitStreamFeed(t, must(p).bytes, 1);
    expect(await native().commitStreamEnd(t, 0, 0)).toEqual({ errors: [], handles: [] });
    expect(() => native().commitStreamFeed(t, must(p).bytes, 1)).toThrow(/has ended/);
    await expect(native().commitStreamEnd(t, 0, 0)).rejects.toThrow(/already ended/);
    expect(ns().nft("list", "ruleset")).toContain("chain cancelled");

    const bad = native() as unknown as Record<string, (...a: unknown[]) => unknown>;
    expect(() => bad.commitStreamFeed!(h(), must(p).bytes, 1)).toThrow(TypeError);
    expect(() => bad.commitStreamFeed!(native().commitStream(h()), "nope", 1)).toThrow(TypeError);
    expect(() => bad.commitStreamFeed!(native().commitStream(h()), must(p).bytes, -1)).toThrow(TypeError);
    await expect(bad.commitStreamEnd!(native().commitStream(h()), 4, 0) as Promise<unknown>).rejects.toThrow(TypeError);
    expect(() => bad.commitStreamCancel!({})).toThrow(TypeError);
    expect(() => bad.commitStream!(s)).toThrow(/open\(\) did not create/);
  });

  it("survives random parts and random mutations of valid parts", async () => {
    const ops = baseRuleset();
    for (let i = 0; i < 300; i++) {
      const s = native().commitStream(h());
      for (let k = 0; k < 1 + (i % 3); k++) native().commitStreamFeed(s, new Uint8Array(randomBytes(1 + Math.floor(Math.random() * 120))), i % 4);
      await expect(native().commitStreamEnd(s, 0, 0)).rejects.toBeInstanceOf(Error);
    }
    const before = ns().nft("list", "ruleset");
    for (let i = 0; i < 1000; i++) {
      const parts = partsOf(ops, [2, 4]).map((p) => ({ bytes: p.bytes.slice(), count: p.count }));
      const victim = must(parts[Math.floor(Math.random() * parts.length)]);
      for (let f = 0; f < 1 + Math.floor(Math.random() * 4); f++) {
        const at = Math.floor(Math.random() * victim.bytes.length);
        victim.bytes[at] = Math.random() < 0.5 ? Math.floor(Math.random() * 256) : must(victim.bytes[at]) ^ (1 << Math.floor(Math.random() * 8));
      }
      const s = native().commitStream(h());
      for (const p of parts) native().commitStreamFeed(s, p.bytes, p.count);
      // CHECK: whatever the kernel accepts of a mutation is validated and dropped.
      try {
        const r = await native().commitStreamEnd(s, CHECK, 0);
        expect(Array.isArray(r.errors)).toBe(true);
      } catch (e) {
        expect((e as Error).message).toMatch(/^nftlink: /);
      }
    }
    expect(ns().nft("list", "ruleset")).toBe(before);
  }, 60_000);
});
