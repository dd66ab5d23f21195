// kube-proxy writes a list match as `{ a, b }`, and nft loads a list of one into the kernel as a
// plain comparison (`ip daddr 198.18.200.0/24`: the prefix's bytes, or mask and compare), not as an
// anonymous set. Writing that comparison ourselves keeps each rule the one kube-proxy leaves in the
// kernel, so taking over its table rewrites nothing, and saves the table an anonymous set.

/** The one value of a one-element list, else the list (an anonymous set). */
export function oneOrSet(values: readonly string[]): string | string[] {
  return values.length === 1 ? values[0]! : [...values];
}
