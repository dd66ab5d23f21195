#!/usr/bin/env bash
# Case (a) of bench:load, bound against unbound: N pairs of cold processes, alternated, each loading
# 100,000 elements into the concatenated map in a fresh namespace, once through a transaction bound
# to its connection (the addon converts the request part by part while it is encoded) and once
# through an unbound one (the addon converts it all at commit). Prints the medians of the in-process
# build and commit times and of the process's wall, and the medians of the paired ratios (bound over
# unbound). With --warm, one process instead loads N times each way, by turns, after two rounds
# not counted (`load-child.js loads`): an embedder's daemon, whose encoder V8 has compiled already.
# Needs root (ip netns) and the built tree (npm run build, then npm run build:bench).
#
#   scripts/ab-stream.sh [N=20] [--warm]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/node-env.sh  # the node scripts/setup.sh chose
n=${1:-20}
# As bench:load starts its children: without this machine's extra CA certificates (bench/measure.ts).
unset NODE_EXTRA_CA_CERTS
out=$(mktemp)
trap 'rm -f "$out" "$out.t" "$out.j"' EXIT

# Each load as one line, `bound|unbound WALL_S {"phases":{"buildMs":..,"commitMs":..}}` (WALL_S is
# NaN for the loads of one warm process, which have no process of their own).
if [[ ${2:-} == --warm ]]; then
  ns="nftlink-abs-$$"
  ip netns add "$ns"
  trap 'ip netns del "$ns"; rm -f "$out" "$out.t" "$out.j"' EXIT
  node dist-bench/bundle/load-child.js loads "$ns" --elements 100000 --rounds $((n + 2)) | node -e '
const { phases } = JSON.parse(require("fs").readFileSync(0, "utf8"));
for (const side of ["bound", "unbound"]) for (const p of phases[side].slice(2)) console.log(`${side} NaN ${JSON.stringify({ phases: p })}`);
' >"$out"
else
  run() {
    local ns="nftlink-abs-$$-$RANDOM"
    ip netns add "$ns"
    /usr/bin/time -f '%e' -o "$out.t" node dist-bench/bundle/load-child.js load "$ns" --elements 100000 "$@" >"$out.j" || { ip netns del "$ns"; exit 1; }
    ip netns del "$ns"
    echo "$(cat "$out.t") $(cat "$out.j")"
  }
  for _ in $(seq 1 "$n"); do
    echo "bound $(run)"
    echo "unbound $(run --unbound)"
  done >"$out"
fi

node --input-type=module -e '
import { readFileSync } from "node:fs";
import { median } from "./dist-bench/bench/stats.js";
const rows = { bound: [], unbound: [] };
for (const line of readFileSync(process.argv[1], "utf8").trim().split("\n")) {
  const [side, wall, ...json] = line.split(" ");
  const { phases } = JSON.parse(json.join(" "));
  rows[side].push({ wall: Number(wall), build: phases.buildMs, commit: phases.commitMs, total: phases.buildMs + phases.commitMs });
}
const warm = rows.bound.every((x) => Number.isNaN(x.wall));
const med = (r, f) => median(r.map(f));
for (const side of ["bound", "unbound"]) {
  const r = rows[side];
  const wall = warm ? "" : `, process wall ${med(r, (x) => x.wall).toFixed(3)} s`;
  console.log(`${side.padEnd(8)} build ${med(r, (x) => x.build).toFixed(1)} ms, commit ${med(r, (x) => x.commit).toFixed(1)} ms, build+commit ${med(r, (x) => x.total).toFixed(1)} ms${wall} (${r.length} ${warm ? "loads in one warm process" : "processes"})`);
}
const pair = (f) => median(rows.bound.map((b, i) => f(b) / f(rows.unbound[i]))).toFixed(3);
console.log(`bound/unbound, median of the paired ratios: build+commit ${pair((x) => x.total)}${warm ? "" : `, process wall ${pair((x) => x.wall)}`}`);
' "$out"
