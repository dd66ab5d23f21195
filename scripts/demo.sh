#!/usr/bin/env bash
# The main job: sets everything up, then programs a kube-proxy-style ruleset over netlink in a fresh
# network namespace and sends real TCP connections through its DNAT rule. Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The node setup chose (its own install first on PATH, when it made one).
. scripts/node-env.sh
exec node dist/demo/proxy-demo.js
