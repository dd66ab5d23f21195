// npm run fuzz:manifests [-- --files N] [--first N] [--per-round N] [--seed N] [--no-kernel] [--json FILE]
// (after npm run build:ts and build:bench; as root for the proxy process in its own namespace).
// Prints the report of bench/reliability/fuzz-manifests.ts and exits 1 when a goal is missed.

import { writeFileSync } from 'node:fs';
import { intValue } from '../flag-values.js';
import { fuzzPassed, fuzzReport, runManifestFuzz, type FuzzOptions } from './fuzz-manifests.js';

const USAGE = 'usage: npm run fuzz:manifests -- [--files N (10000)] [--first N (0)] [--per-round N (200)] [--seed N (31)] [--no-kernel] [--json FILE]';

function parse(argv: readonly string[]): FuzzOptions & { json?: string } {
  const o: FuzzOptions & { json?: string } = { files: 10_000, perRound: 200, seed: 31, kernel: true, roundTimeoutMs: 30_000 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = (): string | undefined => argv[++i];
    if (flag === '--files') o.files = intValue(flag, value(), 1, USAGE);
    else if (flag === '--first') o.first = intValue(flag, value(), 0, USAGE);
    else if (flag === '--per-round') o.perRound = intValue(flag, value(), 1, USAGE);
    else if (flag === '--seed') o.seed = intValue(flag, value(), 0, USAGE);
    else if (flag === '--no-kernel') o.kernel = false;
    else if (flag === '--json') o.json = value();
    else throw new Error(`unknown flag ${flag}\n${USAGE}`);
  }
  return o;
}

const opts = parse(process.argv.slice(2));
const result = await runManifestFuzz(opts, (line) => process.stderr.write(`${line}\n`));
process.stdout.write(`${fuzzReport(result)}\n`);
if (opts.json) writeFileSync(opts.json, `${JSON.stringify(result, null, 1)}\n`);
process.exitCode = fuzzPassed(result) ? 0 : 1;
