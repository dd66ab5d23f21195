// What reading the input costs any program written in Node: every JSON file of a manifest
// directory read whole and given to JSON.parse, nothing else, with the proxy's node flags. Timed
// whole by `npm run bench:process` (the "node reads" side), it is the other half of a second floor:
// the kernel's time for the batch plus this is what a Node proxy that reads its input before it
// writes cannot go below (the proxy does more than this: its reader checks and keeps each object).
//
//   node dist-bench/bench/process/read-child.js DIR
//
// Prints the number of List items read.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: read-child.js DIR\n');
  process.exit(2);
}
let items = 0;
for (const name of readdirSync(dir).filter((n) => n.endsWith('.json'))) {
  const list = JSON.parse(readFileSync(join(dir, name), 'utf8')) as { items?: unknown[] };
  items += list.items?.length ?? 0;
}
process.stdout.write(`${items}\n`);
