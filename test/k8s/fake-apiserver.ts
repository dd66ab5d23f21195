// A small stand-in for the Kubernetes API server: list and watch of Services, EndpointSlices and
// Nodes, as JSON, with resourceVersions, label selectors of the form "!key" and "key=value", the
// metadata.name field selector, paging (limit/continue), chunked watch streams that end after
// timeoutSeconds, and failures on demand: 410 Gone for a compacted resourceVersion, dropped
// connections, error statuses. Only what the informer source needs; there is no cluster here.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Resource = 'services' | 'endpointslices' | 'nodes';

const PATHS: Record<string, Resource> = {
  '/api/v1/services': 'services',
  '/apis/discovery.k8s.io/v1/endpointslices': 'endpointslices',
  '/api/v1/nodes': 'nodes',
};
const LIST_KIND: Record<Resource, [string, string]> = {
  services: ['ServiceList', 'v1'],
  endpointslices: ['EndpointSliceList', 'discovery.k8s.io/v1'],
  nodes: ['NodeList', 'v1'],
};

type Obj = { metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string; labels?: Record<string, string> }; [k: string]: unknown };

interface HistoryEntry {
  rv: number;
  resource: Resource;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: Obj;
}

interface Watcher {
  resource: Resource;
  query: URLSearchParams;
  res: ServerResponse;
  timer: NodeJS.Timeout;
}

export interface RecordedRequest {
  at: number;
  resource: Resource;
  watch: boolean;
  query: URLSearchParams;
  authorization: string | undefined;
}

export class FakeApiServer {
  private readonly server: Server;
  private rv = 100;
  private uidSeq = 0;
  private readonly store: Record<Resource, Map<string, Obj>> = { services: new Map(), endpointslices: new Map(), nodes: new Map() };
  private readonly history: HistoryEntry[] = [];
  /** Watches from a resourceVersion at or below this get 410 Gone. */
  private compactedRV = 0;
  private readonly watchers = new Set<Watcher>();
  private readonly failures: { resource: Resource | '*'; watch: boolean | undefined; code: number }[] = [];
  /** While set, watch requests are refused with 503 (an API server that is away). */
  refuseWatches = false;
  /** Answer 410 for a too-old resourceVersion as an HTTP status instead of an ERROR event. */
  goneAsHttpStatus = false;
  readonly requests: RecordedRequest[] = [];
  url = '';

  constructor() {
    this.server = createServer((req, res) => this.handle(req, res));
  }

