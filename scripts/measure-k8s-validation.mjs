#!/usr/bin/env node
// What validating Services and EndpointSlices costs (docs/decisions.md, "Kubernetes objects are
// validated by shape"): N Services of two ports and N EndpointSlices of five endpoints, shaped as the
// API server sends them (managedFields and all), through the generated validators, the first of 5 runs (what `proxy --once` pays; its CPU time too, which other processes on the machine disturb less) and the best;
// and what loading the validators costs. Run after npm run build:ts.
//
//   node scripts/measure-k8s-validation.mjs [N]     (default 10000)

import { performance } from 'node:perf_hooks';

const n = Number(process.argv[2] ?? 10000);
const t0 = performance.now();
const { validateObject } = await import('../dist/k8s/validation/validate.js');
const loadMs = performance.now() - t0;

const managedFields = [{ manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'v1', time: '2026-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {} } } } }];
const services = [];
const slices = [];
for (let i = 0; i < n; i++) {
  const name = `svc-${i}`;
  services.push({
    kind: 'Service',
    apiVersion: 'v1',
    metadata: { name, namespace: 'default', uid: `u-${i}`, resourceVersion: String(i), labels: { app: name }, managedFields },
    spec: {
      type: 'ClusterIP',
      clusterIP: `198.18.${i >> 8}.${i & 255}`,
      clusterIPs: [`198.18.${i >> 8}.${i & 255}`],
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      ports: [
        { name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 },
        { name: 'dns', port: 53, protocol: 'UDP', targetPort: 'dns' },
      ],
      selector: { app: name },
      sessionAffinity: 'None',
      internalTrafficPolicy: 'Cluster',
    },
    status: { loadBalancer: {} },
  });
  slices.push({
    kind: 'EndpointSlice',
    apiVersion: 'discovery.k8s.io/v1',
    metadata: { name: `${name}-abcde`, namespace: 'default', labels: { 'kubernetes.io/service-name': name }, managedFields },
    addressType: 'IPv4',
    endpoints: Array.from({ length: 5 }, (_, j) => ({
      addresses: [`198.19.${(i * 5 + j) >> 8 & 255}.${(i * 5 + j) & 255}`],
      conditions: { ready: true, serving: true, terminating: false },
      nodeName: `node-${j}`,
      targetRef: { kind: 'Pod', name: `${name}-${j}`, namespace: 'default' },
    })),
    ports: [
      { name: 'http', port: 8080, protocol: 'TCP' },
      { name: 'dns', port: 53, protocol: 'UDP' },
    ],
  });
}

let best = Infinity;
let first = 0;
let firstCpu = 0;
for (let run = 0; run < 5; run++) {
  const start = performance.now();
  const cpu = process.cpuUsage();
  let refused = 0;
  for (const s of services) if ('reason' in validateObject('Service', s)) refused++;
  for (const s of slices) if ('reason' in validateObject('EndpointSlice', s)) refused++;
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  if (run === 0) firstCpu = (used.user + used.system) / 1000;
  if (refused) throw new Error(`${refused} objects refused`);
  if (run === 0) first = ms;
  best = Math.min(best, ms);
}
console.log(`load ${loadMs.toFixed(1)} ms; ${n} Services + ${n} EndpointSlices validated in ${first.toFixed(1)} ms the first time (${firstCpu.toFixed(1)} ms of CPU), ${best.toFixed(1)} ms at best of 5`);
