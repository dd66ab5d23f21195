// A probe's comma-separated integer option (`--elements 300,3000`), refused with the option's name.

/** `text` as integers of at least `least`; throws naming the bench and the option otherwise. */
export function intList(text: string, bench: string, option: string, least: number): number[] {
  const xs = text.split(',').map(Number);
  if (xs.some((x) => !Number.isInteger(x) || x < least)) throw new Error(`bench:${bench}: --${option} takes integers of at least ${least}, got "${text}"`);
  return xs;
}
