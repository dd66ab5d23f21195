#!/usr/bin/env bash
# Builds the prebuilt addon the npm package ships: prebuilds/linux-x64/nftlink.glibc.node, with
# libnftnl and libmnl linked statically, so `npm install nftlink` needs no compiler and the addon
# needs no system library beyond glibc and libstdc++ (which every Debian and Node has). node-gyp-build
# (src/native/binding.ts) loads it; a machine it does not fit builds from source instead.
#
# The static archives come from Debian's own binary packages, pinned by SHA-256: libnftnl.a from
# bookworm's libnftnl-dev (the libnftnl the addon is developed and tested against) and libmnl.a from
# trixie's libmnl-dev (bookworm's ships no libmnl.a; libmnl's ABI is unchanged since 1.0.0). Both are
# PIE code; binding.gyp links them with --exclude-libs so their symbols stay inside the addon, and
# libnftnl's two reads of libc's `stderr` go through native/static-stderr.c. Why
# Debian's archives and not a build from source: docs/decisions.md, "Prebuilt addon".
#
# Run on Debian bookworm amd64 (the glibc the prebuild then needs at least), after scripts/setup.sh.
# `npm pack` runs it (package.json "prepack").
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/node-env.sh

[ "$(uname -m)" = x86_64 ] || { echo "build-prebuilt: builds linux-x64 only (this is $(uname -m))" >&2; exit 1; }
mirror=${NFTLINK_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# Not under build/: node-gyp rebuild empties that.
deps=node_modules/.cache/nftlink-prebuilt
root=$deps/root

# pool path, sha256: the archive packages (no runtime package: only the .a and the headers are used).
debs=(
  "pool/main/libn/libnftnl/libnftnl-dev_1.2.4-2_amd64.deb 4cbc6f80695044abc6123af5d29cc2b481e2e48727d140564b911cafffdc977b"
  "pool/main/libm/libmnl/libmnl-dev_1.0.5-3_amd64.deb 7f9a7c3f470ec400171981816df189ec86b11083c3f8d391d0800ed09a87bfc3"
)
mkdir -p "$deps"
rm -rf "$root"
for entry in "${debs[@]}"; do
  read -r path sum <<<"$entry"
  file=$deps/$(basename "$path")
  if ! echo "$sum  $file" | sha256sum -c --quiet 2>/dev/null; then
    curl -fsSL --retry 3 -o "$file" "$mirror/$path"
    echo "$sum  $file" | sha256sum -c --quiet || { echo "build-prebuilt: $file: SHA-256 mismatch" >&2; exit 1; }
  fi
  dpkg-deb -x "$file" "$root"
done
# libnftnl.a reads libc's `stderr` PC-relative, which a shared object cannot: point those reads at
# the addon's own copy of the pointer (native/static-stderr.c says why).
objcopy --redefine-sym stderr=nftlink_static_stderr "$root/usr/lib/x86_64-linux-gnu/libnftnl.a"

# prebuildify runs `node-gyp rebuild` (against the headers scripts/node-env.sh names) and copies the
# result (named after the package, tagged glibc: node-gyp-build picks it on glibc Linux x64): one
# N-API build serves every Node with N-API 8 (package.json engines). It moves node-gyp's output
# away; build/Release gets it back, the same code as the shared-library build.
rm -rf prebuilds
NFTLINK_STATIC_ROOT=$PWD/$root npx --no-install prebuildify --napi --strip --tag-libc --target "$(node --version)"

addon=prebuilds/linux-x64/nftlink.glibc.node
[ -f "$addon" ] && cp "$addon" build/Release/nftlink.node
[ -f "$addon" ] || { echo "build-prebuilt: $addon was not made" >&2; exit 1; }
needed=$(readelf -d "$addon" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
echo "build-prebuilt: $addon ($(stat -c %s "$addon") bytes) needs: $needed"
case " $needed " in
  *libnftnl*|*libmnl*) echo "build-prebuilt: $addon still links libnftnl or libmnl dynamically" >&2; exit 1 ;;
esac
# The newest glibc and libstdc++ symbol versions the addon asks for: the oldest it runs with.
versions=$(objdump -T "$addon")
echo "build-prebuilt: needs glibc $(grep -o 'GLIBC_[0-9.]*' <<<"$versions" | sort -V | tail -1 | cut -d_ -f2)+ and libstdc++ $(grep -o 'GLIBCXX_[0-9.]*' <<<"$versions" | sort -V | tail -1)+"
