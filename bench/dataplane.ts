// `npm run bench:dataplane`: what a ruleset shape costs a connection. For each number of ClusterIP
// TCP services (10, 1,000, 10,000 by default, 5 endpoints each) and each shape (nftlink's slots
// and kube-proxy layouts over netlink, kube-proxy's iptables mode through iptables-legacy-restore,
// and the floor: one DNAT rule for the whole service CIDR, the control), the TCP connect latency
// from a client outside the cluster to ClusterIPs, through a node namespace that holds that one
// shape. Every (shape, size) is loaded at once, side by side (a fresh host each), and the hosts take
// turns every few connects (--turn), so every ratio is taken in one run under the same conditions.
// Everything runs in namespaces made for the run (never the root namespace's ruleset), with
// addresses from 198.18.0.0/15, removed on exit and signals.
//
// Prints a table and the target on stdout, progress on stderr; writes bench-results/dataplane.json
// (every figure, and the raw samples) and docs/bench/dataplane.svg (p50 and p99 against services).

import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseDataplaneArgs } from './dataplane/args.js';
import { measure } from './dataplane/measure.js';
import { compileProbe } from './dataplane/probe.js';
import { controlLines, renderChart, renderTable, renderTargets, shapeResult, targets, type ShapeResult } from './dataplane/report.js';
import { benchLayoutConfig, benchState } from './dataplane/services.js';
import { checkShapes, loadShape, type Loaded, type ShapeName } from './dataplane/shapes.js';
import { createHost, type Host } from './dataplane/topology.js';
import { waitQuiet } from './measure.js';
import { machineInfo, speedText } from './machine.js';

const log = (line: string): void => void process.stderr.write(line + '\n');

/** How this run was started, to print in the header (so a figure can be reproduced). */
function commandLine(): string {
  const args = process.argv.slice(2).join(' ');
  if (process.env.npm_lifecycle_event === 'bench:dataplane') return `npm run bench:dataplane${args ? ` -- ${args}` : ''}`;
  return `node ${process.argv[1]}${args ? ` ${args}` : ''}`;
}

async function main(): Promise<void> {
  const opts = parseDataplaneArgs(process.argv.slice(2));
  if (process.getuid?.() !== 0) throw new Error('needs root (network namespaces, nf_tables and iptables need CAP_SYS_ADMIN and CAP_NET_ADMIN)');
  checkShapes(opts.shapes);
  const command = commandLine();
  const machine = machineInfo();
  const iptables = spawnSync('iptables-legacy-restore', ['--version'], { encoding: 'utf8' }).stdout?.trim() || 'not installed';
  const header =
    `nftlink data-plane benchmark: ${command}\n` +
    `Linux ${machine.kernel}, ${machine.nft}, ${iptables}, node ${machine.node}, ${machine.cpuCount} CPUs, ${speedText(machine)}\n` +
    `every (shape, size) loaded at once, each in a node namespace of its own; ${opts.connects} timed connects per (shape, size) and target kind,\n` +
    `in ${opts.rounds} rounds (one probe process each) in which the hosts take turns ${opts.turn === 1 ? 'connect by connect' : `every ${opts.turn} connects per target kind`}; ${opts.warmup} warm-up connects each; ${opts.pods} endpoints per service\n` +
    `connect: connect(2) of a C client in the client namespace to a ClusterIP, until the handshake is done (closed with a reset, untimed)\n` +
    `targets: spread = service (k * stride) mod N for k = 0, 1, ...: every position of the table in turn, uniformly;\n` +
    `         last = the last service (in iptables' KUBE-SERVICES, matched after every other service's rule)\n`;
  log(header);

  const bin = compileProbe();
  const cfg = benchLayoutConfig();
  const results: ShapeResult[] = [];
  const raw: { services: number; shape: ShapeName; spreadUs: number[]; lastUs: number[]; errors: number[] }[] = [];
  const started = Date.now();
  const hosts: Host[] = [];
  try {
    const loads: Loaded[] = [];
    for (const size of opts.sizes) {
      for (const shape of opts.shapes) {
        const host = await createHost(shape, size, opts.pods, bin);
        hosts.push(host);
        const l = await loadShape(shape, host.cluster.node.name, benchState(size, host.podIPs), cfg);
        loads.push(l);
        log(`${size} services, ${shape}: loaded in ${l.loadS.toFixed(2)} s (${l.size})`);
      }
    }
    const busy = await waitQuiet(30_000, 0.1);
    log(`measuring ${hosts.length} hosts (machine ${(busy * 100).toFixed(0)}% busy before the first round)`);
    const samples = await measure(hosts, opts, bin, log);
    hosts.forEach((h, i) => {
      const s = samples[i]!;
      results.push(shapeResult(h.shape, h.services, loads[i]!, s));
      const tenth = (xs: number[]): number[] => xs.map((x) => Math.round(x * 10) / 10);
      raw.push({ services: h.services, shape: h.shape, spreadUs: tenth(s.spread), lastUs: tenth(s.last), errors: s.errors });
    });
  } finally {
    for (const h of hosts) h.remove();
    bin.remove();
  }

  const list = targets(results);
  const control = controlLines(results);
  const out = resolve(opts.out);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({ command, machine, iptables, options: opts, elapsedS: (Date.now() - started) / 1000, results, targets: list, control, raw }, null, 2) + '\n');
  const chart = resolve(opts.chart);
  mkdirSync(dirname(chart), { recursive: true });
  writeFileSync(chart, renderChart(results, opts.pods));

  process.stdout.write(
    `\n${header}\n` +
      renderTable(results) +
      `\nTarget (p50 of the smallest against the largest size):\n` +
      renderTargets(list) +
      (control.length ? `\nControl (not a target: the floor has one rule and nothing per service):\n${control.join('\n')}\n` : '') +
      `\nfigures and raw samples: ${out}\nchart: ${chart} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:dataplane failed: ${err instanceof Error ? err.message : String(err)}\n`);
  // process.exit runs the 'exit' hooks that remove the namespaces and stop the servers.
  process.exit(1);
});
