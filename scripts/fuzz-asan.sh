#!/usr/bin/env bash
# Builds the addon with AddressSanitizer + UndefinedBehaviorSanitizer into build-asan/ (never touching
# build/Release), then runs scripts/fuzz-addon.mjs against it in a fresh network namespace.
# Exits non-zero on any sanitizer report or fuzz-driver failure. Needs root (ip netns).
#
#   scripts/fuzz-asan.sh [iterations=20000]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$ROOT/scripts/node-env.sh"  # the node scripts/setup.sh chose, and its headers
ITER="${1:-20000}"
OUT="$ROOT/build-asan"
SRC="$OUT/src"
LOGDIR="$OUT/reports"

# A private copy of the sources: node-gyp always builds into ./build next to binding.gyp.
rm -rf "$SRC" "$LOGDIR"
mkdir -p "$SRC" "$LOGDIR"
cp "$ROOT/binding.gyp" "$SRC/"
cp -r "$ROOT/native" "$SRC/"
ln -s "$ROOT/node_modules" "$SRC/node_modules"

echo "fuzz-asan: building with -fsanitize=address,undefined"
# Same headers as the normal build: the running node's own (scripts/node-env.sh), else npm's
# configured nodedir (e.g. /usr on Debian's nodejs); without either node-gyp downloads headers as usual.
NODEDIR="${npm_package_config_node_gyp_nodedir:-${npm_config_nodedir:-$(cd "$ROOT" && npm config get nodedir 2>/dev/null || true)}}"
GYP_ARGS=(rebuild --loglevel=warn)
if [[ -n "$NODEDIR" && "$NODEDIR" != "undefined" && "$NODEDIR" != "null" ]]; then GYP_ARGS+=("--nodedir=$NODEDIR"); fi
(cd "$SRC" && NFTLINK_SANITIZE=1 "$ROOT/node_modules/.bin/node-gyp" "${GYP_ARGS[@]}" >"$OUT/build.log" 2>&1) || {
  cat "$OUT/build.log"
  exit 2
}
ADDON="$SRC/build/Release/nftlink.node"
if ! nm -D "$ADDON" | grep __asan_ >/dev/null; then
  echo "fuzz-asan: $ADDON is not instrumented" >&2
  exit 2
fi

# node itself is not instrumented: the ASan runtime must be loaded first. Leak checking is off (V8
# and node keep allocations alive on purpose); any error report stops the process.
ASAN_LIB="$(gcc -print-file-name=libasan.so)"
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=0:log_path=$LOGDIR/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$LOGDIR/ubsan"

echo "fuzz-asan: $ITER iterations"
set +e
LD_PRELOAD="$ASAN_LIB" node "$ROOT/scripts/fuzz-addon.mjs" "$ITER" "$ADDON"
RC=$?
set -e

REPORTS=("$LOGDIR"/*)
if [[ -e "${REPORTS[0]}" ]]; then
  echo "fuzz-asan: sanitizer reports:" >&2
  for f in "${REPORTS[@]}"; do
    echo "== $f" >&2
    cat "$f" >&2
  done
  exit 1
fi
if [[ $RC -ne 0 ]]; then
  echo "fuzz-asan: the fuzz driver failed (exit $RC)" >&2
  exit "$RC"
fi
echo "fuzz-asan: clean"
