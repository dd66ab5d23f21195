// A manifest List rewritten again and again, read by the real proxy process as it is rewritten (the
// re-reads that patch the List in place: manifest-objects.ts, ListPatch): once the writes stop and
// the proxy has synced them, a restart on its table (`proxy --once`) finds nothing to write, so no
// change was lost on the way. The control: rewrites made after the proxy stopped are written by the
// next restart, so the check can fail.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { ChurnFiles, EndpointChurn } from '../../../bench/process/churn-state.js';
import { ProxyProcess, runProxy } from '../../../src/netns/proxy-process.js';
import { withNetns } from '../../helpers/netns.js';
import { until } from './recorder.js';

/** The operations each family's sync of a `proxy --once` wrote. */
const operations = (stderr: string): number[] => [...stderr.matchAll(/"operations":(\d+)/g)].map((m) => Number(m[1]));

it('a List rewritten under a live proxy: once synced, a restart writes nothing; over later rewrites, it writes', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'nftlink-churn-proxy-'));
  try {
    await withNetns(1, async (ns) => {
      const churn = new EndpointChurn(300, 3, 11);
      const files = await ChurnFiles.create(dir, churn);
      const args = ['--manifests', dir, '--hostname-override', 'pb-node', '--node-ip', '198.19.255.254', '--cluster-cidr', '198.19.0.0/16', '--service-cidr', '198.18.0.0/16', '--min-sync-period', '200ms', '--metrics-bind-address', '', '--healthz-bind-address', '', '-v', '4'];
      const synced = (p: ProxyProcess): number => p.logs('synced').length;
      const rewrite = async (rounds: number): Promise<void> => {
        for (let r = 0; r < rounds; r++) {
          // The pause goes before each write, so the caller counts the syncs from the last write
          // on: a sync of it can finish within the debounce and one sync period.
          await sleep(60);
          const changed = churn.pick(10);
          for (const i of changed) churn.change(i);
          files.write(changed);
        }
      };

      const proxy = ProxyProcess.start(ns, args);
      try {
        await until(() => synced(proxy) >= 1, 'the first sync', 30_000);
        await rewrite(40);
        // Settled: a sync after the last write, then none for a second.
        const atLastWrite = synced(proxy);
        await until(() => synced(proxy) > atLastWrite, 'a sync of the last writes', 15_000);
        let seen = synced(proxy);
        for (let quiet = Date.now(); Date.now() - quiet < 1000; await sleep(100)) {
          if (synced(proxy) !== seen) [seen, quiet] = [synced(proxy), Date.now()];
        }
      } finally {
        await proxy.stop();
      }
      const restart = runProxy(ns, [...args, '--once']);
      expect(restart.code, restart.stderr).toBe(0);
      expect(operations(restart.stderr).length).toBeGreaterThan(0);
      expect(operations(restart.stderr).every((n) => n === 0), restart.stderr).toBe(true);

      // The control: rewrites the table does not hold (the proxy has stopped).
      await rewrite(3);
      const behind = runProxy(ns, [...args, '--once']);
      expect(behind.code, behind.stderr).toBe(0);
      expect(operations(behind.stderr).some((n) => n > 0)).toBe(true);
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, 120_000);
