# nftlink: a multi-stage build. The builder compiles the addon against libnftnl/libmnl and the
# TypeScript; the runtime image has only the shared libraries (no nft binary: nftlink never runs it).
# The proxy's npm dependencies are those of the nftlink-proxy workspace (proxy/package.json): npm ci
# installs them beside the library's.
# The base images are build arguments, for registries that mirror Docker Hub under other names.

ARG BUILD_IMAGE=node:24-bookworm
ARG RUNTIME_IMAGE=node:24-bookworm-slim

FROM ${BUILD_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends libnftnl-dev libmnl-dev pkg-config build-essential python3 \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json binding.gyp tsconfig.json ./
COPY proxy/package.json ./proxy/
COPY native ./native
RUN npm ci --no-audit --no-fund
COPY src ./src
COPY bin ./bin
COPY scripts/bundle.mjs ./scripts/
RUN npm run build:ts && npm prune --omit=dev

FROM ${RUNTIME_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends libnftnl11 libmnl0 \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/proxy/package.json ./proxy/
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY --from=build /src/bin ./bin
COPY --from=build /src/build/Release/nftlink.node ./build/Release/nftlink.node
# kube-proxy's command runs `nftlink proxy` with the same arguments: a kube-proxy DaemonSet needs only
# its image swapped (bin/kube-proxy).
RUN ln -s /app/bin/kube-proxy /usr/local/bin/kube-proxy
# The file's first line runs node with the proxy's V8 flags (bin/nftlink.js).
ENTRYPOINT ["/app/bin/nftlink.js"]
CMD ["--help"]
