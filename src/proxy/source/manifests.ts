// Services, EndpointSlices and Nodes from manifest files: a directory (every *.yaml, *.yml and
// *.json below it) or one file, multi-document YAML or JSON, List kinds unpacked (a JSON List item
// by item, each object sent as soon as it is read on a first read: see Sender). Watching re-reads
// everything on any change (debounced) and diffs it against the previous read, so the proxy sees
// the same add/update/delete events an informer would give it. A file whose text is unchanged is
// not parsed or validated again: what it gave last time is reused.
//
// What cannot be used costs only itself, reported once: an object of the wrong shape (validated by
// k8s/validation, as the informers' objects are) is left out with its kind, name, file and field,
// and the file's other objects apply. A file that cannot be read or parsed (manifest-parse.ts) keeps
// the objects it gave before: it is most likely being written, and its objects must not flap into
// deletions. Only a file that is gone, or an object gone from a file that parsed, deletes.

import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { basename, dirname, extname, join, resolve } from 'node:path';
import type { EndpointSlice, Node, Service } from '../../k8s/objects.js';
import { printable } from '../../k8s/validation/printable.js';
import { validateObject } from '../../k8s/validation/validate.js';
import { ManifestParseError, MAX_MANIFEST_BYTES, parseManifest } from './manifest-parse.js';
import type { ProxySource, SourceHandler, SourceProblem } from './source.js';

export interface ManifestSourceOptions {
  /** Keep watching after the first read (default true); false reads once (`nftlink render`, `proxy --once`). */
  watch?: boolean;
  /** How long to wait for a burst of file events to settle before re-reading (default 50 ms). */
  debounceMs?: number;
}

export type ManifestKind = 'Service' | 'EndpointSlice' | 'Node';

export interface ManifestObject {
  kind: ManifestKind;
  /** "Kind/namespace/name" (namespace empty for Nodes). */
  key: string;
  /**
   * The object as read, until the read that found it has emitted it; then only its kind and
   * metadata's name and namespace, enough to delete it (see forgetBodies).
   */
  object: Service | EndpointSlice | Node;
  /** Where it was read: "file (document n)". */
  origin: string;
  /** Already sent while its file was read (a first read streams its objects: see Sender). */
  sent?: boolean;
}

/**
 * A first read sends each object as soon as it is read and keeps only what deletes it, instead of
 * holding every object of every file until the read ends: a 10 MB List is then never all in memory
 * at once. `send` returns false for an object it does not take (an earlier one has its key);
 * `unsend` takes back what a file sent before it failed to parse.
 */
interface Sender {
  send(obj: ManifestObject): boolean;
  unsend(obj: ManifestObject): void;
}

export interface ManifestRead {
  objects: Map<string, ManifestObject>;
  problems: SourceProblem[];
}

/** The apiVersion each kind must have when it states one. */
const KIND_API_VERSION: Record<ManifestKind, string> = { Service: 'v1', EndpointSlice: 'discovery.k8s.io/v1', Node: 'v1' };
const MANIFEST_EXTENSIONS = ['.yaml', '.yml', '.json'];
/** Emission order: what refers to something comes after it (slices name Services), deletions the other way. */
const KIND_ORDER: readonly ManifestKind[] = ['Node', 'Service', 'EndpointSlice'];
/** As kubectl apply: a namespaced object without a namespace is in "default". */
const DEFAULT_NAMESPACE = 'default';

/** Reads every manifest under `path` once. */
export async function readManifests(path: string): Promise<ManifestRead> {
  const scan = await scanManifests(resolve(path));
  return { objects: scan.objects, problems: scan.problems.map((p) => p.problem) };
}