  async start(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    for (const w of this.watchers) this.endWatch(w, true);
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  // ---- the cluster's objects -------------------------------------------------------------------

  upsert(resource: Resource, obj: Obj): Obj {
    const key = keyOf(obj);
    const existing = this.store[resource].get(key);
    const stored: Obj = structuredClone(obj);
    stored.metadata.uid = existing?.metadata.uid ?? obj.metadata.uid ?? `uid-${++this.uidSeq}`;
    stored.metadata.resourceVersion = String(++this.rv);
    this.store[resource].set(key, stored);
    this.record(resource, existing ? 'MODIFIED' : 'ADDED', stored);
    return stored;
  }

  remove(resource: Resource, namespace: string | undefined, name: string): void {
    const key = `${namespace ?? ''}/${name}`;
    const existing = this.store[resource].get(key);
    if (!existing) throw new Error(`fake apiserver: no ${resource} ${key}`);
    this.store[resource].delete(key);
    const gone: Obj = structuredClone(existing);
    gone.metadata.resourceVersion = String(++this.rv);
    this.record(resource, 'DELETED', gone);
  }

  // ---- failures on demand ------------------------------------------------------------------------

  /** Closes every open watch stream abruptly (the connection drops, no clean end). */
  dropWatches(): void {
    for (const w of this.watchers) this.endWatch(w, true);
  }

  /** Forgets the history: watches from any resourceVersion seen so far get 410 Gone. */
  compact(): void {
    this.compactedRV = this.rv;
    this.history.length = 0;
  }

  /** The next request (of the resource, list or watch) answers `code`. */
  failNext(resource: Resource | '*', code: number, opts: { watch?: boolean; times?: number } = {}): void {
    for (let i = 0; i < (opts.times ?? 1); i++) this.failures.push({ resource, watch: opts.watch, code });
  }

  get openWatches(): number {
    return this.watchers.size;
  }

  // ---- HTTP ---------------------------------------------------------------------------------------

  private record(resource: Resource, type: HistoryEntry['type'], object: Obj): void {
    const entry = { rv: this.rv, resource, type, object };
    this.history.push(entry);
    for (const w of this.watchers) if (w.resource === resource) this.send(w, entry);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://x');
    const resource = PATHS[url.pathname];
    if (!resource) return this.status(res, 404, 'NotFound', `the server could not find the requested resource ${url.pathname}`);
    const watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
    this.requests.push({ at: Date.now(), resource, watch, query: url.searchParams, authorization: req.headers.authorization });
    const i = this.failures.findIndex((f) => (f.resource === '*' || f.resource === resource) && (f.watch === undefined || f.watch === watch));
    if (i >= 0) {
      const [f] = this.failures.splice(i, 1);
      return this.status(res, f!.code, f!.code === 410 ? 'Expired' : 'InternalError', `injected failure ${f!.code}`);
    }
    if (watch) {
      if (this.refuseWatches) return this.status(res, 503, 'ServiceUnavailable', 'apiserver is shutting down');
      return this.watch(resource, url.searchParams, res);
    }
    this.list(resource, url.searchParams, res);
  }

  private selected(resource: Resource, q: URLSearchParams): Obj[] {
    return [...this.store[resource].values()].filter((o) => matchesLabels(o, q.get('labelSelector') ?? '') && matchesFields(o, q.get('fieldSelector') ?? ''));
  }

  private list(resource: Resource, q: URLSearchParams, res: ServerResponse): void {
    const all = this.selected(resource, q).sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
    const limit = Number(q.get('limit') ?? 0);
    let start = 0;
    let listRV = String(this.rv);
    const cont = q.get('continue');
    if (cont) {
      const token = JSON.parse(Buffer.from(cont, 'base64').toString()) as { start: number; rv: string };
      if (Number(token.rv) <= this.compactedRV) return this.status(res, 410, 'Expired', 'The provided continue parameter is too old');
      start = token.start;
      listRV = token.rv;
    }
    const items = limit > 0 ? all.slice(start, start + limit) : all.slice(start);
    const next = limit > 0 && start + limit < all.length ? Buffer.from(JSON.stringify({ start: start + limit, rv: listRV })).toString('base64') : undefined;
    const [kind, apiVersion] = LIST_KIND[resource];
    // As the real server: list items carry neither kind nor apiVersion.
    const bare = items.map(({ kind: _k, apiVersion: _a, ...rest }) => rest);
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ kind, apiVersion, metadata: { resourceVersion: listRV, ...(next ? { continue: next } : {}) }, items: bare }));
  }

  private watch(resource: Resource, q: URLSearchParams, res: ServerResponse): void {
    const from = Number(q.get('resourceVersion') || this.rv);
    if (from < this.compactedRV) {
      if (this.goneAsHttpStatus) return this.status(res, 410, 'Expired', `too old resource version: ${from} (${this.compactedRV})`);
      res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
      res.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: `too old resource version: ${from} (${this.compactedRV})`, reason: 'Expired', code: 410 } })}\n`);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    const timeout = Number(q.get('timeoutSeconds') ?? 0);
    const w: Watcher = { resource, query: q, res, timer: setTimeout(() => this.endWatch(w, false), timeout > 0 ? timeout * 1000 : 3_600_000) };
    this.watchers.add(w);
    res.on('close', () => {
      clearTimeout(w.timer);
      this.watchers.delete(w);
    });
    for (const e of this.history) if (e.resource === resource && e.rv > from) this.send(w, e);
  }

  private send(w: Watcher, e: HistoryEntry): void {
    if (!matchesLabels(e.object, w.query.get('labelSelector') ?? '') || !matchesFields(e.object, w.query.get('fieldSelector') ?? '')) return;
    w.res.write(`${JSON.stringify({ type: e.type, object: e.object })}\n`);
  }

  private endWatch(w: Watcher, abruptly: boolean): void {
    clearTimeout(w.timer);
    this.watchers.delete(w);
    if (abruptly) w.res.socket?.destroy();
    else w.res.end();
  }

  private status(res: ServerResponse, code: number, reason: string, message: string): void {
    res.writeHead(code, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code }));
  }
}

function keyOf(o: Obj): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

/** "!key", "key" and "key=value" terms, comma-separated (all must hold). */
function matchesLabels(o: Obj, selector: string): boolean {
  const labels = o.metadata.labels ?? {};
  return selector
    .split(',')
    .filter(Boolean)
    .every((term) => {
      if (term.startsWith('!')) return !(term.slice(1) in labels);
      const [k, v] = term.split('=');
      return v === undefined ? k! in labels : labels[k!] === v;
    });
}

function matchesFields(o: Obj, selector: string): boolean {
  return selector
    .split(',')
    .filter(Boolean)
    .every((term) => {
      const [k, v] = term.split('=');
      if (k === 'metadata.name') return o.metadata.name === v;
      if (k === 'metadata.namespace') return o.metadata.namespace === v;
      throw new Error(`fake apiserver: field selector ${k} is not supported`);
    });
}
