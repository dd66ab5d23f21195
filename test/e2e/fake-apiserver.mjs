// The fake Kubernetes API server of test/k8s/fake-apiserver.ts, as a plain-JS child process, so that
// it can run inside a test network namespace (`ip netns exec NS node fake-apiserver.mjs PORT`), next
// to the `nftlink proxy` process that talks to it. Extended for the end-to-end tests with:
//
// - BOOKMARK events on watches that ask for them (allowWatchBookmarks=true), every bookmarkMs;
// - slow answers: lists and watch headers held back for listDelayMs / watchDelayMs;
// - a state (objects, resourceVersions and the event history, as etcd keeps them) that outlives a
//   restart: the test stops one process, may change the state "while it is down", and starts the
//   next one with it.
//
// Control: one JSON command per line on stdin, one JSON answer per line on stdout
// ({id, ok, result} or {id, ok: false, error}). The server does not listen until {op: "listen"}.
// Commands: listen, upsert {resource, obj}, remove {resource, namespace, name}, dropWatches (the
// connections break), endWatches (they end cleanly, as at timeoutSeconds), compact, failNext {resource, code, watch?, times?}, set {key, value} (refuseWatches,
// goneAsHttpStatus, bookmarkMs, listDelayMs, watchDelayMs), stats, state, stop.

import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const PATHS = {
  '/api/v1/services': 'services',
  '/apis/discovery.k8s.io/v1/endpointslices': 'endpointslices',
  '/api/v1/nodes': 'nodes',
};
const LIST_KIND = {
  services: ['ServiceList', 'v1', 'Service'],
  endpointslices: ['EndpointSliceList', 'discovery.k8s.io/v1', 'EndpointSlice'],
  nodes: ['NodeList', 'v1', 'Node'],
};

const [port, statePath] = [Number(process.argv[2]), process.argv[3]];
const saved = statePath ? JSON.parse(readFileSync(statePath, 'utf8')) : undefined;

let rv = saved?.rv ?? 100;
let uidSeq = saved?.uidSeq ?? 0;
const store = { services: new Map(), endpointslices: new Map(), nodes: new Map() };
for (const r of Object.keys(store)) for (const [k, v] of saved?.store?.[r] ?? []) store[r].set(k, v);
const history = saved?.history ?? [];
let compactedRV = saved?.compactedRV ?? 0;
const watchers = new Set();
const failures = [];
const settings = { pauseWatches: false, refuseWatches: false, goneAsHttpStatus: false, bookmarkMs: 0, listDelayMs: 0, watchDelayMs: 0 };
const counts = { lists: 0, watches: 0, bookmarks: 0, gone: 0, refused: 0 };
const requests = [];

const keyOf = (o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

function record(resource, type, object) {
  const entry = { rv, resource, type, object };
  history.push(entry);
  for (const w of watchers) if (w.resource === resource) send(w, entry);
}

function upsert(resource, obj) {
  const key = keyOf(obj);
  const existing = store[resource].get(key);
  const stored = structuredClone(obj);
  stored.metadata.uid = existing?.metadata.uid ?? obj.metadata.uid ?? `uid-${++uidSeq}`;
  stored.metadata.resourceVersion = String(++rv);
  store[resource].set(key, stored);
  record(resource, existing ? 'MODIFIED' : 'ADDED', stored);
  return stored;
}

function remove(resource, namespace, name) {
  const key = `${namespace ?? ''}/${name}`;
  const existing = store[resource].get(key);
  if (!existing) throw new Error(`fake apiserver: no ${resource} ${key}`);
  store[resource].delete(key);
  const gone = structuredClone(existing);
  gone.metadata.resourceVersion = String(++rv);
  record(resource, 'DELETED', gone);
}

function matchesLabels(o, selector) {
  const labels = o.metadata.labels ?? {};
  return selector
    .split(',')
    .filter(Boolean)
    .every((term) => {
      if (term.startsWith('!')) return !(term.slice(1) in labels);
      const [k, v] = term.split('=');
      return v === undefined ? k in labels : labels[k] === v;
    });
}

function matchesFields(o, selector) {
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

function status(res, code, reason, message) {
  res.writeHead(code, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code }));
}

function send(w, e) {
  if (settings.pauseWatches) return;
  if (!matchesLabels(e.object, w.query.get('labelSelector') ?? '') || !matchesFields(e.object, w.query.get('fieldSelector') ?? '')) return;
  w.res.write(`${JSON.stringify({ type: e.type, object: e.object })}\n`);
}

function endWatch(w, abruptly) {
  clearTimeout(w.timer);
  clearInterval(w.bookmarks);
  watchers.delete(w);
  if (abruptly) w.res.socket?.destroy();
  else w.res.end();
}

