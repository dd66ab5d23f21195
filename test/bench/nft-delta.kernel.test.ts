// bench:process's churn ratio times `nft -f` of the difference between two `nftlink render` texts
// (bench/process/nft-delta.ts) against the proxy's own sync of the same change. That comparison is
// only fair if the script does the whole change: here, in fresh namespaces, the forward script
// takes a table loaded with the first ruleset to exactly what loading the second gives, and the
// back script returns it, in both layouts, after replacements, additions and removals.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EndpointChurn } from '../../bench/process/churn-state.js';
import { NODE_IP, NODE_NAME, POD_CIDR, SERVICE_CIDR, writeManifests } from '../../bench/process/manifests.js';
import { nftDelta } from '../../bench/process/nft-delta.js';
import { renderProxy } from '../../src/cli/proxy.js';
import type { Netns as NetnsType } from '../../src/netns/netns.js';
import { Netns } from '../helpers/netns.js';

const dir = mkdtempSync(join(tmpdir(), 'nftlink-delta-'));
const namespaces: NetnsType[] = [];
afterAll(() => {
  for (const ns of namespaces) ns.remove();
  rmSync(dir, { recursive: true, force: true });
});

const render = (manifests: string, layout: string): Promise<string> =>
  renderProxy(['--manifests', manifests, '--netns', 'render-only', '--hostname-override', NODE_NAME, '--node-ip', NODE_IP, '--cluster-cidr', POD_CIDR, '--service-cidr', SERVICE_CIDR, '--layout', layout]);

/** The ruleset as nft lists it, its lines sorted (element order within a set is not the point). */
function listed(ns: NetnsType): string {
  return ns
    .exec('nft', ['list', 'ruleset'])
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .sort()
    .join('\n');
}

function loaded(text: string): NetnsType {
  const ns = Netns.create();
  namespaces.push(ns);
  ns.exec('nft', ['-f', '-'], text);
  return ns;
}

describe.each(['slots', 'kube-proxy'])('the %s layout', (layout) => {
  it('the forward script gives the second ruleset and the back script the first', async () => {
    const churn = new EndpointChurn(60, 3);
    await writeManifests(join(dir, `${layout}-a`), 60, 3);
    for (const i of churn.pick(20)) churn.change(i);
    await writeManifests(join(dir, `${layout}-b`), 60, 3, (i) => churn.endpointsOf(i));
    const a = await render(join(dir, `${layout}-a`), layout);
    const b = await render(join(dir, `${layout}-b`), layout);
    const forward = nftDelta(a, b);
    expect(forward).not.toBe('');
    const ns = loaded(a);
    const expected = listed(loaded(b));
    ns.exec('nft', ['-f', '-'], forward);
    expect(listed(ns)).toBe(expected);
    ns.exec('nft', ['-f', '-'], nftDelta(b, a));
    expect(listed(ns)).toBe(listed(loaded(a)));
  });
});
