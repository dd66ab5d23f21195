import { mkdir, mkdtemp, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EndpointSlice, Node, Service } from '../../../src/k8s/objects.js';
import { ChangeTracker } from '../../../src/proxy/model/tracker.js';
import { ManifestSource, readManifests } from '../../../src/proxy/source/manifests.js';
import type { EventType, SourceHandler, SourceProblem } from '../../../src/proxy/source/source.js';

interface Recorder extends SourceHandler {
  events: string[];
  problems: SourceProblem[];
  syncs: number;
}

/** Records events as "type Kind ns/name", and forwards them to a tracker when given one. */
function recorder(tracker?: ChangeTracker): Recorder {
  const r: Recorder = {
    events: [],
    problems: [],
    syncs: 0,
    service(type: EventType, svc: Service) {
      r.events.push(`${type} Service ${svc.metadata?.namespace}/${svc.metadata?.name}`);
      tracker?.service(type, svc);
    },
    endpointSlice(type: EventType, slice: EndpointSlice) {
      r.events.push(`${type} EndpointSlice ${slice.metadata?.namespace}/${slice.metadata?.name}`);
      tracker?.endpointSlice(type, slice);
    },
    node(type: EventType, node: Node) {
      r.events.push(`${type} Node ${node.metadata?.name}`);
    },
    synced() {
      r.syncs++;
    },
    problem(p: SourceProblem) {
      r.problems.push(p);
    },
  };
  return r;
}

/** Replaces a file by rename, as editors and kubectl-style tools do, so no half-written file is read. */
async function replaceFile(path: string, text: string): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.tmp`);
  await writeFile(temp, text);
  await rename(temp, path);
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const serviceYaml = (name: string, port: number, clusterIP = '198.18.96.10'): string => `apiVersion: v1
kind: Service
metadata:
  name: ${name}
  namespace: ns
spec:
  clusterIP: ${clusterIP}
  ports:
  - name: http
    port: ${port}
`;

const sliceYaml = (name: string, service: string, addressType: string, address: string): string => `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: ${name}
  namespace: ns
  labels:
    kubernetes.io/service-name: ${service}
addressType: ${addressType}
endpoints:
- addresses: ["${address}"]
ports:
- name: http
  port: 8080
