#!/usr/bin/env bash
# Builds the image from the Dockerfile and runs it: the proxy, started from a manifest in a
# container with its own network namespace (--network none: never the host's ruleset), programs
# kube-proxy's table, and `nftlink list` in the same container reads it back. Exits non-zero if the
# build fails or the ruleset lacks the service. Needs a running Docker engine (CI has none).
#
#   bash scripts/docker-smoke.sh                      # docker build -t nftlink:smoke .
#   BUILD_IMAGE=mirror/node:24-bookworm RUNTIME_IMAGE=mirror/node:24-bookworm-slim bash scripts/docker-smoke.sh
#
# BUILD_IMAGE and RUNTIME_IMAGE pass the Dockerfile's base-image build arguments (a registry that
# mirrors Docker Hub); DOCKER_BUILD_FLAGS adds flags to docker build (e.g. --network host).
set -euo pipefail
cd "$(dirname "$0")/.."

image=${IMAGE:-nftlink:smoke}
build_args=()
[ -n "${BUILD_IMAGE:-}" ] && build_args+=(--build-arg "BUILD_IMAGE=$BUILD_IMAGE")
[ -n "${RUNTIME_IMAGE:-}" ] && build_args+=(--build-arg "RUNTIME_IMAGE=$RUNTIME_IMAGE")
# shellcheck disable=SC2086
docker build ${DOCKER_BUILD_FLAGS:-} "${build_args[@]}" -t "$image" .

manifests=$(mktemp -d)
trap 'rm -rf "$manifests"' EXIT
cat > "$manifests/web.yaml" <<'EOF'
apiVersion: v1
kind: Service
metadata: { name: web, namespace: smoke }
spec:
  type: NodePort
  clusterIP: 198.18.100.10
  clusterIPs: [198.18.100.10]
  ipFamilies: [IPv4]
  ports: [{ name: http, port: 80, targetPort: 8080, protocol: TCP, nodePort: 30080 }]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: web-1, namespace: smoke, labels: { kubernetes.io/service-name: web } }
addressType: IPv4
ports: [{ name: http, port: 8080, protocol: TCP }]
endpoints:
  - { addresses: [198.18.1.2], conditions: { ready: true } }
  - { addresses: [198.18.1.3], conditions: { ready: true } }
EOF
chmod -R a+rX "$manifests"

# NET_ADMIN is enough for nftables in the container's own namespace; the conntrack sysctls need a
# privileged container (the DaemonSet is), so the proxy logs that it could not set them.
listing=$(docker run --rm --network none --cap-add NET_ADMIN -v "$manifests:/manifests:ro" --entrypoint sh "$image" -c \
  '/app/bin/nftlink.js proxy --manifests /manifests --once --node-ip 198.18.0.1 --service-cidr 198.18.100.0/24 >/dev/null 2>&1 && /app/bin/nftlink.js list')

fail() { echo "docker-smoke: $1" >&2; echo "$listing" >&2; exit 1; }
grep -q 'table ip kube-proxy' <<<"$listing" || fail 'no table ip kube-proxy'
grep -q '198.18.100.10 . tcp . 80 : goto service-' <<<"$listing" || fail 'no service-ips element for 198.18.100.10:80'
grep -q 'tcp . 30080 : goto external-' <<<"$listing" || fail 'no service-nodeports element for 30080'
grep -q '198.18.1.2 . 8080' <<<"$listing" || fail 'endpoint 198.18.1.2:8080 missing'
grep -q '198.18.1.3 . 8080' <<<"$listing" || fail 'endpoint 198.18.1.3:8080 missing'
echo "docker-smoke ok: $image built, programmed kube-proxy's table in its own namespace and read it back ($(wc -l <<<"$listing") lines)"
