// Property-based: generated Services and EndpointSlices, good ones and ones with one field replaced
// by a value of any type (or removed), fed through the manifest source into the change tracker
// (the generator and the checks: test/fixtures/manifest-fuzz.ts). Whatever the mix: nothing
// throws; every object is either delivered or refused by a problem that names it; every good
// object is delivered and programmed. Sized for CI (a few seconds); `npm run fuzz:manifests` runs
// the same over 10,000+ files, and through a long-running proxy.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChangeTracker } from '../../../src/proxy/model/tracker.js';
import { ManifestSource } from '../../../src/proxy/source/manifests.js';
import type { SourceProblem } from '../../../src/proxy/source/source.js';
import { checkFuzzFile, FUZZ_NAMESPACE, fuzzFile, fuzzFileName, fuzzFileText } from '../../fixtures/manifest-fuzz.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nftlink-fuzz-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('manifest source fuzzing', () => {
  it('never throws; each object delivered or refused by name; the good ones always programmed', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 7999 }).chain((i) => fuzzFile(i)),
        async (f) => {
          const file = join(dir, `run-${run++}-${fuzzFileName(f)}`);
          await writeFile(file, fuzzFileText(f));
          const tracker = new ChangeTracker({ nodeName: 'node-a' });
          const delivered = new Set<string>();
          const problems: SourceProblem[] = [];
          const source = new ManifestSource(file, { watch: false });
          await source.start({
            service: (t, s) => {
              delivered.add(`Service ${s.metadata?.namespace}/${s.metadata?.name}`);
              tracker.service(t, s);
            },
            endpointSlice: (t, s) => {
              delivered.add(`EndpointSlice ${s.metadata?.namespace}/${s.metadata?.name}`);
              tracker.endpointSlice(t, s);
            },
            synced: () => {},
            problem: (p) => problems.push(p),
          });
          await source.stop();
          const snap = tracker.snapshot();
          expect(checkFuzzFile(f, file, { delivered, problems }, snap.states.ipv4)).toEqual([]);
          expect(snap.invalid.filter((inv) => inv.ref.startsWith(`${FUZZ_NAMESPACE}/svc-`))).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  }, 30_000);
});
