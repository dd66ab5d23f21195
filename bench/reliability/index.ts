// npm run reliability: issue 31's reliability scenarios against the real `nftlink proxy` in network
// namespaces, following the fake API server through its informers. Each scenario gets a fresh node:
//   churn    N services, `rate` EndpointSlice changes a second for a minute under client traffic
//   soak     the same churn for longer, sampled every 10 s with the ruleset's element count
//   chaos    kill -9 at random moments, restart, converge to the clean cold start (by dump)
//   hostile  slow connections, oversized headers, garbage and a large body on healthz and metrics
// Prints a table, writes every figure and sample as JSON and the process chart as SVG.

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { machineInfo, speedText } from '../machine.js';
import { parseReliabilityArgs, type ReliabilityOptions } from './args.js';
import { runChaos, type ChaosResult } from './chaos.js';
import { runChurn, type ChurnResult } from './churn.js';
import { runHostile, type HostileResult } from './hostile.js';
import { ReliabilityNode } from './node.js';
import { chaosRows, churnRows, hostileRows, processChart, table, type Row } from './report.js';

const log = (line: string): void => void process.stderr.write(`${line}\n`);

async function onNode<T>(o: ReliabilityOptions, services: number, prefix: string, fn: (node: ReliabilityNode) => Promise<T>): Promise<T> {
  const node = await ReliabilityNode.create({ services, layout: o.layout, minSyncPeriod: o.minSyncPeriod, prefix });
  try {
    return await fn(node);
  } finally {
    await node.teardown();
  }
}

async function main(): Promise<void> {
  const o = parseReliabilityArgs(process.argv.slice(2));
  const machine = machineInfo();
  const results: { churn?: ChurnResult; soak?: ChurnResult; chaos?: ChaosResult; hostile?: HostileResult } = {};
  const rows: Row[] = [];
  const save = (): void => {
    mkdirSync(dirname(o.out), { recursive: true });
    writeFileSync(o.out, JSON.stringify({ options: o, machine, rows, results }, null, 2));
  };
  for (const scenario of o.scenarios) {
    log(`--- ${scenario}`);
    if (scenario === 'churn' || scenario === 'soak') {
      const soak = scenario === 'soak';
      const r = await onNode(o, o.services, soak ? 'nlrels' : 'nlrelc', (node) =>
        runChurn(node, { durationS: soak ? o.soakSeconds : o.churnSeconds, rate: o.rate, sampleMs: soak ? 10_000 : 1000, countElements: soak, clientIntervalMs: soak ? 100 : 20 }, log),
      );
      results[scenario] = r;
      rows.push(...churnRows(soak ? `soak ${o.soakSeconds} s` : `churn ${o.churnSeconds} s`, r, soak));
    } else if (scenario === 'chaos') {
      results.chaos = await onNode(o, o.chaosServices, 'nlrelk', (node) => runChaos(node, { trials: o.trials, convergeTimeoutMs: 120_000, staleBatch: Math.max(10, Math.round(o.chaosServices / 20)), clientIntervalMs: 20, seed: o.seed }, log));
      rows.push(...chaosRows(results.chaos));
    } else {
      results.hostile = await onNode(o, 8, 'nlrelh', (node) => runHostile(node, o.slowConnections, log));
      rows.push(...hostileRows(results.hostile));
    }
    save();
  }
  console.log(`reliability (issue 31), layout ${o.layout}, --min-sync-period ${o.minSyncPeriod}, ${o.rate} slice changes/s`);
  console.log(`${machine.kernel}, ${machine.nft}, node ${machine.node}, ${machine.cpuCount} cores, ${speedText(machine)}`);
  console.log(table(rows));
  const timeline = results.soak ?? results.churn;
  if (timeline) {
    mkdirSync(dirname(o.svg), { recursive: true });
    writeFileSync(o.svg, processChart(`nftlink proxy under ${o.rate} EndpointSlice changes/s, ${timeline.services} services`, timeline.samples));
    console.log(`wrote ${o.out} and ${o.svg}`);
  } else console.log(`wrote ${o.out}`);
  if (rows.some((r) => r.met === false)) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
