// A cold start (no chains of ours in the kernel) commits in parts while the next part is planned,
// and the verdict maps' elements (the dispatch maps service-ips, service-nodeports, ..., and the
// no-endpoint maps) all go in the last part. Nothing routes to a service before its dispatch
// element exists, so no service is ever half-programmed, and every service becomes reachable at
// the same commit, as with kube-proxy's one transaction; a resync against a live table stays one
// atomic transaction. How big a part is (Linux 6.18, perf and A/B runs of the slots layout):
// - not too big: binding an anonymous set walks the whole transaction (__nft_set_trans_bind), so
//   one transaction of 10k services in kube-proxy's layout costs tx length x sets; and the last
//   part's commit is all that is left once planning ends;
// - not too many: every commit that adds NAT rules validates the table (nft_table_validate): every
//   chain reachable from a base chain. With each part's dispatch elements in that part, every
//   service chain committed so far was reachable, so the validations grew quadratic in the table's
//   size; with the dispatch elements last, the earlier parts validate only the base chains and
//   the last part walks the table once.
// Hence parts of COLD_START_OPS, or 1/COLD_START_PARTS of the service ports when that is more
// (10k: 500 operations; 30k: 1500): with the validations no longer growing, smaller parts cost
// nothing and hold less in flight. The measurements: docs/decisions.md.

export const COLD_START_OPS = 500;
export const COLD_START_PARTS = 20;

/** Operations per cold-start part for a model of this many service ports. */
export function coldStartPartOps(servicePorts: number): number {
  return Math.max(COLD_START_OPS, Math.ceil(servicePorts / COLD_START_PARTS));
}
