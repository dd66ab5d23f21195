// The child's side of a line RPC (line-rpc.ts is the parent's): one JSON command per line on
// stdin ({id, op, ...args}), one JSON answer per line on stdout ({id, ok: true, result} or
// {id, ok: false, error}); the process ends when stdin does. Plain JavaScript, so that the child
// scripts run with node as they are (test/e2e/fake-apiserver.mjs, bench/reliability/api-child.mjs).

import { createInterface } from 'node:readline';

/** Answers each command line with `commands[op](command)`, awaited. */
export function serveCommands(commands) {
  createInterface({ input: process.stdin, crlfDelay: Infinity }).on('line', async (line) => {
    if (!line.trim()) return;
    const c = JSON.parse(line);
    try {
      const fn = commands[c.op];
      if (!fn) throw new Error(`unknown command ${c.op}`);
      const result = await fn(c);
      process.stdout.write(`${JSON.stringify({ id: c.id, ok: true, result: result ?? null })}\n`);
    } catch (err) {
      process.stdout.write(`${JSON.stringify({ id: c.id, ok: false, error: String(err?.message ?? err) })}\n`);
    }
  });
  process.stdin.on('end', () => process.exit(0));
}