`;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nftlink-manifests-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('readManifests', () => {
  it('reads multi-document YAML, JSON and List kinds recursively; ignores other kinds; defaults the namespace', async () => {
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'a.yaml'), `${serviceYaml('a', 80)}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n`);
    await writeFile(
      join(dir, 'sub', 'list.json'),
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } },
          { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'a-1', namespace: 'ns' }, addressType: 'IPv4' },
        ],
      }),
    );
    await writeFile(join(dir, 'sub', 'services.yml'), 'apiVersion: v1\nkind: ServiceList\nitems:\n- metadata: {name: b}\n  spec: {clusterIP: 198.18.96.11}\n');
    await writeFile(join(dir, 'notes.txt'), 'not a manifest');
    const read = await readManifests(dir);
    expect([...read.objects.keys()].sort()).toEqual(['EndpointSlice/ns/a-1', 'Node//node-1', 'Service/default/b', 'Service/ns/a']);
    expect(read.objects.get('Service/default/b')!.object).toMatchObject({ kind: 'Service', apiVersion: 'v1', metadata: { namespace: 'default' } });
    expect(read.problems).toEqual([]);
  });

  it('reports files that do not parse, naming them, and objects it cannot use; the others still apply', async () => {
    const file = join(dir, 'mixed.yaml');
    await writeFile(
      file,
      [
        serviceYaml('good', 80),
        'apiVersion: v1\nkind: Service\nmetadata: {namespace: ns}\nspec: {clusterIP: 198.18.96.12}\n',
        'apiVersion: discovery.k8s.io/v1beta1\nkind: EndpointSlice\nmetadata: {name: old, namespace: ns}\n',
        serviceYaml('good', 81),
      ].join('---\n'),
    );
    await writeFile(join(dir, 'broken.json'), '{"kind": "Service",');
    // A syntax error anywhere fails the whole file (its good documents included): it is likely half written.
    await writeFile(join(dir, 'unclosed.yaml'), [serviceYaml('other', 80, '198.18.96.13'), 'kind: Service\nmetadata: {name: [unclosed\n'].join('---\n'));
    const read = await readManifests(dir);
    expect([...read.objects.keys()]).toEqual(['Service/ns/good']);
    const problems = read.problems.map((p) => `${p.origin}: ${p.reason}`.replaceAll(dir, '<dir>'));
    expect(problems).toHaveLength(5);
    expect(problems[0]).toMatch(/^<dir>\/broken\.json: not valid JSON: /);
    expect(problems[1]).toBe('<dir>/mixed.yaml (document 2): Service without metadata.name');
    expect(problems[2]).toBe('<dir>/mixed.yaml (document 3): EndpointSlice of apiVersion "discovery.k8s.io/v1beta1": only discovery.k8s.io/v1 is read');
    expect(problems[3]).toBe('<dir>/mixed.yaml (document 4): Service ns/good is already defined in <dir>/mixed.yaml (document 1); this copy is ignored');
    expect(problems[4]).toMatch(/^<dir>\/unclosed\.yaml: document 2: not valid YAML: /);
  });

  it('the bad-input corpus: each bad object rejected with its name and reason, the good ones programmed', async () => {
    const long = 'n'.repeat(63);
    await writeFile(
      join(dir, 'corpus.yaml'),
      [
        serviceYaml('good', 80),
        sliceYaml('good-1', 'good', 'IPv4', '198.18.0.1'),
        serviceYaml('bad-ip', 80, '198.18.96.999'),
        serviceYaml('port-zero', 0, '198.18.96.13'),
        serviceYaml('port-big', 70000, '198.18.96.14'),
        serviceYaml('proto', 80, '198.18.96.15').replace('port: 80', 'port: 80\n    protocol: ICMP'),
        serviceYaml('dup', 80, '198.18.96.16') + '  - name: again\n    port: 80\n',
        `apiVersion: v1\nkind: Service\nmetadata: {name: ${long}, namespace: ${long}}\nspec:\n  clusterIP: 198.18.96.17\n  ports: [{name: ${'p'.repeat(40)}, port: 80}]\n`,
        sliceYaml('mismatch', 'good', 'IPv6', '198.18.0.2'),
        sliceYaml('noaddr', 'good', 'IPv4', '198.18.0.3').replace('- addresses: ["198.18.0.3"]', '- addresses: []'),
      ].join('---\n'),
    );
    await writeFile(join(dir, 'corpus-broken.yaml'), 'kind: Service\nmetadata: {name: broken\n');
    const tracker = new ChangeTracker({ nodeName: 'node-1' });
    const source = new ManifestSource(dir, { watch: false });
    const r = recorder(tracker);
    await source.start(r);
    await source.stop();
    expect(r.syncs).toBe(1);
    // Shapes are refused by the source, naming the object (none here); meanings by the model (snap.invalid).
    expect(r.problems.map((p) => `${p.origin.replaceAll(dir, '<dir>')}: ${p.reason}`)).toEqual([expect.stringMatching(/^<dir>\/corpus-broken\.yaml: not valid YAML/)]);
    const snap = tracker.snapshot();
    expect([...snap.states.ipv4.services.keys()].sort()).toEqual([`${long}/${long}:${'p'.repeat(40)}`, 'ns/good:http']);
    expect(snap.states.ipv4.endpoints.get('ns/good:http')).toMatchObject([{ ip: '198.18.0.1', port: 8080 }]);
    expect(snap.invalid.map((i) => `${i.kind} ${i.ref}: ${i.reason}`).sort()).toEqual([
      'EndpointSlice ns/mismatch: endpoints[0].addresses[0]: "198.18.0.2" is not an IPv6 address (addressType IPv6)',
      'EndpointSlice ns/noaddr: endpoints[0].addresses: empty',
      'Service ns/bad-ip: spec.clusterIP: "198.18.96.999" is not an IP address',
      'Service ns/dup: spec.ports[1]: 80/TCP duplicates spec.ports[0]',
      'Service ns/port-big: spec.ports[0].port: 70000 is out of range (1-65535)',
      'Service ns/port-zero: spec.ports[0].port: 0 is out of range (1-65535)',
      'Service ns/proto: spec.ports[0].protocol: unsupported protocol "ICMP" (TCP, UDP or SCTP)',
    ]);
  });
});

describe('ManifestSource watching', () => {
  let source: ManifestSource | undefined;
  afterEach(async () => {
    await source?.stop();
    source = undefined;
  });

  it('add, update and delete follow the files; synced once; a problem is reported once per content', async () => {
    await writeFile(join(dir, 'base.yaml'), serviceYaml('base', 80));
    source = new ManifestSource(dir);
    const r = recorder();
    await source.start(r);
    expect(r.events).toEqual(['add Service ns/base']);
    expect(r.syncs).toBe(1);

    const file = join(dir, 'web.yaml');
    await writeFile(file, serviceYaml('web', 80));
    await until(() => r.events.includes('add Service ns/web'), 'add');
    await replaceFile(file, serviceYaml('web', 81));
    await until(() => r.events.includes('update Service ns/web'), 'update');
    await mkdir(join(dir, 'nested'));
    await writeFile(join(dir, 'nested', 'list.yaml'), `kind: List\nitems:\n- ${sliceYaml('web-1', 'web', 'IPv4', '198.18.0.1').replace(/\n/g, '\n  ')}`);
    await until(() => r.events.includes('add EndpointSlice ns/web-1'), 'add in a new directory');

    await writeFile(join(dir, 'bad.yaml'), 'kind: [\n');
    await until(() => r.problems.length === 1, 'problem');
    await writeFile(join(dir, 'other.yaml'), serviceYaml('other', 80));
    await until(() => r.events.includes('add Service ns/other'), 'add other');
    expect(r.problems).toHaveLength(1);

    await unlink(file);
    await until(() => r.events.includes('delete Service ns/web'), 'delete');
    expect(r.syncs).toBe(1);
    expect(r.events.filter((e) => e.endsWith('ns/base'))).toEqual(['add Service ns/base']);
  });

  it('a single file is watched too', async () => {
    const file = join(dir, 'one.yaml');
    await writeFile(file, serviceYaml('one', 80));
    await writeFile(join(dir, 'ignored.yaml'), serviceYaml('ignored', 80));
    source = new ManifestSource(file);
    const r = recorder();
    await source.start(r);
    expect(r.events).toEqual(['add Service ns/one']);
    await replaceFile(file, `${serviceYaml('one', 81)}---\n${serviceYaml('two', 80)}`);
    await until(() => r.events.includes('add Service ns/two'), 'add');
    expect(r.events).toEqual(['add Service ns/one', 'update Service ns/one', 'add Service ns/two']);
  });

  it('refuses a path that does not exist', async () => {
    source = new ManifestSource(join(dir, 'missing'));
    await expect(source.start(recorder())).rejects.toThrow(/manifest source .*missing: ENOENT/);
  });
});
