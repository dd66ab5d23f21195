// The addon's monitor calls (native/README.md, "The monitor"): arguments checked on the JS thread,
// events in the compact format with NEWGEN as a kind-5 op naming the committing socket, close.

import { describe, expect, it } from "vitest";
import { decode, encode, leU32, cstr, tableOp, chainOp, TABLE } from "./compact-format.js";
import { native, requirePrivileges, withNamespace } from "./kernel-setup.js";

requirePrivileges();

type Call = { what: number; batch: Uint8Array | null; message: string };

function recorder(): { calls: Call[]; cb: (what: 0 | 1 | 2, batch: Uint8Array | null, message: string) => void; until: (n: number) => Promise<void> } {
  const calls: Call[] = [];
  return {
    calls,
    cb: (what, batch, message) => calls.push({ what, batch, message }),
    until: async (n) => {
      const end = Date.now() + 10_000;
      while (calls.filter((c) => c.what === 0).length < n) {
        if (Date.now() > end) throw new Error(`timed out after ${JSON.stringify(calls.map((c) => c.what))}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
}

describe("monitor", () => {
  const { ns, h } = withNamespace();

  it("refuses bad arguments with TypeErrors, a missing namespace with an Error", () => {
    const n = native();
    const cb = () => {};
    expect(() => n.monitorOpen(1.5 as unknown as number, 1 << 20, cb)).toThrow(TypeError);
    expect(() => n.monitorOpen(ns().name, 100, cb)).toThrow(/rcvbuf/);
    expect(() => n.monitorOpen(ns().name, 1 << 20, "x" as unknown as () => void)).toThrow(/onEvents/);
    expect(() => n.monitorOpen("nftlink-no-such-namespace", 1 << 20, cb)).toThrow(/cannot open network namespace/);
    expect(() => n.monitorPause(h() as never)).toThrow(/expected a monitor/);
    expect(() => n.monitorClose({} as never)).toThrow(TypeError);
  });

  it("delivers a commit's events, then NEWGEN naming the committing socket; close stops it", async () => {
    const n = native();
    const r = recorder();
    const m = n.monitorOpen(ns().name, 1 << 20, r.cb);
    const info = n.monitorInfo(m);
    // The kernel reports twice what was asked (its bookkeeping).
    expect(info.rcvbuf).toBeGreaterThanOrEqual(1 << 20);
    expect(info.closed).toBe(false);
    expect(info.portid).not.toBe(n.portid(h()));
    expect((await n.commit(h(), encode([tableOp(), chainOp("c")]))).errors).toEqual([]);
    await r.until(1);
    const ops = r.calls.filter((c) => c.what === 0).flatMap((c) => decode(c.batch!).ops);
    expect(ops.map((o) => [o.msgType, o.kind])).toEqual([[0, 0], [3, 1], [15, 5]]);
    expect(cstr(ops[0]!.attrs.get(0))).toBe(TABLE);
    const gen = ops[2]!;
    expect(leU32(gen.attrs.get(0))).toBe(await n.getGeneration(h()));
    expect(leU32(gen.attrs.get(3))).toBe(n.portid(h()));
    expect(leU32(gen.attrs.get(1))).toBeGreaterThan(0);
    n.monitorClose(m);
    n.monitorClose(m);
    expect(n.monitorInfo(m).closed).toBe(true);
    const before = r.calls.length;
    ns().nft("add", "table", "ip", "after");
    await new Promise((res) => setTimeout(res, 100));
    expect(r.calls.length).toBe(before);
    n.monitorPause(m);
    n.monitorResume(m);
  });

  it("a paused monitor delivers nothing until resumed, then what the kernel kept", async () => {
    const n = native();
    const r = recorder();
    const m = n.monitorOpen(ns().name, 1 << 20, r.cb);
    try {
      n.monitorPause(m);
      ns().nft("add", "table", "ip", "paused");
      await new Promise((res) => setTimeout(res, 100));
      expect(r.calls).toEqual([]);
      n.monitorResume(m);
      await r.until(1);
      const ops = r.calls.flatMap((c) => decode(c.batch!).ops);
      expect(ops.map((o) => o.kind)).toEqual([0, 5]);
    } finally {
      n.monitorClose(m);
    }
  });
});
