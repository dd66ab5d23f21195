#!/usr/bin/env bash
# Installs everything nftlink needs on a fresh Debian (bookworm) machine, as root, and builds it:
# the system libraries and tools, the npm dependencies (pinned by package-lock.json), the native
# addon and the TypeScript. Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(libnftnl-dev libmnl-dev nftables pkg-config iproute2 build-essential python3 time conntrack iptables)
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

node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 20 ]; then
  echo "setup: nftlink needs Node.js 20 or later (found: $(node --version 2>/dev/null || echo none))" >&2
  exit 1
fi

# npm ci also builds the addon (the package's install script runs node-gyp).
stamp=node_modules/.nftlink-lock
if [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
  npm ci --no-audit --no-fund
  cp package-lock.json "$stamp"
fi
[ -f build/Release/nftlink.node ] || npm run build:native
npm run build:ts && npm run build:bench
echo "setup: ready (addon build/Release/nftlink.node, CLI bin/nftlink.js)"
