// What the addon's kernel tests share (test/native/*.test.ts): the privilege check, a fresh network
// namespace per describe block (the root namespace's ruleset is never written), the loaded addon,
// and the base ruleset.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { loadNative, type NativeBinding, type NativeHandle } from "../../src/native/binding.js";
import { Netns as SharedNetns } from "../helpers/netns.js";
import { accept, chainOp, cmpEq, elemsOp, encode, ip4, jump, lookup, ruleOp, saddr, setOp, tableOp, type Op } from "./compact-format.js";

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
export class Netns {
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
export function native(): NativeBinding {
  nativeBinding ??= loadNative();
  return nativeBinding;
}

/**
 * Called at the top of each test file. Kernel tests never skip: without the privileges they fail,
 * in CI and everywhere else.
 */
export function requirePrivileges(): void {
  if (!privilegeProblem) return;
  describe("native addon (kernel)", () => {
    it("has the privileges it needs", () => {
      throw new Error(`nftlink kernel tests need root and ip netns: ${privilegeProblem}`);
    });
  });
}

/** A fresh namespace for a describe block, with `ruleset` committed first when given. */
export function withNamespace(ruleset?: Op[]): { ns: () => Netns; h: () => NativeHandle } {
  let ns: Netns | undefined;
  let h: NativeHandle | undefined;
  beforeAll(async () => {
    ns = new Netns();
    h = native().open(ns.name);
    if (ruleset) expect(await native().commit(h, encode(ruleset))).toEqual({ errors: [], handles: [] });
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

export const KEYS_1000 = Array.from({ length: 1000 }, (_, i) => ip4(i + 1));

/** A table, a base and a regular chain, a set of 1000 addresses and two rules. */
export function baseRuleset(): Op[] {
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