function list(resource, q, res) {
  counts.lists++;
  const all = [...store[resource].values()].filter((o) => matchesLabels(o, q.get('labelSelector') ?? '') && matchesFields(o, q.get('fieldSelector') ?? '')).sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
  const limit = Number(q.get('limit') ?? 0);
  let start = 0;
  let listRV = String(rv);
  const cont = q.get('continue');
  if (cont) {
    const token = JSON.parse(Buffer.from(cont, 'base64').toString());
    if (Number(token.rv) <= compactedRV) return status(res, 410, 'Expired', 'The provided continue parameter is too old');
    start = token.start;
    listRV = token.rv;
  }
  const items = limit > 0 ? all.slice(start, start + limit) : all.slice(start);
  const next = limit > 0 && start + limit < all.length ? Buffer.from(JSON.stringify({ start: start + limit, rv: listRV })).toString('base64') : undefined;
  const [kind, apiVersion] = LIST_KIND[resource];
  const bare = items.map(({ kind: _k, apiVersion: _a, ...rest }) => rest);
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ kind, apiVersion, metadata: { resourceVersion: listRV, ...(next ? { continue: next } : {}) }, items: bare }));
}

function watch(resource, q, res) {
  counts.watches++;
  const from = Number(q.get('resourceVersion') || rv);
  if (from < compactedRV) {
    counts.gone++;
    const message = `too old resource version: ${from} (${compactedRV})`;
    if (settings.goneAsHttpStatus) return status(res, 410, 'Expired', message);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason: 'Expired', code: 410 } })}\n`);
    return;
  }
  res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
  res.flushHeaders();
  const timeout = Number(q.get('timeoutSeconds') ?? 0);
  const w = { resource, query: q, res, timer: undefined, bookmarks: undefined };
  w.timer = setTimeout(() => endWatch(w, false), timeout > 0 ? timeout * 1000 : 3_600_000);
  if (q.get('allowWatchBookmarks') === 'true' && settings.bookmarkMs > 0) {
    const [, apiVersion, kind] = LIST_KIND[resource];
    w.bookmarks = setInterval(() => {
      if (settings.pauseWatches) return;
      counts.bookmarks++;
      res.write(`${JSON.stringify({ type: 'BOOKMARK', object: { kind, apiVersion, metadata: { resourceVersion: String(rv) } } })}\n`);
    }, settings.bookmarkMs);
  }
  watchers.add(w);
  res.on('close', () => {
    clearTimeout(w.timer);
    clearInterval(w.bookmarks);
    watchers.delete(w);
  });
  for (const e of history) if (e.resource === resource && e.rv > from) send(w, e);
}

function handle(req, res) {
  const url = new URL(req.url ?? '/', 'http://x');
  const resource = PATHS[url.pathname];
  if (!resource) return status(res, 404, 'NotFound', `the server could not find the requested resource ${url.pathname}`);
  const isWatch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
  requests.push({ at: Date.now(), resource, watch: isWatch, query: url.search, authorization: req.headers.authorization ?? '', userAgent: req.headers['user-agent'] ?? '' });
  if (requests.length > 2000) requests.splice(0, 1000);
  const i = failures.findIndex((f) => (f.resource === '*' || f.resource === resource) && (f.watch === undefined || f.watch === isWatch));
  if (i >= 0) {
    const [f] = failures.splice(i, 1);
    return status(res, f.code, f.code === 410 ? 'Expired' : 'InternalError', `injected failure ${f.code}`);
  }
  const go = () => {
    if (isWatch) {
      if (settings.refuseWatches) {
        counts.refused++;
        return status(res, 503, 'ServiceUnavailable', 'apiserver is shutting down');
      }
      return watch(resource, url.searchParams, res);
    }
    list(resource, url.searchParams, res);
  };
  const delay = isWatch ? settings.watchDelayMs : settings.listDelayMs;
  if (delay > 0) setTimeout(go, delay);
  else go();
}

const server = createServer(handle);

const commands = {
  listen: () => new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}`));
  }),
  upsert: (c) => upsert(c.resource, c.obj),
  remove: (c) => remove(c.resource, c.namespace, c.name),
  dropWatches: () => {
    const n = watchers.size;
    for (const w of watchers) endWatch(w, true);
    return n;
  },
  endWatches: () => {
    const n = watchers.size;
    for (const w of watchers) endWatch(w, false);
    return n;
  },
  compact: () => {
    compactedRV = rv;
    history.length = 0;
  },
  failNext: (c) => {
    for (let i = 0; i < (c.times ?? 1); i++) failures.push({ resource: c.resource, watch: c.watch, code: c.code });
  },
  set: (c) => {
    if (!(c.key in settings)) throw new Error(`no setting ${c.key}`);
    settings[c.key] = c.value;
  },
  stats: () => ({ ...counts, openWatches: watchers.size, rv, requests: requests.slice(-200) }),
  state: () => ({ rv, uidSeq, compactedRV, history, store: Object.fromEntries(Object.entries(store).map(([r, m]) => [r, [...m.entries()]])) }),
  stop: async () => {
    for (const w of watchers) endWatch(w, true);
    server.closeAllConnections();
    await new Promise((r) => (server.listening ? server.close(() => r()) : r()));
    setImmediate(() => process.exit(0));
  },
};

createInterface({ input: process.stdin }).on('line', async (line) => {
  if (!line.trim()) return;
  const c = JSON.parse(line);
  try {
    const fn = commands[c.op];
    if (!fn) throw new Error(`unknown command ${c.op}`);
    const result = await fn(c);
    process.stdout.write(`${JSON.stringify({ id: c.id, ok: true, result: result ?? null })}\n`);
  } catch (err) {
    process.stdout.write(`${JSON.stringify({ id: c.id, ok: false, error: String(err?.message ?? err) })}\n`);
  }
});
process.stdin.on('end', () => process.exit(0));