export class ManifestSource implements ProxySource {
  private readonly root: string;
  private readonly watchChanges: boolean;
  private readonly debounceMs: number;
  private handler: SourceHandler | undefined;
  private objects = new Map<string, ManifestObject>();
  /** What each file gave at its last successful read (kept while it does not read or parse), and its last parse. */
  private memory: ScanMemory = { lastGood: new Map(), parsed: new Map() };
  /** Problems of the last read, by (origin, reason, file content): each is reported once. */
  private reportedProblems = new Set<string>();
  private readonly watchers = new Map<string, FSWatcher>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private rescanRequested = false;
  private stopped = false;

  constructor(path: string, options: ManifestSourceOptions = {}) {
    this.root = resolve(path);
    this.watchChanges = options.watch ?? true;
    this.debounceMs = options.debounceMs ?? 50;
  }

  async start(handler: SourceHandler): Promise<void> {
    if (this.handler) throw new Error(`manifest source ${this.root}: already started`);
    this.handler = handler;
    // Fail early on a path that is not there: a typo should not look like an empty cluster.
    try {
      await stat(this.root);
    } catch (err) {
      throw new Error(`manifest source ${this.root}: ${(err as Error).message}`);
    }
    await this.rescan();
    handler.synced();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
    await this.running;
  }

  /** Runs one read-and-diff at a time; a change during a read triggers another after it. */
  private async rescan(): Promise<void> {
    if (this.running) {
      this.rescanRequested = true;
      return this.running;
    }
    this.running = this.readAndEmit().finally(() => {
      this.running = undefined;
      if (this.rescanRequested) {
        this.rescanRequested = false;
        this.schedule();
      }
    });
    return this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.rescan().catch((err: Error) => this.handler!.problem({ origin: this.root, reason: `re-read failed: ${err.message}` }));
    }, this.debounceMs);
  }

  private async readAndEmit(): Promise<void> {
    const handler = this.handler!;
    const sender: Sender | undefined =
      this.objects.size === 0
        ? {
            send: (obj) => {
              emit(handler, 'add', obj);
              forgetBody(obj);
              return (obj.sent = true);
            },
            unsend: (obj) => emit(handler, 'delete', obj),
          }
        : undefined;
    const scan = await scanManifests(this.root, this.memory, sender);
    if (this.stopped) return;
    this.memory = { lastGood: scan.files, parsed: scan.parsed };
    if (this.watchChanges) this.watchDirectories(scan.watchDirs, scan.rootWatchedByParent);

    const reported = new Set<string>();
    for (const { key, problem } of scan.problems) {
      reported.add(key);
      if (!this.reportedProblems.has(key)) handler.problem(problem);
    }
    this.reportedProblems = reported;

    const before = this.objects;
    this.objects = scan.objects;
    for (const kind of [...KIND_ORDER].reverse()) {
      for (const [key, old] of before) if (old.kind === kind && !scan.objects.has(key)) emit(handler, 'delete', old);
    }
    // An unchanged file gives the very objects it gave last time (its parse is reused): nothing to
    // send. A changed file's objects are all sent as updates; the proxy's model finds which differ.
    for (const kind of KIND_ORDER) {
      for (const [key, now] of scan.objects) {
        if (now.kind !== kind) continue;
        const old = before.get(key);
        if (!old) {
          if (!now.sent) emit(handler, 'add', now);
        } else if (old !== now) emit(handler, 'update', now);
      }
    }
    forgetBodies(scan.objects);
  }

  /** One non-recursive watcher per directory read (recursive fs.watch is not dependable on Linux before Node 22). */
  private watchDirectories(dirs: ReadonlySet<string>, rootWatchedByParent: boolean): void {
    for (const [dir, w] of this.watchers) {
      if (dirs.has(dir)) continue;
      w.close();
      this.watchers.delete(dir);
    }
    const onlyFile = rootWatchedByParent ? basename(this.root) : undefined;
    let added = false;
    for (const dir of dirs) {
      if (this.watchers.has(dir)) continue;
      added = true;
      try {
        const w = watch(dir, (_event, filename) => {
          // A single file (or a missing root) is watched through its directory, so that editors
          // replacing it by rename, and the root appearing again, are seen.
          if (onlyFile && filename && filename.toString() !== onlyFile) return;
          this.schedule();
        });
        w.on('error', () => {
          // The directory went away: forget the watcher, the re-read will find out what is left.
          w.close();
          this.watchers.delete(dir);
          this.schedule();
        });
        this.watchers.set(dir, w);
      } catch (err) {
        this.handler!.problem({ origin: dir, reason: `cannot watch: ${(err as Error).message}` });
      }
    }
    // A file written into a directory after it was read and before its watcher existed has been
    // missed: read once more now that the watcher is there (this stops when no directory is new).
    if (added) this.schedule();
  }
}

