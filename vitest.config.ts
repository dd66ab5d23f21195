import { defineConfig } from 'vitest/config';

export default defineConfig({
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
