// The slots layout's promises, checked against the kernel in a fresh namespace through the sync
// engine: a replaced endpoint is element operations only, a count change is the chain's one rule
// replaced by handle, a restart writes nothing and keeps the slots, and buckets stay bounded (no map
// with more bindings than the bucket size, empty buckets deleted) and sized by the table's shape.
// Those tests give their services an external IP: a port reached through its ClusterIP alone has
// no service chain and no slot range (balance chains, tested at the end).

import { afterAll, describe, expect, it } from 'vitest';
import { BenchModel, benchConfig, change } from '../../fixtures/scale-model.js';
import { Nftables } from '../../../src/nft/client.js';
import type { NftSet, Ruleset, SetElement } from '../../../src/nft/objects.js';
import { Transaction } from '../../../src/nft/transaction.js';
import type { Logger } from '../../../src/logging/logger.js';
import { SLOTS_PER_CHAIN } from '../../../src/proxy/layout/slots/allocator.js';
import { SlotsLayout } from '../../../src/proxy/layout/slots/index.js';
import { slotRangeOf } from '../../../src/proxy/layout/slots/rule-tags.js';
import { FamilySync } from '../../../src/proxy/sync/family-sync.js';
import { previewTransaction } from '../../../src/proxy/sync/planner.js';
import { namespacesForFile } from '../../helpers/netns.js';
import { clusterIPServicePort } from '../../fixtures/proxy-model.js';
import type { ProxyState, ServiceEndpoint, ServicePort } from '../../../src/proxy/model/types.js';

const freshNetns = namespacesForFile(afterAll);

/** A logger that keeps the nft text of every transaction the engine commits. */
function transactionLog(): Logger & { texts: string[] } {
  const texts: string[] = [];
  const none = (): void => {};
  return { texts, error: none, warn: none, info: none, debug: none, trace: (_m, f) => void texts.push(String(f?.nft ?? '')) };
}

/** A connection to a fresh namespace for one test, closed after it. */
async function withNft(fn: (nft: Nftables) => Promise<void>): Promise<void> {
  const nft = Nftables.open({ netns: freshNetns().name });
  try {
    await fn(nft);
  } finally {
    nft.close();
  }
}

const bucketMaps = (rs: Ruleset): string[] => rs.sets.filter((s) => /^endpoints-\d+$/.test(s.name)).map((s) => s.name);

/** Rules per bucket map (each binds it once). */
function bindings(rs: Ruleset): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rs.rules) for (const e of r.exprs) if (e.type === 'lookup' && /^endpoints-\d+$/.test(e.set)) out.set(e.set, (out.get(e.set) ?? 0) + 1);
  return out;
}

