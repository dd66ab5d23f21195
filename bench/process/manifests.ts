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
const ENDPOINTS_PER_PORT = PER_16 - 1;
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

/** Service i and its one EndpointSlice, as the API server returns them. */
export function serviceObjects(i: number, endpoints: number): [object, object] {
  const name = `svc-${i}`;
  const c = clusterAddress(i);
  const eps = Array.from({ length: endpoints }, (_, j) => endpointAddress(i * endpoints + j));
  // One slice per service holds one target port: all endpoints of a service share the first one's.
  const targetPort = eps[0]!.port;
  const service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: NAMESPACE },
    spec: { type: 'ClusterIP', clusterIP: c.ip, clusterIPs: [c.ip], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', ports: [{ name: 'http', protocol: 'TCP', port: c.port, targetPort }] },
  };
  const slice = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${name}-x1`, namespace: NAMESPACE, labels: { 'kubernetes.io/service-name': name } },
    addressType: 'IPv4',
    endpoints: eps.map((e) => ({ addresses: [e.ip], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'pb-other' })),
    ports: [{ name: 'http', protocol: 'TCP', port: targetPort }],
  };
  return [service, slice];
}

/**
 * Writes the Lists into the directory `dir` (made afresh), object by object (100k x 5 is over 100 MB
 * of JSON: built as one string it would cost the benchmark's own process that much twice).
 */
export async function writeManifests(dir: string, services: number, endpoints: number): Promise<void> {
  // A /16 of endpoints per target port, 8 ports: 524,264 endpoints at most.
  if (services * endpoints > ENDPOINTS_PER_PORT * 8) throw new RangeError(`bench: ${services} x ${endpoints} endpoints do not fit 198.19.0.0/16 x 8 ports`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (let first = 0; first < services; first += FILE_SERVICES) {
    const last = Math.min(services, first + FILE_SERVICES);
    const name = `services-${String(first / FILE_SERVICES).padStart(3, '0')}.json`;
    await writeList(join(dir, name), first, last, endpoints);
  }
}

async function writeList(path: string, first: number, last: number, endpoints: number): Promise<void> {
  const out = createWriteStream(path);
  const write = async (s: string): Promise<void> => {
    if (!out.write(s)) await once(out, 'drain');
  };
  await write('{"apiVersion":"v1","kind":"List","metadata":{},"items":[');
  for (let i = first; i < last; i++) {
    const [svc, slice] = serviceObjects(i, endpoints);
    await write(`${i > first ? ',' : ''}${JSON.stringify(svc)},${JSON.stringify(slice)}`);
  }
  await write(']}\n');
  out.end();
  await once(out, 'finish');
}
