// Streamed commits (commitStream / commitStreamFeed / commitStreamEnd): parts fed while a
// transaction is built make the same batch as commit(). In fresh network namespaces.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";

import type { NativeHandle } from "../../src/native/binding.js";
import { type Attr, chainOp, CHECK, cmpEq, EEXIST, EINVAL, elemsOp, encode, ENOENT, ERESTART, GENID, ip4, jump, must, NLM_F_CREATE, NLM_F_EXCL, type Op, ruleOp, saddr, tableOp } from "./compact-format.js";
import { baseRuleset, native, requirePrivileges, withNamespace } from "./kernel-setup.js";

requirePrivileges();

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

describe("native addon: streamed commits", () => {
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