/**
 * Once sent, an object's body is not needed again (the proxy keeps what it built from it): only
 * what deletes it stays. At 10k services the bodies kept for a process's life were most of its heap.
 */
function forgetBodies(objects: ReadonlyMap<string, ManifestObject>): void {
  for (const obj of objects.values()) forgetBody(obj);
}

function forgetBody(obj: ManifestObject): void {
  const { name, namespace } = obj.object.metadata ?? {};
  obj.object = { kind: obj.kind, metadata: { name, ...(namespace !== undefined ? { namespace } : {}) } } as ManifestObject['object'];
}

function emit(handler: SourceHandler, type: 'add' | 'update' | 'delete', obj: ManifestObject): void {
  if (obj.kind === 'Service') handler.service(type, obj.object as Service);
  else if (obj.kind === 'EndpointSlice') handler.endpointSlice(type, obj.object as EndpointSlice);
  else handler.node?.(type, obj.object as Node);
}

interface Scan {
  objects: Map<string, ManifestObject>;
  /** Each file's objects (those of its last good read when this one failed). */
  files: Map<string, ManifestObject[]>;
  /** Each file's parse, by the hash of its text. */
  parsed: Map<string, ParsedFile>;
  problems: { key: string; problem: SourceProblem }[];
  /** Directories to watch: every directory read, or the file's directory. */
  watchDirs: Set<string>;
  /** The root is a file, or missing: its parent directory is watched for it alone. */
  rootWatchedByParent: boolean;
}

/** What the previous scan leaves to the next one. */
interface ScanMemory {
  lastGood: ReadonlyMap<string, ManifestObject[]>;
  parsed: ReadonlyMap<string, ParsedFile>;
}

/** What a file's text gave: its objects (or that it failed to parse) and the problems on the way. */
interface ParsedFile {
  hash: string;
  result: ManifestObject[] | 'failed';
  problems: Scan['problems'];
}

async function scanManifests(root: string, memory: ScanMemory = { lastGood: new Map(), parsed: new Map() }, sender?: Sender): Promise<Scan> {
  const scan: Scan = { objects: new Map(), files: new Map(), parsed: new Map(), problems: [], watchDirs: new Set(), rootWatchedByParent: true };
  const files: string[] = [];
  let rootStat;
  try {
    rootStat = await stat(root);
  } catch (err) {
    addProblem(scan, root, `cannot read: ${(err as Error).message}`, '');
    scan.watchDirs.add(dirname(root));
    return scan;
  }
  if (rootStat.isDirectory()) {
    scan.rootWatchedByParent = false;
    await walk(root, files, scan, new Set());
  } else {
    files.push(root);
    scan.watchDirs.add(dirname(root));
  }
  for (const file of files.sort()) {
    const read = await readManifestFile(file, scan, memory.parsed.get(file), sender);
    if (read === 'gone') continue;
    const objects = read === 'failed' ? (memory.lastGood.get(file) ?? []) : read;
    scan.files.set(file, objects);
    for (const obj of objects) addObject(obj, scan);
  }
  return scan;
}

