// `npm run fuzz:manifests` at CI size: 60 generated files in three rounds through one watched
// directory, read by the real proxy process (programming a namespace of its own) and by an
// in-process manifest source. The goals are the long run's: no model or kernel failure, no object of
// the stable file lost, no unhandled error, no proxy exit, no JavaScript error in its log.

import { expect, it } from 'vitest';
import { fuzzPassed, fuzzReport, runManifestFuzz } from '../../../bench/reliability/fuzz-manifests.js';
import { requirePrivileges } from '../../helpers/netns.js';

it('the manifest fuzzer, small: every good object programmed in every round, nothing else lost, nothing thrown', async () => {
  requirePrivileges();
  const result = await runManifestFuzz({ files: 60, perRound: 20, seed: 7, kernel: true, roundTimeoutMs: 20_000 });
  expect(result.files).toBe(60);
  expect(result.rounds).toBe(3);
  expect(result.goodObjects).toBeGreaterThan(100);
  expect(result.refused).toBeGreaterThan(0);
  expect(fuzzPassed(result), fuzzReport(result)).toBe(true);
}, 120_000);
