// Per-thread CPU time of a node process, printed to stderr as it exits: preload it with
// `node --import ./scripts/thread-cpu.mjs ...`. Threads are named by their kernel thread id in
// order of creation: the first is the JavaScript thread, then V8's platform workers (TurboFan's
// concurrent compiles, the collector's helpers), then libuv's pool (the addon's commits, whose sys
// time is the kernel's work for them). What `/usr/bin/time` sums as one user time, split.
//
//   node --import ./scripts/thread-cpu.mjs dist-bench/bundle/load-child.js shape NS --shape 5 --services 10000 --endpoints 5

import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

process.on('exit', () => {
  const rows = [];
  for (const tid of readdirSync('/proc/self/task').sort((a, b) => Number(a) - Number(b))) {
    let stat;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    // Fields after the command name, which is in parentheses and may hold spaces: utime is the 14th field, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ms = (ticks) => (Number(ticks) * 1000) / TICKS_PER_SECOND;
    rows.push(`${tid} user ${ms(fields[11])} ms, sys ${ms(fields[12])} ms`);
  }
  process.stderr.write(`thread-cpu:\n  ${rows.join('\n  ')}\n`);
});