/**
 * Collects manifest files below `dir`. Hidden entries are skipped: editors' temporaries, and the
 * "..data" / "..<timestamp>" directories of a mounted ConfigMap, whose files are also visible
 * through the symlinks at the top level (followed, like any symlink; loops are cut by real path).
 */
async function walk(dir: string, files: string[], scan: Scan, visited: Set<string>): Promise<void> {
  const real = await realpath(dir).catch(() => dir);
  if (visited.has(real)) return;
  visited.add(real);
  scan.watchDirs.add(dir);
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    addProblem(scan, dir, `cannot read directory: ${(err as Error).message}`, '');
    return;
  }
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    let isDir = entry.isDirectory();
    let isFile = entry.isFile();
    if (entry.isSymbolicLink()) {
      const target = await stat(path).catch(() => undefined);
      if (!target) continue; // dangling: nothing to read
      isDir = target.isDirectory();
      isFile = target.isFile();
    }
    if (isDir) await walk(path, files, scan, visited);
    else if (isFile && MANIFEST_EXTENSIONS.includes(extname(entry.name).toLowerCase())) files.push(path);
  }
}

/**
 * The objects of one file (refused ones reported and left out), "failed" when the file could not be
 * read or parsed (reported), "gone" when it was deleted after it was listed.
 */
async function readManifestFile(file: string, scan: Scan, before: ParsedFile | undefined, sender: Sender | undefined): Promise<ManifestObject[] | 'failed' | 'gone'> {
  let text: string;
  try {
    const size = (await stat(file)).size;
    if (size > MAX_MANIFEST_BYTES) {
      addProblem(scan, file, `not read: ${size} bytes, more than ${MAX_MANIFEST_BYTES}`, String(size));
      return 'failed';
    }
    text = await readFile(file, 'utf8');
  } catch (err) {
    // Deleted between listing and reading: the next event's re-read settles it.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    addProblem(scan, file, `cannot read: ${(err as Error).message}`, '');
    return 'failed';
  }
  const contentHash = createHash('sha1').update(text).digest('base64');
  if (before?.hash === contentHash) {
    scan.problems.push(...before.problems);
    scan.parsed.set(file, before);
    return before.result;
  }
  const firstProblem = scan.problems.length;
  const result = parseAndCollect(file, text, scan, contentHash, sender);
  scan.parsed.set(file, { hash: contentHash, result, problems: scan.problems.slice(firstProblem) });
  return result;
}

function parseAndCollect(file: string, text: string, scan: Scan, contentHash: string, sender: Sender | undefined): ManifestObject[] | 'failed' {
  const parsed = parseManifest(file, text, extname(file).toLowerCase() === '.json');
  if ('failed' in parsed) {
    addProblem(scan, file, parsed.failed, contentHash);
    return 'failed';
  }
  const objects: ManifestObject[] = [];
  const problemsBefore = scan.problems.length;
  try {
    for (const doc of parsed.documents) collectObject(doc.value, doc.origin, undefined, { objects, scan, contentHash, sender });
  } catch (err) {
    if (!(err instanceof ManifestParseError)) throw err;
    // A List whose items are parsed as they are read broke partway: the file fails as a whole.
    for (const obj of objects) {
      if (!obj.sent) continue;
      sender?.unsend(obj);
      scan.objects.delete(obj.key);
    }
    scan.problems.length = problemsBefore;
    addProblem(scan, file, err.message, contentHash);
    return 'failed';
  }
  return objects;
}

/** Where collectObject puts what it finds. */
interface Collector {
  objects: ManifestObject[];
  scan: Scan;
  contentHash: string;
  sender: Sender | undefined;
}

