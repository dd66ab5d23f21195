// The input of the measured process: a directory of JSON Lists of v1 Services and discovery.k8s.io/v1
// EndpointSlices, as `kubectl get svc,endpointslices -A -o json` would give them, N ClusterIP TCP
// services with E ready endpoints each, every endpoint its own address (no two services share pods).
// One List per FILE_SERVICES services: the proxy refuses a manifest file over 64 MiB (its parsing
// bound), and 100k x 5 in one List is over 100 MB; 10k services are one file.
// Addresses from 198.18.0.0/15 only: ClusterIPs in 198.18.0.0/16, endpoints in 198.19.0.0/16 (the
// node's own address, 198.19.255.254, is never an endpoint's). A /16 holds 65,534 of each, so beyond
// that the port tells them apart: 100k services are 65,534 addresses on port 80 and the rest on 81,
// and 500k endpoints spread over target ports 8080-8087 (every ip . port distinct, as the maps need).
// The last address of 198.19.0.0/16 but one is the node's, so endpoints take 65,533 per port.

import { createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';

const PER_16 = 65_534;
/** Endpoint addresses per target port (endpointAddress): churn.ts takes its new ones from the rest. */
export const ENDPOINTS_PER_PORT = PER_16 - 1;
/** Target ports the endpoints spread over (8080-8087). */
export const ENDPOINT_PORTS = 8;
const NAMESPACE = 'bench';
/** Services per manifest file (at 50 endpoints each, about 50 MB of JSON: under the proxy's 64 MiB). */
export const FILE_SERVICES = 10_000;
/** The node the proxy runs as; the endpoints are on another node (none is local). */
export const NODE_NAME = 'pb-node';
export const NODE_IP = '198.19.255.254';
export const POD_CIDR = '198.19.0.0/16';
export const SERVICE_CIDR = '198.18.0.0/16';

const host = (n: number): string => `${n >> 8}.${n & 255}`;

export function clusterAddress(i: number): { ip: string; port: number } {
  return { ip: `198.18.${host((i % PER_16) + 1)}`, port: 80 + Math.floor(i / PER_16) };
}

export function endpointAddress(k: number): { ip: string; port: number } {
  return { ip: `198.19.${host((k % ENDPOINTS_PER_PORT) + 1)}`, port: 8080 + Math.floor(k / ENDPOINTS_PER_PORT) };
}

/** The endpoint address indexes (for endpointAddress) service i starts with: its own E in a row. */
export function initialEndpoints(i: number, endpoints: number): number[] {
  return Array.from({ length: endpoints }, (_, j) => i * endpoints + j);
}

/** Service i and its one EndpointSlice, as the API server returns them. */
export function serviceObjects(i: number, endpoints: number): [object, object] {
  return [serviceObject(i, initialEndpoints(i, endpoints)[0]!), sliceObject(i, initialEndpoints(i, endpoints))];
}

/** Service i; its target port is that of the endpoint address `firstEndpoint` (the slice's). */
export function serviceObject(i: number, firstEndpoint: number): object {
  const c = clusterAddress(i);
  const targetPort = endpointAddress(firstEndpoint).port;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `svc-${i}`, namespace: NAMESPACE },
    spec: { type: 'ClusterIP', clusterIP: c.ip, clusterIPs: [c.ip], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', ports: [{ name: 'http', protocol: 'TCP', port: c.port, targetPort }] },
  };
}

/**
 * Service i's one EndpointSlice with the endpoints at address indexes `ks`. One slice holds one
 * target port: all endpoints of a service share the first one's (churn.ts keeps them on it).
 */
export function sliceObject(i: number, ks: readonly number[]): object {
  const name = `svc-${i}`;
  const eps = ks.map(endpointAddress);
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${name}-x1`, namespace: NAMESPACE, labels: { 'kubernetes.io/service-name': name } },
    addressType: 'IPv4',
    endpoints: eps.map((e) => ({ addresses: [e.ip], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'pb-other' })),
    ports: [{ name: 'http', protocol: 'TCP', port: eps[0]?.port ?? 8080 }],
  };
}

/** The Node the proxy runs as, for the informers (its Node is watched). */
export function nodeObject(): object {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE_NAME }, spec: {}, status: { addresses: [{ type: 'InternalIP', address: NODE_IP }] } };
}

/** The List files are these two around the items, comma-separated. */
export const LIST_HEAD = '{"apiVersion":"v1","kind":"List","metadata":{},"items":[';
export const LIST_TAIL = ']}\n';

/** The file holding services FILE_SERVICES * n to FILE_SERVICES * (n + 1) - 1. */
export function manifestFileName(n: number): string {
  return `services-${String(n).padStart(3, '0')}.json`;
}

/**
 * Writes the Lists into the directory `dir` (made afresh), object by object (100k x 5 is over 100 MB
 * of JSON: built as one string it would cost the benchmark's own process that much twice).
 * `endpointsOf(i)`: service i's endpoint address indexes (default: its initial ones).
 */
export async function writeManifests(dir: string, services: number, endpoints: number, endpointsOf = (i: number): readonly number[] => initialEndpoints(i, endpoints)): Promise<void> {
  // A /16 of endpoints per target port, 8 ports: 524,264 endpoints at most.
  if (services * endpoints > ENDPOINTS_PER_PORT * ENDPOINT_PORTS) throw new RangeError(`bench: ${services} x ${endpoints} endpoints do not fit 198.19.0.0/16 x 8 ports`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (let first = 0; first < services; first += FILE_SERVICES) {
    const last = Math.min(services, first + FILE_SERVICES);
    await writeList(join(dir, manifestFileName(first / FILE_SERVICES)), first, last, endpoints, endpointsOf);
  }
}

async function writeList(path: string, first: number, last: number, endpoints: number, endpointsOf: (i: number) => readonly number[]): Promise<void> {
  const out = createWriteStream(path);
  const write = async (s: string): Promise<void> => {
    if (!out.write(s)) await once(out, 'drain');
  };
  await write(LIST_HEAD);
  for (let i = first; i < last; i++) {
    const ks = endpointsOf(i);
    await write(`${i > first ? ',' : ''}${JSON.stringify(serviceObject(i, initialEndpoints(i, endpoints)[0]!))},${JSON.stringify(sliceObject(i, ks))}`);
  }
  await write(LIST_TAIL);
  out.end();
  await once(out, 'finish');
}
