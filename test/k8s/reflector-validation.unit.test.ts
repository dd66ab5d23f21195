// Objects of the wrong shape from the API server (a list item, a watch event): refused one by one
// with their kind, name and field, treated as absent (an earlier good version is deleted), and the
// list and watch carry on: the handler never sees an object its types do not describe.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/k8s/api-client.js';
import { connectApi, type ApiConnection } from '../../src/k8s/kubeconfig.js';
import type { Service } from '../../src/k8s/objects.js';
import { Reflector } from '../../src/k8s/reflector.js';
import { silentLogger } from '../../src/logging/logger.js';
import { resourceSpecs } from '../../src/proxy/source/informers.js';
import { FakeApiServer } from '../helpers/fake-apiserver.mjs';
import { kubeconfigYaml } from '../helpers/kubeconfig.js';

let api: FakeApiServer;
let dir: string;
let connection: ApiConnection;
let reflector: Reflector<Service> | undefined;

beforeEach(async () => {
  api = new FakeApiServer();
  await api.start();
  dir = mkdtempSync(join(tmpdir(), 'nftlink-reflector-'));
  writeFileSync(join(dir, 'token'), 't');
  writeFileSync(join(dir, 'kubeconfig'), kubeconfigYaml({ server: api.url, tokenFile: 'token' }));
  connection = await connectApi({ kubeconfig: join(dir, 'kubeconfig') });
});

afterEach(async () => {
  await reflector?.stop();
  reflector = undefined;
  connection.close();
  await api.stop();
  rmSync(dir, { recursive: true, force: true });
});

const service = (name: string, spec: Record<string, unknown> = {}) => ({
  kind: 'Service',
  apiVersion: 'v1',
  metadata: { name, namespace: 'default' },
  spec: { clusterIP: '198.18.0.10', ports: [{ port: 80 }], ...spec },
});

async function waitFor(what: string, cond: () => boolean): Promise<void> {
  const until = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function start(): { events: string[]; problems: string[] } {
  const out = { events: [] as string[], problems: [] as string[] };
  reflector = new Reflector<Service>(
    new ApiClient(connection),
    resourceSpecs('node-a').services,
    {
      // A delete the reflector finds itself carries the object's identity only (no spec).
      event: (t, o) => out.events.push(t === 'delete' ? `delete ${o.metadata?.name} ${o.kind} spec:${o.spec === undefined ? 'none' : 'kept'}` : `${t} ${o.metadata?.name} ${JSON.stringify(o.spec?.ports?.map((p) => p.port))}`),
      listed: () => out.events.push('listed'),
      problem: (origin, reason) => out.problems.push(`${origin}: ${reason}`),
    },
    { log: silentLogger, backoff: { initialMs: 50, maxMs: 200, jitter: 0 }, watchTimeoutSeconds: () => 60 },
  );
  reflector.start();
  return out;
}

describe('reflector validation', () => {
  it('a list item of the wrong shape is refused naming it; the others are delivered', async () => {
    api.upsert('services', service('a'));
    api.upsert('services', service('b', { ports: '80' }));
    api.upsert('services', service('c', { ipFamilies: 'IPv4' }));
    api.upsert('services', service('d'));
    const out = start();
    await waitFor('listed', () => out.events.includes('listed'));
    expect(out.events).toEqual(['add a [80]', 'add d [80]', 'listed']);
    expect(out.problems).toEqual([
      'Service default/b (list item 1): spec.ports: expected array, not string',
      'Service default/c (list item 2): spec.ipFamilies: expected array, not string',
    ]);
  });

  it('a watch event of the wrong shape deletes the good version before it; a good one after it adds it back', async () => {
    api.upsert('services', service('a'));
    const out = start();
    await waitFor('watching', () => api.openWatches === 1);
    api.upsert('services', service('a', { ports: [{ port: '80' }] }));
    await waitFor('refusal', () => out.events.includes('delete a Service spec:none'));
    expect(out.problems).toEqual(['Service default/a (MODIFIED event): spec.ports[0].port: expected integer, not string']);
    // The watch goes on: later events arrive, the name is usable again once the object is.
    api.upsert('services', service('a', { ports: [{ port: 81 }] }));
    api.upsert('services', service('b'));
    await waitFor('later events', () => out.events.includes('add b [80]'));
    expect(out.events).toEqual(['add a [80]', 'listed', 'delete a Service spec:none', 'add a [81]', 'add b [80]']);
    // A refused object deleted from the API: nothing to delete (it was never delivered).
    api.upsert('services', service('c', { externalIPs: '198.18.0.5' }));
    api.remove('services', 'default', 'c');
    api.upsert('services', service('d'));
    await waitFor('d', () => out.events.includes('add d [80]'));
    expect(out.events.filter((e) => e.includes(' c '))).toEqual([]);
  });

  it('a name with a NUL byte or a newline is refused, printed escaped', async () => {
    const out = start();
    await waitFor('watching', () => api.openWatches === 1);
    api.upsert('services', { ...service('x'), metadata: { name: 'we\u0000b\n', namespace: 'default' } });
    api.upsert('services', service('ok'));
    await waitFor('ok', () => out.events.includes('add ok [80]'));
    expect(out.events).toEqual(['listed', 'add ok [80]']);
    expect(out.problems).toEqual(['Service "default/we\\u0000b\\n" (ADDED event): metadata.name: "we\\u0000b\\n" is not a DNS-1035 label (at most 63 lower-case letters, digits or \'-\', starting with a letter and ending with a letter or digit)']);
  });
});