/** Adds one object, or the items of a List (which may leave out their kind when the List names it). */
function collectObject(value: unknown, origin: string, impliedKind: string | undefined, into: Collector): void {
  const { scan, contentHash } = into;
  if (value === null || value === undefined) return; // an empty document
  if (typeof value !== 'object' || Array.isArray(value)) {
    addProblem(scan, origin, 'not a Kubernetes object (expected a mapping with kind and metadata)', contentHash);
    return;
  }
  const obj = value as { kind?: unknown; apiVersion?: unknown; metadata?: { name?: unknown; namespace?: unknown }; items?: unknown };
  const kind = obj.kind ?? impliedKind;
  if (typeof kind !== 'string' || kind === '') {
    addProblem(scan, origin, 'no kind', contentHash);
    return;
  }
  if (kind.endsWith('List')) {
    // An array, or the iterable of a JSON List read item by item (manifest-parse.ts).
    const items = obj.items;
    if (!Array.isArray(items) && !(items !== null && typeof items === 'object' && Symbol.iterator in items)) {
      addProblem(scan, origin, `${kind} without an items list`, contentHash);
      return;
    }
    const itemKind = kind === 'List' ? undefined : kind.slice(0, -'List'.length);
    let i = 0;
    for (const item of items as Iterable<unknown>) collectObject(item, `${origin} items[${i++}]`, itemKind, into);
    return;
  }
  if (!(kind in KIND_API_VERSION)) return; // not something the proxy reads
  const manifestKind = kind as ManifestKind;
  const apiVersion = KIND_API_VERSION[manifestKind];
  if (obj.apiVersion !== undefined && obj.apiVersion !== apiVersion) {
    addProblem(scan, origin, `${kind} of apiVersion ${JSON.stringify(obj.apiVersion)}: only ${apiVersion} is read`, contentHash);
    return;
  }
  const name = obj.metadata?.name;
  if (typeof name !== 'string' || name === '') {
    addProblem(scan, origin, `${kind} without metadata.name`, contentHash);
    return;
  }
  const normalized = { ...obj, kind, apiVersion, metadata: { ...obj.metadata } };
  if (manifestKind === 'Node') delete normalized.metadata.namespace;
  else if (normalized.metadata.namespace === undefined || normalized.metadata.namespace === '') {
    normalized.metadata.namespace = DEFAULT_NAMESPACE;
  }
  const ns: unknown = normalized.metadata.namespace;
  // Not a string: refused below by validation; written as JSON meanwhile, to name the object recognisably.
  const namespace = manifestKind === 'Node' ? '' : typeof ns === 'string' ? ns : JSON.stringify(ns);
  const valid = validateObject(manifestKind, normalized);
  if ('reason' in valid) {
    const ref = printable(namespace ? `${namespace}/${name}` : name);
    addProblem(scan, `${kind} ${ref} in ${origin}`, valid.reason, contentHash, { kind, ref });
    return;
  }
  const key = `${kind}/${namespace}/${name}`;
  const found: ManifestObject = { kind: manifestKind, key, object: valid.object, origin };
  into.objects.push(found);
  // A first read sends it now (and then keeps only what deletes it), unless its key is taken.
  if (into.sender && !scan.objects.has(key)) {
    scan.objects.set(key, found);
    into.sender.send(found);
  }
}

/** Adds an object of a file to the scan, unless another file or document defined it first. */
function addObject(obj: ManifestObject, scan: Scan): void {
  const earlier = scan.objects.get(obj.key);
  if (earlier === obj) return; // sent while its file was read
  if (!earlier) {
    scan.objects.set(obj.key, obj);
    return;
  }
  const meta = obj.object.metadata;
  const ref = printable(meta?.namespace ? `${meta.namespace}/${meta.name}` : `${meta?.name}`);
  addProblem(scan, obj.origin, `${obj.kind} ${ref} is already defined in ${earlier.origin}; this copy is ignored`, earlier.origin, { kind: obj.kind, ref });
}

function addProblem(scan: Scan, origin: string, reason: string, contentHash: string, object?: SourceProblem['object']): void {
  const problem: SourceProblem = object ? { origin, reason, object } : { origin, reason };
  scan.problems.push({ key: `${origin}\n${reason}\n${contentHash}`, problem });
}
