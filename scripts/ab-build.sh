#!/usr/bin/env bash
# Compares the cold build of two revisions: compiles each one's TypeScript into a temporary tree,
# then runs scripts/cold-build.mjs against them alternately, N processes each, and prints the
# medians and the median of the paired ratios (B over A). Pairs taken moments apart are what this
# noisy 2-core VM allows; the ratio of one pair's user times moves by a few percent from pair to pair.
#
#   scripts/ab-build.sh REV_A REV_B [N=20] [-- cold-build options, e.g. --shape 3, or --elements 100000 for case (a)]
#
# REV may be a commit, a branch, or `.` for the working tree's current dist-bench/ (npm run build:bench
# first). Revisions from before bench/ left src/ compile to dist/, which cold-build.mjs reads alike.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/node-env.sh  # the node scripts/setup.sh chose
a=${1:?usage: scripts/ab-build.sh REV_A REV_B [N] [-- options]}
b=${2:?usage: scripts/ab-build.sh REV_A REV_B [N] [-- options]}
shift 2
n=20
if [[ $# -gt 0 && $1 != -- ]]; then n=$1; shift; fi
[[ $# -gt 0 && $1 == -- ]] && shift
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/a" >/dev/null 2>&1 || true; git worktree remove --force "$tmp/b" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

# The compiled tree of a revision (the builder needs no addon: no native build).
tree() {
  local rev=$1 dir=$2
  if [[ $rev == . ]]; then echo "$PWD/dist-bench"; return; fi
  git worktree add --detach "$dir" "$rev" >/dev/null 2>&1
  ln -s "$PWD/node_modules" "$dir/node_modules"
  if [[ -f $dir/bench/tsconfig.json ]]; then
    (cd "$dir" && npx tsc -p bench/tsconfig.json >/dev/null)
    echo "$dir/dist-bench"
  else
    (cd "$dir" && npx tsc -p tsconfig.json >/dev/null)
    echo "$dir/dist"
  fi
}
dist_a=$(tree "$a" "$tmp/a")
dist_b=$(tree "$b" "$tmp/b")
for _ in $(seq 1 "$n"); do
  echo "A $(node scripts/cold-build.mjs "$dist_a" "$@")"
  echo "B $(node scripts/cold-build.mjs "$dist_b" "$@")"
done | node -e '
const runs = { A: [], B: [] };
for (const line of require("fs").readFileSync(0, "utf8").trim().split("\n")) runs[line[0]].push(JSON.parse(line.slice(2)));
const median = (xs) => { const s = [...xs].sort((x, y) => x - y); return s[s.length >> 1]; };
for (const k of ["A", "B"]) {
  const r = runs[k];
  console.log(`${k} ${process.argv[k === "A" ? 1 : 2]}: median wall ${median(r.map((x) => x.wallMs)).toFixed(1)} ms, user ${median(r.map((x) => x.userMs)).toFixed(1)} ms (${r.length} cold processes, ${r[0].encodedBytes} bytes encoded)`);
}
const paired = (f) => median(runs.A.map((x, i) => runs.B[i][f] / x[f])).toFixed(3);
console.log(`B/A, median of the paired ratios: wall ${paired("wallMs")}, user ${paired("userMs")}`);
' "$a" "$b"
