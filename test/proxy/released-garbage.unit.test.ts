import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// In a process of its own, with --expose-gc (as bin/nftlink.js starts the proxy): gc() is counted
// when ReleasedGarbage calls it, while the script's own full collections stand for V8's.
const script = `
const { ReleasedGarbage } = await import(process.argv[1]);
const v8gc = globalThis.gc;
let calls = 0;
globalThis.gc = (options) => { calls++; v8gc(options); };
const run = (v8Collects, unlessCollected) => {
  const released = ReleasedGarbage.now();
  // A little garbage let go (too little for V8 to run a full collection of its own meanwhile).
  let garbage = [];
  for (let i = 0; i < 1000; i++) garbage.push({ key: [i] });
  garbage = undefined;
  if (v8Collects) v8gc({ type: 'major', execution: 'sync' });
  const before = calls;
  released.collect(unlessCollected);
  return calls - before;
};
console.log(JSON.stringify({
  restart: run(false, true),
  restartAfterV8: run(true, true),
  coldStartAfterV8: run(true, false),
}));
`;

describe('ReleasedGarbage (the first sync collects what reading left)', () => {
  it('collects at a restart\'s read-back only when V8 has not run a full collection meanwhile; a cold start always', () => {
    // The compiled module (npm run build:ts, as the CLI runs it).
    const module = fileURLToPath(new URL('../../dist/proxy/released-garbage.js', import.meta.url));
    const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script, module], { encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ restart: 1, restartAfterV8: 0, coldStartAfterV8: 1 });
  });

  it('is nothing without an exposed gc() (the library embedded in another program)', async () => {
    const { ReleasedGarbage } = await import('../../src/proxy/released-garbage.js');
    const exposed = typeof (globalThis as { gc?: unknown }).gc === 'function';
    expect(ReleasedGarbage.now() === undefined).toBe(!exposed);
  });
});