describe('slots layout against the kernel', () => {
  it('leaves out the one service port whose element the kernel refuses, programs the others, and takes it back once it changes', () =>
    withNft(async (nft) => {
      const model = new BenchModel(12, 2);
      const [bad] = model.pick(1, 3);
      // A layout that points the bad service's dispatch element at a chain that does not exist:
      // the transaction validates it (no dump to check jumps against), the kernel says ENOENT.
      const layout = new SlotsLayout();
      const service = layout.service.bind(layout);
      let broken = true;
      layout.service = (cfg, sp, eps) => {
        const objs = service(cfg, sp, eps);
        if (sp.id !== bad || !broken) return objs;
        const elements = new Map(objs.elements);
        elements.set('service-ips', (elements.get('service-ips') ?? []).map((e) => ({ ...e, value: { kind: 'goto' as const, chain: 'no-such-chain' } })));
        return { ...objs, elements };
      };
      const errors: string[] = [];
      const log = { ...transactionLog(), error: (m: string, f?: Record<string, unknown>) => void errors.push(`${m} ${String(f?.servicePort)}`) };
      const sync = new FamilySync(nft, layout, benchConfig(), log);
      const first = await sync.sync(model.state(), undefined);
      expect(first.excluded).toBe(1);
      expect(errors).toEqual([`service port left out: the kernel refused its objects ${bad}`]);
      const dispatched = async (): Promise<number> => (await nft.dump({ family: 'ip', table: 'kube-proxy' })).sets.find((x) => x.name === 'service-ips')!.elements!.length;
      expect(await dispatched()).toBe(11);
      // Fixed, and changed: it is programmed again.
      broken = false;
      model.replaceEndpoint(bad!);
      const again = await sync.sync(model.state(), change({ endpoints: [bad!] }));
      expect(again.excluded).toBe(0);
      expect(await dispatched()).toBe(12);
    }));

  it('replaces an endpoint with element operations only, and a count change with one rule replaced by handle', () =>
    withNft(async (nft) => {
      const model = new BenchModel(20, 3, { external: true });
      const log = transactionLog();
      const sync = new FamilySync(nft, new SlotsLayout(), benchConfig(), log);
      await sync.sync(model.state(), undefined);
      const [id] = model.pick(1, 5);
      const chainRule = async () => (await nft.dump({ family: 'ip', table: 'kube-proxy' })).rules.find((r) => r.chain.includes(`/${id!.split('/')[1]!.split(':')[0]}/`))!;
      const before = await chainRule();

      log.texts.length = 0;
      model.replaceEndpoint(id!);
      const replaced = await sync.sync(model.state(), change({ endpoints: [id!] }));
      expect(replaced.operations).toBeGreaterThan(0);
      expect(log.texts.join('\n')).not.toMatch(/rule|chain/);
      expect(log.texts.join('\n')).toMatch(/delete element ip kube-proxy endpoints-0/);
      expect((await chainRule()).handle).toBe(before.handle);

      // The first count change flushes the chain and learns the new rule's handle from its echo.
      log.texts.length = 0;
      model.scaleUp(id!);
      await sync.sync(model.state(), change({ endpoints: [id!] }));
      expect(log.texts.join('\n')).toMatch(/flush chain/);
      const learned = await chainRule();
      expect(learned.exprs.find((e) => e.type === 'numgen')).toMatchObject({ modulus: 4 });

      // The next one is a replace by that handle: no flush, the handle stays.
      log.texts.length = 0;
      model.scaleDown(id!);
      await sync.sync(model.state(), change({ endpoints: [id!] }));
      const text = log.texts.join('\n');
      expect(text).toMatch(new RegExp(`replace rule ip kube-proxy \\S+ handle ${learned.handle} `));
      expect(text).not.toMatch(/flush chain/);
      const after = await chainRule();
      expect(after.handle).toBe(learned.handle);
      expect(after.exprs.find((e) => e.type === 'numgen')).toMatchObject({ modulus: 3 });
    }));

  it('restarts without writing, keeping every slot, and the next endpoint change is elements only', () =>
    withNft(async (nft) => {
      const model = new BenchModel(200, 5, { external: true });
      const first = new FamilySync(nft, new SlotsLayout(), benchConfig(), transactionLog());
      await first.sync(model.state(), undefined);
      // Churn first, so that the slot assignment is not the one a cold start would choose.
      for (const id of model.pick(10, 3)) model.replaceEndpoint(id);
      for (const id of model.pick(5, 1)) model.scaleDown(id);
      await first.sync(model.state(), change({ endpoints: [...model.pick(10, 3), ...model.pick(5, 1)] }));

      const log = transactionLog();
      const restarted = new FamilySync(nft, new SlotsLayout(), benchConfig(), log);
      const r = await restarted.sync(model.state(), undefined);
      expect(r.operations).toBe(0);
      expect(log.texts).toEqual([]);

      const [id] = model.pick(1, 77);
      model.replaceEndpoint(id!);
      await restarted.sync(model.state(), change({ endpoints: [id!] }));
      expect(log.texts.join('\n')).not.toMatch(/rule|chain/);
    }));

  it('a restart onto rules written without tag or digest (by nft, or before them) adopts every slot from the expressions: rules rewritten, no element, then nothing', async () => {
    const ns = freshNetns();
    const nft = Nftables.open({ netns: ns.name });
    try {
      const model = new BenchModel(100, 3, { external: true });
      const first = new FamilySync(nft, new SlotsLayout(), benchConfig(), transactionLog());
      await first.sync(model.state(), undefined);
      // Churn first, so that the slot assignment is not the one a cold start would choose.
      for (const id of model.pick(10, 5)) model.replaceEndpoint(id);
      await first.sync(model.state(), change({ endpoints: model.pick(10, 5) }));
      const before = await nft.dump({ family: 'ip', table: 'kube-proxy' });
      const tagged = before.rules.filter((r) => r.tag !== undefined);
      expect(tagged.length).toBe(100);
      // The same rules, written by nft: no userdata but what nft writes.
      const rewrite = tagged.map((r) => {
        const { bucket, member, endpoints } = slotRangeOf(r)!;
        return `replace rule ip kube-proxy ${r.chain} handle ${r.handle} meta l4proto tcp dnat ip addr . port to numgen random mod ${endpoints} offset ${member * SLOTS_PER_CHAIN} map @endpoints-${bucket}`;
      });
      ns.exec('nft', ['-f', '-'], rewrite.join('\n') + '\n');
      const serviceChains = new Set(tagged.map((r) => r.chain));
      const read = (await nft.dump({ family: 'ip', table: 'kube-proxy', ruleExprs: false })).rules.filter((r) => serviceChains.has(r.chain));
      expect(read.filter((r) => r.exprs.length > 0 && r.exprsDigest === undefined && r.tag === undefined).length).toBe(100);

      const log = transactionLog();
      const restarted = new FamilySync(nft, new SlotsLayout(), benchConfig(), log);
      const r = await restarted.sync(model.state(), undefined);
      expect(r.operations).toBe(100);
      expect(log.texts.join('\n')).not.toMatch(/element/);
      const after = await nft.dump({ family: 'ip', table: 'kube-proxy' });
      const elementsOf = (rs: Ruleset) => rs.sets.filter((s) => /^endpoints-\d+$/.test(s.name)).map((s) => [s.name, s.elements]);
      expect(elementsOf(after)).toEqual(elementsOf(before));
      expect(after.rules.filter((x) => x.tag !== undefined).length).toBe(100);

      const again = await new FamilySync(nft, new SlotsLayout(), benchConfig(), transactionLog()).sync(model.state(), undefined);
      expect(again.operations).toBe(0);
    } finally {
      nft.close();
    }
  });

  it('a restart onto shared sets another process changed writes exactly the difference (the sets compared by hashes first), and the next restart nothing', () =>
    withNft(async (nft) => {
      const model = new BenchModel(50, 3, { external: true });
      await new FamilySync(nft, new SlotsLayout(), benchConfig(), transactionLog()).sync(model.state(), undefined);
      const contents = async (): Promise<Map<string, string[]>> => {
        const rs = await nft.dump({ family: 'ip', table: 'kube-proxy' });
        return new Map(rs.sets.filter((x) => x.elements?.length).map((x) => [x.name, x.elements!.map((e) => JSON.stringify(e)).sort()]));
      };
      const programmed = await contents();
      const rs = await nft.dump({ family: 'ip', table: 'kube-proxy' });
      const set = (name: string): NftSet & { elements: readonly SetElement[] } => {
        const x = rs.sets.find((y) => y.name === name)!;
        return { family: x.family, table: x.table, name: x.name, key: x.key, ...(x.data ? { data: x.data } : {}), elements: x.elements! };
      };
      const { elements: hairpinElements, ...hairpin } = set('hairpin-connections');
      const { elements: _clusterIPs, ...clusterIPs } = set('cluster-ips');
      const { elements: bucketElements, ...bucket } = set(bucketMaps(rs)[0]!);
      const gone = hairpinElements[0]!;
      const moved = bucketElements[0]!;
      await nft.commit(
        new Transaction()
          .delete({ set: hairpin, elements: [gone] })
          .add({ set: clusterIPs, elements: [{ key: ['198.18.255.250'] }] })
          .delete({ set: bucket, elements: [moved] })
          .add({ set: bucket, elements: [{ key: moved.key, value: ['198.19.255.250', 9999] }] }),
      );

      const log = transactionLog();
      const r = await new FamilySync(nft, new SlotsLayout(), benchConfig(), log).sync(model.state(), undefined);
      expect(r.elementsChanged).toBe(4);
      expect(log.texts.join('\n')).not.toMatch(/rule|chain/);
      expect(await contents()).toEqual(programmed);
      expect((await new FamilySync(nft, new SlotsLayout(), benchConfig(), transactionLog()).sync(model.state(), undefined)).operations).toBe(0);
    }));

  it('a restart that leaves a large set out of its dump flushes and writes it whole in its one transaction, whatever another process changed in it', () =>
    withNft(async (nft) => {
      const model = new BenchModel(50, 3);
      await new FamilySync(nft, new SlotsLayout(), benchConfig(), transactionLog()).sync(model.state(), undefined);
      const hairpinOf = async (): Promise<string[]> => {
        const rs = await nft.dump({ family: 'ip', table: 'kube-proxy' });
        return rs.sets.find((x) => x.name === 'hairpin-connections')!.elements!.map((e) => JSON.stringify(e)).sort();
      };
      const programmed = await hairpinOf();
      // The dump leaves the set's elements out when asked, and only that set's.
      const partial = await nft.dump({ family: 'ip', table: 'kube-proxy', omitElementsOf: ['hairpin-connections'] });
      expect(partial.sets.find((x) => x.name === 'hairpin-connections')!.elements).toBeUndefined();
      expect(partial.sets.find((x) => x.name === 'cluster-ips')!.elements!.length).toBeGreaterThan(0);
      await expect(nft.dump({ omitElementsOf: ['hairpin-connections'] })).rejects.toThrow(/give its `table`/);

      const hairpin = { family: 'ip', table: 'kube-proxy', name: 'hairpin-connections', key: partial.sets.find((x) => x.name === 'hairpin-connections')!.key } as const;
      const gone = JSON.parse(programmed[0]!) as SetElement;
      await nft.commit(new Transaction().delete({ set: hairpin, elements: [gone] }).add({ set: hairpin, elements: [{ key: ['198.19.255.250', '198.19.255.250', 'tcp', 9999] }] }));

      const layout = new SlotsLayout();
      layout.largeSets = () => ['hairpin-connections'];
      const log = transactionLog();
      const r = await new FamilySync(nft, layout, benchConfig(), log).sync(model.state(), undefined);
      expect(log.texts).toHaveLength(1);
      expect(log.texts[0]).toMatch(/^flush set ip kube-proxy hairpin-connections\nadd element ip kube-proxy hairpin-connections \{/m);
      expect(log.texts[0]).not.toMatch(/rule|chain/);
      expect(r.operations).toBe(2);
      expect(await hairpinOf()).toEqual(programmed);
      // Read back in full, the set is as written: a restart without the override writes nothing.
      expect((await new FamilySync(nft, new SlotsLayout(), benchConfig(), transactionLog()).sync(model.state(), undefined)).operations).toBe(0);
    }));

  it('commits a cold start in parts, with every verdict map element in the last part', () =>
    withNft(async (nft) => {
      // 1500 service ports of 6 operations each (the port, its service chain and rule, its external
      // chain and two rules): parts of 500 operations (COLD_START_OPS).
      const model = new BenchModel(1500, 1, { external: true });
      const log = transactionLog();
      const sync = new FamilySync(nft, new SlotsLayout(), benchConfig(), log);
      await sync.sync(model.state(), undefined);
      expect(log.texts.length).toBeGreaterThanOrEqual(3);
      const verdictElements = /^add element ip kube-proxy \S+ \{[^}]*: (goto|jump|drop|accept)\b/m;
      const parts = log.texts.slice(0, -1);
      for (const part of parts) {
        expect(part).toMatch(/^add chain ip kube-proxy service-/m);
        expect(part).toMatch(/^add element ip kube-proxy endpoints-\d+ /m);
        expect(part).not.toMatch(verdictElements);
      }
      expect(log.texts.at(-1)).toMatch(/^add element ip kube-proxy service-ips /m);
      const rs = await nft.dump({ family: 'ip', table: 'kube-proxy' });
      // Each port's ClusterIP and external IP.
      expect(rs.sets.find((s) => s.name === 'service-ips')!.elements).toHaveLength(3000);
      expect(rs.chains.filter((c) => /^service-[A-Z0-9]{8}-/.test(c.name))).toHaveLength(1500);
    }));

  it('keeps buckets bounded: no map bound by more chains than the bucket size, empty buckets deleted', () =>
    withNft(async (nft) => {
      const model = new BenchModel(30, 2, { external: true });
      const sync = new FamilySync(nft, new SlotsLayout(8), benchConfig(), transactionLog());
      await sync.sync(model.state(), undefined);
      let rs = await nft.dump({ family: 'ip', table: 'kube-proxy' });
      expect(bucketMaps(rs).sort()).toEqual(['endpoints-0', 'endpoints-1', 'endpoints-2', 'endpoints-3']);
      expect(Math.max(...bindings(rs).values())).toBe(8);

      // The last bucket's 6 chains go: its map goes with them.
      const last = [...model.services.keys()].slice(24);
      for (const id of last) model.removeService(id);
      await sync.sync(model.state(), change({ removed: last }));
      rs = await nft.dump({ family: 'ip', table: 'kube-proxy' });
      expect(bucketMaps(rs).sort()).toEqual(['endpoints-0', 'endpoints-1', 'endpoints-2']);

      // New services fill the free members of the lowest buckets first.
      const added = [model.addService(2), model.addService(2)];
      await sync.sync(model.state(), change({ services: added }));
      rs = await nft.dump({ family: 'ip', table: 'kube-proxy' });
      expect(bucketMaps(rs).sort()).toEqual(['endpoints-0', 'endpoints-1', 'endpoints-2', 'endpoints-3']);
      for (const n of bindings(rs).values()) expect(n).toBeLessThanOrEqual(8);
    }));

  it('sizes a cold start\'s buckets by the state\'s shape (7000 x 1: 128 chains a map), and a restart keeps them', () =>
    withNft(async (nft) => {
      const model = new BenchModel(7000, 1, { external: true });
      await new FamilySync(nft, new SlotsLayout(), benchConfig(), transactionLog()).sync(model.state(), undefined);
      const rs = await nft.dump({ family: 'ip', table: 'kube-proxy' });
      expect(bucketMaps(rs)).toHaveLength(Math.ceil(7000 / 128));
      expect(Math.max(...bindings(rs).values())).toBe(128);
      // `nftlink render` of the same state writes the same maps.
      const rendered = previewTransaction(new SlotsLayout(), benchConfig(), model.state(), transactionLog()).render();
      expect(rendered.match(/^add map ip kube-proxy endpoints-\d+ /gm)).toHaveLength(Math.ceil(7000 / 128));
      // A restart with a state that alone would take 64 chains a map: the table keeps 128, nothing written.
      for (const id of model.pick(6000, 0)) model.removeService(id);
      const log = transactionLog();
      const r = await new FamilySync(nft, new SlotsLayout(), benchConfig(), log).sync(model.state(), undefined);
      expect(log.texts.join('\n')).not.toMatch(/add rule|replace rule|add element ip kube-proxy endpoints-/);
      expect(r.chainsWritten).toBe(0);
      const after = await nft.dump({ family: 'ip', table: 'kube-proxy' });
      for (const n of bindings(after).values()) expect(n).toBeLessThanOrEqual(128);
      expect(Math.max(...bindings(after).values())).toBeGreaterThan(64);
    }));

  it('with buckets past 64 chains, pins each 64 of them in a map of their own, and a restart keeps every pin map and id', () =>
    withNft(async (nft) => {
      const services = new Map<string, ServicePort>();
      const endpoints = new Map<string, ServiceEndpoint[]>();
      for (let i = 0; i < 70; i++) {
        const sp = clusterIPServicePort(`aff-${i}`, `198.18.7.${i + 1}`, { sessionAffinity: 'ClientIP' }, 'ns');
        services.set(sp.id, sp);
        endpoints.set(sp.id, [{ ip: `198.19.7.${i + 1}`, port: 8080, ready: true, serving: true, terminating: false, isLocal: false, nodeName: 'other' }]);
      }
      const state: ProxyState = { family: 'ipv4', services, endpoints };
      await new FamilySync(nft, new SlotsLayout(128), benchConfig(), transactionLog()).sync(state, undefined);
      const rs = await nft.dump({ family: 'ip', table: 'kube-proxy' });
      expect(rs.sets.filter((x) => x.name.startsWith('pins-')).map((x) => x.name).sort()).toEqual(['pins-0', 'pins-1000000']);
      const pinLookups = rs.rules.flatMap((r) => r.exprs.filter((e) => e.type === 'lookup' && e.set.startsWith('pins-')).map((e) => (e.type === 'lookup' ? e.set : '')));
      expect(pinLookups.filter((n) => n === 'pins-0')).toHaveLength(64);
      expect(pinLookups.filter((n) => n === 'pins-1000000')).toHaveLength(6);
      const r = await new FamilySync(nft, new SlotsLayout(128), benchConfig(), transactionLog()).sync(state, undefined);
      expect(r.operations).toBe(0);
    }));

  it('repacks buckets that churn left sparse at the next full sync, keeping every service reachable in the maps', () =>
    withNft(async (nft) => {
      const model = new BenchModel(40, 2, { external: true });
      const sync = new FamilySync(nft, new SlotsLayout(8), benchConfig(), transactionLog());
      await sync.sync(model.state(), undefined);
      // Remove all but every fourth service: 10 left, spread over 5 buckets.
      const gone = [...model.services.keys()].filter((_, i) => i % 4 !== 0);
      for (const id of gone) model.removeService(id);
      await sync.sync(model.state(), change({ removed: gone }));
      let rs = await nft.dump({ family: 'ip', table: 'kube-proxy' });
      expect(bucketMaps(rs)).toHaveLength(5);

      // A restart (a full sync) repacks them into the 2 buckets 10 chains need.
      const restarted = new FamilySync(nft, new SlotsLayout(8), benchConfig(), transactionLog());
      const r = await restarted.sync(model.state(), undefined);
      expect(r.operations).toBeGreaterThan(0);
      rs = await nft.dump({ family: 'ip', table: 'kube-proxy' });
      expect(bucketMaps(rs).sort()).toEqual(['endpoints-0', 'endpoints-1']);
      // Every service chain's range holds exactly its endpoints.
      const slots = new Map(rs.sets.filter((x) => /^endpoints-/.test(x.name)).flatMap((x) => (x.elements ?? []).map((e) => [`${x.name}/${e.key[0]}`, (e.value as [string, number]).join(':')] as const)));
      for (const [id, eps] of model.endpoints) {
        const name = id.split('/')[1]!.split(':')[0]!;
        const rule = rs.rules.find((x) => x.chain.includes(`/${name}/`))!;
        const ng = rule.exprs.find((e) => e.type === 'numgen')!;
        const lookup = rule.exprs.find((e) => e.type === 'lookup')!;
        if (ng.type !== 'numgen' || lookup.type !== 'lookup') throw new Error('not a slots rule');
        const got = Array.from({ length: ng.modulus }, (_, j) => slots.get(`${lookup.set}/${(ng.offset ?? 0) + j}`)).sort();
        expect(got).toEqual(eps.map((e) => `${e.ip}:${e.port}`).sort());
      }
      // And the next restart finds nothing to do.
      const again = await new FamilySync(nft, new SlotsLayout(8), benchConfig(), transactionLog()).sync(model.state(), undefined);
      expect(again.operations).toBe(0);
    }));
  it('gives a port reached through its ClusterIP alone no chain: a replaced endpoint is elements, a count change moves its dispatch element, and a restart after churn writes nothing', () =>
    withNft(async (nft) => {
      const model = new BenchModel(200, 3);
      const log = transactionLog();
      const sync = new FamilySync(nft, new SlotsLayout(), benchConfig(), log);
      await sync.sync(model.state(), undefined);
      const table = (): Promise<Ruleset> => nft.dump({ family: 'ip', table: 'kube-proxy' });
      const rs = await table();
      expect(rs.chains.filter((c) => /^service-[A-Z0-9]{8}-/.test(c.name))).toEqual([]);
      expect(rs.chains.filter((c) => c.name.startsWith('balance-')).map((c) => c.name)).toEqual(['balance-0-tcp-3']);
      expect(rs.sets.find((s) => s.name === 'balance-0')!.elements).toHaveLength(600);
      expect(bucketMaps(rs)).toEqual([]);

      const [id] = model.pick(1, 5);
      const clusterIP = model.services.get(id!)!.clusterIP;
      log.texts.length = 0;
      model.replaceEndpoint(id!);
      await sync.sync(model.state(), change({ endpoints: [id!] }));
      expect(log.texts.join('\n')).not.toMatch(/rule|chain/);
      expect(log.texts.join('\n')).toMatch(new RegExp(`delete element ip kube-proxy balance-0 \\{ ${clusterIP.replaceAll('.', '\\.')} \\. tcp \\. 80 \\. \\d+[,} ]`));
      // Numbered in the endpoints' sorted order (address text, then port): what a restart computes.
      const numbered = (await table()).sets.find((s) => s.name === 'balance-0')!.elements!.filter((e) => e.key[0] === clusterIP);
      const byNumber = numbered.sort((a, b) => Number(a.key[3]) - Number(b.key[3])).map((e) => (e.value as unknown[]).join(':'));
      expect(byNumber).toEqual(model.endpoints.get(id!)!.map((e) => `${e.ip}:${e.port}`).sort());

      // One more endpoint: a chain for 4 in the same transaction, and the dispatch element goes there.
      log.texts.length = 0;
      model.scaleUp(id!);
      await sync.sync(model.state(), change({ endpoints: [id!] }));
      const up = log.texts.join('\n');
      expect(up).toMatch(/^add chain ip kube-proxy balance-0-tcp-4$/m);
      expect(up).toMatch(new RegExp(`^add element ip kube-proxy service-ips \\{ ${clusterIP.replaceAll('.', '\\.')} \\. tcp \\. 80 : goto balance-0-tcp-4 \\}`, 'm'));
      expect(up).not.toMatch(/flush chain/);

      // Back to 3: nobody goes to the chain for 4 any more, so it is flushed (and deleted later).
      log.texts.length = 0;
      model.scaleDown(id!);
      await sync.sync(model.state(), change({ endpoints: [id!] }));
      expect(log.texts.join('\n')).toMatch(/^flush chain ip kube-proxy balance-0-tcp-4$/m);

      const restartLog = transactionLog();
      const restarted = new FamilySync(nft, new SlotsLayout(), benchConfig(), restartLog);
      expect((await restarted.sync(model.state(), undefined)).operations).toBe(0);
      expect(restartLog.texts).toEqual([]);
      // The restart placed every port as the kernel holds it (a function of the model): the next replacement is elements again.
      const [other] = model.pick(1, 77);
      model.replaceEndpoint(other!);
      await restarted.sync(model.state(), change({ endpoints: [other!] }));
      expect(restartLog.texts.join('\n')).not.toMatch(/rule|chain/);
      expect(restartLog.texts.join('\n')).toMatch(/delete element ip kube-proxy balance-0 /);
    }));
  it('spreads balance maps by the endpoints, places each port by its dispatch key, and a restart writes nothing; a grown state moves ports to more maps in one transaction', () =>
    withNft(async (nft) => {
      // 1400 x 3 endpoints: 4200 elements, 4 maps of 2048 at most (balanceMapsFor).
      const model = new BenchModel(1400, 3);
      const log = transactionLog();
      await new FamilySync(nft, new SlotsLayout(), benchConfig(), log).sync(model.state(), undefined);
      const rs = await nft.dump({ family: 'ip', table: 'kube-proxy' });
      const maps = rs.sets.filter((s) => /^balance-\d+$/.test(s.name));
      expect(maps.map((s) => s.name).sort()).toEqual(['balance-0', 'balance-1', 'balance-2', 'balance-3']);
      expect(maps.reduce((n, s) => n + s.elements!.length, 0)).toBe(4200);
      // Each port's dispatch element goes to the chain of its own map, which holds its 3 endpoints.
      const dispatch = rs.sets.find((s) => s.name === 'service-ips')!.elements!;
      expect(dispatch).toHaveLength(1400);
      for (const e of dispatch) {
        const chain = (e.value as { chain: string }).chain;
        const bucket = chain.split('-')[1]!;
        expect(chain).toBe(`balance-${bucket}-tcp-3`);
        expect(maps.find((m) => m.name === `balance-${bucket}`)!.elements!.filter((x) => x.key[0] === e.key[0] && x.key[2] === e.key[2])).toHaveLength(3);
      }

      // A restart: the balance maps compare by hashes; nothing to write.
      const restartLog = transactionLog();
      expect((await new FamilySync(nft, new SlotsLayout(), benchConfig(), restartLog).sync(model.state(), undefined)).operations).toBe(0);
      expect(restartLog.texts).toEqual([]);

      // The state doubles: the next full sync (here a restart) takes 8 maps, in one transaction.
      for (let i = 0; i < 1400; i++) model.addService(3);
      const grownLog = transactionLog();
      const grown = new FamilySync(nft, new SlotsLayout(), benchConfig(), grownLog);
      const r = await grown.sync(model.state(), undefined);
      expect(r.operations).toBeGreaterThan(0);
      expect(grownLog.texts).toHaveLength(1);
      const after = await nft.dump({ family: 'ip', table: 'kube-proxy' });
      const grownMaps = after.sets.filter((s) => /^balance-\d+$/.test(s.name));
      expect(grownMaps.map((s) => s.name).sort()).toEqual(['balance-0', 'balance-1', 'balance-2', 'balance-3', 'balance-4', 'balance-5', 'balance-6', 'balance-7']);
      expect(grownMaps.reduce((n, s) => n + s.elements!.length, 0)).toBe(8400);
      expect(after.sets.find((s) => s.name === 'service-ips')!.elements).toHaveLength(2800);
      // No chain of a map's old numbering is left in use: every chain a dispatch element names exists.
      const chains = new Set(after.chains.map((c) => c.name));
      for (const e of after.sets.find((s) => s.name === 'service-ips')!.elements!) expect(chains.has((e.value as { chain: string }).chain)).toBe(true);
      expect((await new FamilySync(nft, new SlotsLayout(), benchConfig(), transactionLog()).sync(model.state(), undefined)).operations).toBe(0);
    }));
});
