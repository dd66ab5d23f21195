import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string): string => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

export default defineConfig({
  // Code under test that imports the package by its name (examples/cni-portmap, as an embedder
  // would) gets the sources, like every test: vite cannot transform the rollup bundle's
  // `import.meta` ("Cannot split a chunk that has already been edited"). The built package itself
  // is exercised where it runs as users run it: the examples' and the plugin's processes (node, not
  // vitest) and test/package.
  resolve: {
    alias: [
      { find: /^nftlink$/, replacement: src('index.ts') },
      { find: /^nftlink\/testing$/, replacement: src('testing/index.ts') },
    ],
  },
  test: {
    // Tests mirror src/ (test/nft, test/proxy/..., test/config, ...). *.kernel.test.ts need root: they
    // create network namespaces (and fail without the privileges, never skip); *.unit.test.ts do not
    // (`npm run test:unit` runs only those).
    // Kernel tests create namespaces and load rulesets; two workers fit this 2-core machine.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      // Everything, with the proxy's default layout (slots).
      { extends: true, test: { name: 'slots', include: ['test/**/*.test.ts'] } },
      // The proxy's end-to-end tests once more with kube-proxy's layout: both must pass everything.
      { extends: true, test: { name: 'kube-proxy-layout', include: ['test/proxy/dataplane/**/*.test.ts', 'test/proxy/proxier.unit.test.ts'], env: { NFTLINK_TEST_LAYOUT: 'kube-proxy' } } },
    ],
  },
});
