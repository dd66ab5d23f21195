#!/usr/bin/env bash
# The npm package as a user without a compiler gets it: packs the library (`npm pack`, which builds
# the prebuilt addon: scripts/build-prebuilt.sh), then in a Debian bookworm root filesystem with only
# the base system and Node (no compiler, no python, no pkg-config, no -dev package, no libnftnl or
# libmnl) runs `npm install` of the tarball, checks that nothing was compiled, that
# `import('nftlink')` loads the prebuilt addon, and commits a transaction in a fresh network
# namespace. Prints the packed package's size and what the install brought (packages and size).
# Run as root. test/package/prebuilt-chroot.kernel.test.ts runs it.
#
# The base root filesystem (debootstrap --variant=minbase, about a minute) is kept in
# $NFTLINK_CHROOT_CACHE (default /var/cache/nftlink/bookworm-minbase) and copied for each run, so
# every run starts from the same clean system. The repository is packed from a copy, so a running
# test suite's build/Release is never rebuilt under it.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
. scripts/node-env.sh
nftlink_node_ok || { echo "check-prebuilt: no Node.js that package.json accepts (run scripts/setup.sh)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "check-prebuilt: run as root (debootstrap, chroot, network namespaces)" >&2; exit 1; }

mirror=${NFTLINK_DEBIAN_MIRROR:-http://deb.debian.org/debian}
base=${NFTLINK_CHROOT_CACHE:-/var/cache/nftlink/bookworm-minbase}
work=$(mktemp -d /tmp/nftlink-prebuilt-check.XXXXXX)
root=$work/root
cleanup() {
  for m in proc dev; do mountpoint -q "$root/$m" 2>/dev/null && umount -l "$root/$m"; done
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT

# 1. The base system, made once.
if [ ! -x "$base/bin/sh" ]; then
  command -v debootstrap >/dev/null || {
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
  }
  mkdir -p "$(dirname "$base")"
  tmp=$(mktemp -d "$base.XXXXXX")
  echo "check-prebuilt: debootstrap bookworm (minbase) into $base"
  debootstrap --variant=minbase bookworm "$tmp" "$mirror" > "$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log" >&2; rm -rf "$tmp"; exit 1; }
  mv -T "$tmp" "$base" 2>/dev/null || rm -rf "$tmp" # a concurrent run that got there first keeps its own
fi

# 2. The package, packed from a copy of the sources (prepack builds the prebuilt addon and dist/).
stage=$work/stage
mkdir -p "$stage/scripts" "$stage/proxy"
cp -a package.json package-lock.json binding.gyp tsconfig.json README.md native src "$stage/"
cp -a scripts/node-env.sh scripts/build-prebuilt.sh scripts/bundle.mjs "$stage/scripts/"
cp -a proxy/package.json "$stage/proxy/"
ln -s "$repo/node_modules" "$stage/node_modules"
start=$SECONDS
(cd "$stage" && npm pack --silent --pack-destination "$work" > "$work/pack.log" 2>&1) ||
  { tail -30 "$work/pack.log" >&2; exit 1; }
tarball=$(ls "$work"/nftlink-*.tgz)
contents=$(tar -tzf "$tarball")
echo "check-prebuilt: packed $(basename "$tarball") in $((SECONDS - start)) s: $(stat -c %s "$tarball") bytes, $(echo "$contents" | wc -l) files"
grep -qx 'package/prebuilds/linux-x64/nftlink.glibc.node' <<<"$contents" ||
  { echo "check-prebuilt: the tarball has no prebuilt addon" >&2; exit 1; }

# 3. A fresh copy of the base, with the pinned Node (bin/node and npm; not its headers).
start=$SECONDS
cp -a "$base" "$root"
node_prefix=$(dirname "$(dirname "$(command -v node)")")
mkdir -p "$root/opt/node"
cp -a "$node_prefix/bin" "$node_prefix/lib" "$root/opt/node/"
# The host's way to the registry: its resolver, its npm registry and the extra CA bundle it tells
# Node to trust (a proxy's), when it has them.
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
extra_ca=()
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  cp -L "$NODE_EXTRA_CA_CERTS" "$root/etc/nftlink-extra-ca.pem"
  extra_ca=(NODE_EXTRA_CA_CERTS=/etc/nftlink-extra-ca.pem)
fi
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
in_root() { chroot "$root" /usr/bin/env -i PATH=/opt/node/bin:/usr/bin:/bin HOME=/root "${extra_ca[@]}" \
  ${npm_config_registry:+npm_config_registry=$npm_config_registry} "$@"; }

missing=$(in_root sh -c 'for t in cc gcc g++ c++ make python3 pkg-config; do command -v $t; done; ls /usr/lib/x86_64-linux-gnu | grep -E "^lib(nftnl|mnl)\." ; ls /usr/include 2>/dev/null | grep -E "^lib(nftnl|mnl)$"' || true)
[ -z "$missing" ] || { echo "check-prebuilt: the root filesystem is not bare: $missing" >&2; exit 1; }
echo "check-prebuilt: root filesystem (copied in $((SECONDS - start)) s): Debian $(cat "$root/etc/debian_version") minbase, Node $(in_root node --version), npm $(in_root npm --version); no compiler, python3, pkg-config, libnftnl or libmnl"

# 4. npm install of the tarball, as a user's project would.
mkdir -p "$root/app"
cp "$tarball" "$root/app/"
printf '{ "name": "app", "version": "1.0.0", "private": true, "type": "module" }\n' > "$root/app/package.json"
start=$SECONDS
in_root sh -c "cd /app && npm install --no-audit --no-fund --foreground-scripts ./$(basename "$tarball")" > "$work/install.log" 2>&1 ||
  { cat "$work/install.log" >&2; echo "check-prebuilt: npm install failed" >&2; exit 1; }
echo "check-prebuilt: npm install took $((SECONDS - start)) s"
# npm ran the package's install script (node-gyp-build: it tests the prebuilt addon, and compiles only
# when that does not load).
grep -q '^> node-gyp-build$' "$work/install.log" &&
  echo "check-prebuilt: the install script (node-gyp-build) ran and loaded the prebuilt addon"
if [ -e "$root/app/node_modules/nftlink/build" ]; then
  echo "check-prebuilt: npm install compiled the addon (node_modules/nftlink/build exists)" >&2; exit 1
fi
packages=$(in_root sh -c 'cd /app && npm ls --all --parseable' | sed -n 's|^/app/node_modules/||p' | sort)
echo "check-prebuilt: installed $(echo "$packages" | wc -l) packages: $(echo $packages)"
echo "check-prebuilt: node_modules: $(du -sk "$root/app/node_modules" | cut -f1) kB"

# 5. import('nftlink') in a new network namespace: a transaction commits and reads back, and the
# addon the process mapped is the prebuilt one.
cat > "$root/app/check.mjs" <<'EOF'
import { readFileSync } from 'node:fs';
const { Nftables, Transaction, renderRuleset } = await import('nftlink');
const tx = new Transaction()
  .add({ table: { family: 'inet', name: 'prebuilt_check' } })
  .add({ chain: { family: 'inet', table: 'prebuilt_check', name: 'input',
                  base: { type: 'filter', hook: 'input', priority: 0, policy: 'accept' } } });
const nft = Nftables.open();
await nft.commit(tx);
const text = renderRuleset(await nft.dump({ family: 'inet', table: 'prebuilt_check' }));
nft.close();
const addon = readFileSync('/proc/self/maps', 'utf8').split('\n').map((l) => l.split(/\s+/)[5]).find((p) => p?.endsWith('.node'));
console.log(`addon: ${addon}`);
console.log(text.trimEnd());
EOF
in_root unshare --net sh -c 'cd /app && node check.mjs' | tee "$work/check.log" | sed 's/^/check-prebuilt: /'
grep -qx 'addon: /app/node_modules/nftlink/prebuilds/linux-x64/nftlink.glibc.node' "$work/check.log" ||
  { echo "check-prebuilt: the prebuilt addon was not the one loaded" >&2; exit 1; }
grep -q 'table inet prebuilt_check' "$work/check.log" || { echo "check-prebuilt: the table did not read back" >&2; exit 1; }
echo "check-prebuilt: ok"
