// Services, EndpointSlices and Nodes from manifest files: a directory (every *.yaml, *.yml and
// *.json below it) or one file, multi-document YAML or JSON, List kinds unpacked (a JSON List item
// by item, each object sent as soon as it is read on a first read: see Sender). Watching lists the
// directories again on any change (debounced) and diffs the result against the previous read, so
// the proxy sees the same add/update/delete events an informer would give it. Only a file whose
// stat changed (device, inode, size, mtime, ctime: a rename over it or a ConfigMap's "..data" swap
// changes the inode) is read again, only a file whose text changed is parsed again, and of a JSON
// List that keeps changing only the items whose bytes changed (ListMemo, by a hash per item); when
// those keep their names, the objects are patched in place rather than collected anew (ListPatch).
//
// What cannot be used costs only itself, reported once: an object of the wrong shape (validated by
// k8s/validation, as the informers' objects are) is left out with its kind, name, file and field,
// and the file's other objects apply. A file that cannot be read or parsed (manifest-parse.ts) keeps
// the objects it gave before: it is most likely being written, and its objects must not flap into
// deletions. So does a file read before that is now empty, or YAML with no line break at its end,
// until it settles: a YAML cut short often parses, without what was cut off. A directory that cannot be listed (EMFILE, EACCES) keeps every file it held before, and
// a root that cannot be read keeps everything. Only a file that is gone, or an object gone from a
// file that parsed, deletes. Whatever failed is read again with backoff, without waiting for a file
// event (fds freed after an EMFILE make none). A first read that cannot read something fails start():
// a proxy must not report healthy with nothing programmed because its manifests were unreadable.
//
// Each directory read is watched, and so is the root's own entry in its parent: a root replaced by
// rename, or a symlink root swapped, is seen, and a watcher whose directory is no longer the one at
// its path (by device and inode) is replaced.

import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, extname, join, resolve, sep } from 'node:path';
import { Backoff } from '../../k8s/backoff.js';
import type { EndpointSlice, Node, Service } from '../../k8s/objects.js';
import { printable } from '../../k8s/validation/printable.js';
import { readFileBytes, releaseFileBytes } from './file-bytes.js';
import { FileWindow } from './file-window.js';
import { listHasher, type ListHasher } from './item-hash.js';
import { scanJsonList, utf8, type JsonListSpans } from './json-list.js';
import { addProblem, applyListPatch, collectObject, objectOrigin, type KeyedProblem, type ListItemsRead, type ListMemo, type ListPatch, type ManifestKind, type ManifestObject, type Sender } from './manifest-objects.js';
import { ManifestParseError, MAX_MANIFEST_BYTES, parseManifest, type ManifestContent } from './manifest-parse.js';
import type { ProxySource, SourceHandler, SourceProblem } from './source.js';

export interface ManifestSourceOptions {
  /** Keep watching after the first read (default true); false reads once (`nftlink render`, `proxy --once`). */
  watch?: boolean;
  /** How long to wait for a burst of file events to settle before re-reading (default 50 ms). */
  debounceMs?: number;
  /** The first delay before reading again what failed to read or parse (default 500 ms, doubling to 30 s). */
  retryInitialMs?: number;
  /**
   * A file read before that is now empty, or YAML that does not end with a line break, is taken as
   * being written (a truncated YAML often parses, and would delete what was cut off) until it has
   * not changed for this long (default 5 s; a source that does not watch reads it at once).
   */
  unfinishedYamlSettleMs?: number;
  /**
   * How long what a changing List's items gave (ListMemo) is kept after the
   * last read (default 60 s): a file that stopped changing then costs nothing, and its next change
   * is parsed whole, as a first change is.
   */
  listMemoMs?: number;
}

/** ManifestSourceOptions.listMemoMs's default. */
const LIST_MEMO_MS = 60_000;

export interface ManifestRead {
  objects: Map<string, ManifestObject>;
  problems: SourceProblem[];
}

const MANIFEST_EXTENSIONS = ['.yaml', '.yml', '.json'];
/** Emission order: what refers to something comes after it (slices name Services), deletions the other way. */
const KIND_ORDER: readonly ManifestKind[] = ['Node', 'Service', 'EndpointSlice'];

/** An empty list per kind. */
function byKind(): Map<ManifestKind, ManifestObject[]> {
  return new Map(KIND_ORDER.map((k) => [k, []]));
}

/** Reads every manifest under `path` once. */
export async function readManifests(path: string): Promise<ManifestRead> {
  const scan = await scanManifests(resolve(path), undefined, ONE_READ);
  return { objects: scan.objects, problems: scan.problems.map((p) => p.problem) };
}

export class ManifestSource implements ProxySource {
  private readonly root: string;
  private readonly watchChanges: boolean;
  private readonly debounceMs: number;
  private readonly retryInitialMs: number;
  private readonly unfinishedYamlSettleMs: number;
  private readonly listMemoMs: number;
  private listMemoTimer: NodeJS.Timeout | undefined;
  private handler: SourceHandler | undefined;
  private objects = new Map<string, ManifestObject>();
  /** What each file gave at its last successful read (kept while it does not read or parse), and its last parse. */
  private memory: ScanMemory = { lastGood: new Map(), parsed: new Map() };
  /** Problems of the last read, by (origin, reason, file content): each is reported once. */
  private reportedProblems = new Set<string>();
  private readonly watchers = new Map<string, { watcher: FSWatcher; identity: string }>();
  /** Directories whose watcher could not be made (reported once). */
  private readonly unwatchable = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryBackoff: Backoff;
  /** What the last read could not read (paths and reasons); empty when everything read. */
  private unread: string[] = [];
  private running: Promise<void> | undefined;
  private rescanRequested = false;
  private stopped = false;

  constructor(path: string, options: ManifestSourceOptions = {}) {
    this.root = resolve(path);
    this.watchChanges = options.watch ?? true;
    this.debounceMs = options.debounceMs ?? 50;
    this.retryInitialMs = options.retryInitialMs ?? 500;
    this.unfinishedYamlSettleMs = this.watchChanges ? (options.unfinishedYamlSettleMs ?? 5000) : 0;
    this.listMemoMs = options.listMemoMs ?? LIST_MEMO_MS;
    this.retryBackoff = this.newBackoff();
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
    if (this.unread.length) {
      await this.stop();
      throw new Error(`manifest source ${this.root}: cannot read ${this.unread.join('; ')}`);
    }
    handler.synced();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.retryTimer);
    clearTimeout(this.listMemoTimer);
    for (const { watcher } of this.watchers.values()) watcher.close();
    this.watchers.clear();
    await this.running;
    // A stopped source never reads again (start() refuses a second start): what it kept to compare
    // the next read with goes, and with it the file's bytes a List's memo holds.
    this.objects = new Map();
    this.memory = { lastGood: new Map(), parsed: new Map() };
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

  private schedule(delayMs = this.debounceMs): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.rescan().catch((err: Error) => {
        this.handler!.problem({ origin: this.root, reason: `re-read failed: ${err.message}` });
        this.scheduleRetry();
      });
    }, delayMs);
  }

  /** Reads again after a backoff delay: what failed may read now even if no file event says so. */
  private scheduleRetry(): void {
    if (this.stopped || !this.watchChanges) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.schedule(0), this.retryBackoff.next());
  }

  /** Forgets the files' ListMemos once no read has come for listMemoMs. */
  private releaseListMemosLater(): void {
    clearTimeout(this.listMemoTimer);
    this.listMemoTimer = undefined;
    if (this.stopped || ![...this.memory.parsed.values()].some((p) => p.items)) return;
    this.listMemoTimer = setTimeout(() => {
      this.listMemoTimer = undefined;
      const parsed = new Map<string, ParsedFile>();
      this.memory.parsed.forEach(({ items: _items, ...file }, path) => parsed.set(path, file));
      this.memory = { ...this.memory, parsed };
    }, this.listMemoMs);
    this.listMemoTimer.unref();
  }

  private newBackoff(): Backoff {
    return new Backoff({ initialMs: this.retryInitialMs, maxMs: 30_000, jitter: 0.2 });
  }

  private async readAndEmit(): Promise<void> {
    clearTimeout(this.retryTimer);
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
    const scan = await scanManifests(this.root, this.memory, { sender, unfinishedYamlSettleMs: this.unfinishedYamlSettleMs, rereads: this.watchChanges });
    if (this.stopped) return;
    this.memory = { lastGood: scan.files, parsed: scan.parsed, objects: scan.objects, duplicates: scan.duplicates };
    this.releaseListMemosLater();
    this.unread = scan.unread;
    if (scan.unread.length || scan.unparsed) this.scheduleRetry();
    else this.retryBackoff = this.newBackoff();
    if (this.watchChanges) this.watchDirectories(scan.watchDirs);

    const reported = new Set<string>();
    for (const { key, problem } of scan.problems) {
      reported.add(key);
      if (!this.reportedProblems.has(key)) handler.problem(problem);
    }
    this.reportedProblems = reported;

    if (scan.replaced) {
      // The objects were patched in place (ListPatch): these are all that changed.
      this.objects = scan.objects;
      const changed = byKind();
      for (let i = 1; i < scan.replaced.length; i += 2) changed.get(scan.replaced[i]!.kind)!.push(scan.replaced[i]!);
      for (const kind of KIND_ORDER) for (const now of changed.get(kind)!) emit(handler, 'update', now);
      for (let i = 1; i < scan.replaced.length; i += 2) forgetBody(scan.replaced[i]!);
      return;
    }
    const before = this.objects;
    this.objects = scan.objects;
    // By kind, in one pass each way (forEach: no entry array per object, 20k at 10k services).
    const gone = byKind();
    before.forEach((old, key) => {
      if (!scan.objects.has(key)) gone.get(old.kind)!.push(old);
    });
    for (const kind of [...KIND_ORDER].reverse()) for (const old of gone.get(kind)!) emit(handler, 'delete', old);
    // An unchanged file gives the very objects it gave last time (its parse is reused): nothing to
    // send. A changed file's objects are all sent as updates; the proxy's model finds which differ.
    // A first read sent each object as it was read (sender): nothing is left to send.
    const changed = byKind();
    scan.objects.forEach((now, key) => {
      const old = before.get(key);
      if (old ? old !== now : !now.sent) changed.get(now.kind)!.push(now);
    });
    for (const kind of KIND_ORDER) for (const now of changed.get(kind)!) emit(handler, before.has(now.key) ? 'update' : 'add', now);
    forgetBodies(scan.objects);
  }

  /**
   * One non-recursive watcher per directory read (recursive fs.watch is not dependable on Linux
   * before Node 22), kept while the directory at that path is the same one (device and inode).
   */
  private watchDirectories(dirs: ReadonlyMap<string, WatchedDir>): void {
    for (const [dir, w] of this.watchers) {
      if (dirs.get(dir)?.identity === w.identity) continue;
      w.watcher.close();
      this.watchers.delete(dir);
    }
    let added = false;
    for (const [dir, { identity, onlyEntry }] of dirs) {
      if (this.watchers.has(dir)) continue;
      try {
        const watcher = watch(dir, (_event, filename) => {
          // The root is watched through its parent for its own entry only: a file root replaced by
          // rename, a directory root renamed away or back, a symlink root swapped.
          if (onlyEntry !== undefined && filename && filename.toString() !== onlyEntry) return;
          this.schedule();
        });
        watcher.on('error', () => {
          // The directory went away: forget the watcher, the re-read will find out what is left.
          watcher.close();
          if (this.watchers.get(dir)?.watcher === watcher) this.watchers.delete(dir);
          this.schedule();
        });
        this.watchers.set(dir, { watcher, identity });
        this.unwatchable.delete(dir);
        added = true;
      } catch (err) {
        // Out of inotify watches, or the directory just went: tried again with the retries.
        if (!this.unwatchable.has(dir)) this.handler!.problem({ origin: dir, reason: `cannot watch: ${(err as Error).message}` });
        this.unwatchable.add(dir);
        this.scheduleRetry();
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
  if (obj.forgotten) return;
  obj.forgotten = true;
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
  /** Each file's last read: its stat, the hash of its text and what it gave. */
  parsed: Map<string, ParsedFile>;
  problems: KeyedProblem[];
  /** Directories to watch, by path. */
  watchDirs: Map<string, WatchedDir>;
  /** What could not be read ("path: reason"): the root, a directory listing, a file. Kept from before. */
  unread: string[];
  /** Paths whose listing failed: every file known below them is kept from before. */
  unlisted: string[];
  /** Some file did not parse (kept from before): read again later, in case it was caught being written. */
  unparsed: boolean;
  /** Lists read as patches of their read before, applied once every file is read. */
  patches: ListPatch[];
  /** For each file of `files`, in order: how many problems there were once it was read. */
  problemsRead: number[];
  /** Two files or documents define one object: `objects` keeps the first (memory for the next scan). */
  duplicates: boolean;
  /**
   * Set when `objects` is the previous scan's Map, patched in place: every object that changed and
   * what replaced it, two by two (nothing else was added or deleted). Undefined when `objects` is new.
   */
  replaced?: ManifestObject[];
}

/** A directory to watch: its device and inode when read, and the one entry that matters (the root's parent). */
interface WatchedDir {
  identity: string;
  onlyEntry?: string;
}

/** What the previous scan leaves to the next one. */
interface ScanMemory {
  lastGood: ReadonlyMap<string, ManifestObject[]>;
  parsed: ReadonlyMap<string, ParsedFile>;
  /** Its objects by key, and whether any key was defined twice (Scan). */
  objects?: Map<string, ManifestObject>;
  duplicates?: boolean;
}

/** What a file gave: its objects (or that it failed to parse) and the problems on the way. */
interface ParsedFile {
  /** Device, inode, size, mtime and ctime (ns) when it was read: while they stay, it is not read again. */
  stamp: string;
  /** The hash of its text: a file touched but not changed is not parsed again. */
  hash: string;
  result: ManifestObject[] | 'failed';
  problems: Scan['problems'];
  /** Its List's items, when it is one read item by item and was read before (ListMemo). */
  items?: ListMemo;
}

/** How a scan reads. */
interface ScanOptions {
  /** Sends each object as soon as it is read (a first read: see Sender). */
  sender?: Sender;
  /** ManifestSourceOptions.unfinishedYamlSettleMs; 0 for a single read. */
  unfinishedYamlSettleMs: number;
  /**
   * The files will be read again (a watching source): each file's content is hashed (readContent),
   * to tell a rewrite that changed nothing. A single read (`proxy --once`, `render`) names a file's
   * content by its stat instead (hashing 11 MB at 10k services, for nothing).
   */
  rereads: boolean;
}

const ONE_READ: ScanOptions = { unfinishedYamlSettleMs: 0, rereads: false };

async function scanManifests(root: string, memory: ScanMemory = { lastGood: new Map(), parsed: new Map() }, options: ScanOptions): Promise<Scan> {
  const scan: Scan = { objects: new Map(), files: new Map(), parsed: new Map(), problems: [], watchDirs: new Map(), unread: [], unlisted: [], unparsed: false, patches: [], problemsRead: [], duplicates: false };
  await watchEntry(scan, dirname(root), basename(root));
  const files: string[] = [];
  let rootStat;
  try {
    rootStat = await stat(root);
  } catch (err) {
    // Gone, or unreadable: either way the objects stay until it reads again (a root replaced by two
    // renames is briefly missing; an operator empties it to delete everything).
    cannotRead(scan, root, err);
    scan.unlisted.push(root);
    keepUnlisted(scan, memory);
    collectObjects(scan, memory);
    return scan;
  }
  if (rootStat.isDirectory()) await walk(root, root, files, scan, new Set());
  else files.push(root);
  for (const file of files.sort()) {
    const read = await readManifestFile(file, scan, memory.parsed.get(file), options);
    if (read === 'gone') continue;
    scan.files.set(file, read === 'failed' ? (memory.lastGood.get(file) ?? []) : read);
    scan.problemsRead.push(scan.problems.length);
  }
  keepUnlisted(scan, memory);
  collectObjects(scan, memory);
  return scan;
}

/** Files known before below a path that could not be listed keep their objects and their last read. */
function keepUnlisted(scan: Scan, memory: ScanMemory): void {
  if (scan.unlisted.length === 0) return;
  for (const [file, objects] of memory.lastGood) {
    if (scan.files.has(file) || !scan.unlisted.some((p) => file === p || file.startsWith(p + sep))) continue;
    scan.files.set(file, objects);
    scan.problemsRead.push(scan.problems.length);
    const parsed = memory.parsed.get(file);
    if (parsed) scan.parsed.set(file, parsed);
  }
}

/**
 * The scan's objects by key, once every file is read. When the files are the ones of the scan
 * before, each giving the very array it gave then (unchanged, kept, or a List patched in place),
 * and no key was defined twice, the previous scan's Map is patched in place: a re-read of a List
 * that keeps changing allocates for what changed only (ListPatch says why). Else it is collected
 * anew, file by file in the order they were read.
 */
function collectObjects(scan: Scan, memory: ScanMemory): void {
  const replaced: ManifestObject[] = [];
  for (const patch of scan.patches) applyListPatch(patch, replaced);
  const previous = memory.objects;
  if (previous && !memory.duplicates && sameFiles(scan.files, memory.lastGood)) {
    let inPlace = true;
    for (let i = 0; i < replaced.length && inPlace; i += 2) inPlace = previous.get(replaced[i]!.key) === replaced[i];
    if (inPlace) {
      for (let i = 1; i < replaced.length; i += 2) previous.set(replaced[i]!.key, replaced[i]!);
      scan.objects = previous;
      scan.replaced = replaced;
      return;
    }
  }
  // A key defined twice is reported right after the problems of the file that defines it again.
  const read = scan.problems;
  scan.problems = [];
  let from = 0;
  let index = 0;
  for (const [file, objects] of scan.files) {
    const end = scan.problemsRead[index++]!;
    for (; from < end; from++) scan.problems.push(read[from]!);
    let reparse = false;
    for (const obj of objects) if (!addObject(obj, scan) && obj.forgotten) reparse = true;
    // A copy that was sent before, and is now left out for an earlier one, kept only what deletes
    // it (forgetBody): should the earlier copy go, it would be sent as that. Its file is parsed
    // whole at the next read, which gives it its body back.
    if (reparse) scan.parsed.delete(file);
  }
  for (; from < read.length; from++) scan.problems.push(read[from]!);
}

/** The same files, in the same order, each with the same array of objects. */
function sameFiles(now: ReadonlyMap<string, ManifestObject[]>, before: ReadonlyMap<string, ManifestObject[]>): boolean {
  if (now.size !== before.size) return false;
  const earlier = before.entries();
  for (const [file, objects] of now) {
    const [file0, objects0] = earlier.next().value!;
    if (file !== file0 || objects !== objects0) return false;
  }
  return true;
}

function cannotRead(scan: Scan, path: string, err: unknown): void {
  const reason = `cannot read: ${(err as Error).message}`;
  scan.unread.push(`${path}: ${(err as Error).message}`);
  addProblem(scan, path, `${reason}; what it gave before is kept, and it is read again shortly`, '');
}

function isGone(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** Watches `dir` for one entry (or all when `onlyEntry` is undefined); false when `dir` cannot be read. */
async function watchEntry(scan: Scan, dir: string, onlyEntry?: string): Promise<string | undefined> {
  let s;
  try {
    s = await stat(dir);
  } catch {
    return undefined;
  }
  const identity = `${s.dev}:${s.ino}`;
  scan.watchDirs.set(dir, onlyEntry === undefined ? { identity } : { identity, onlyEntry });
  return identity;
}

/**
 * Collects manifest files below `dir`. Hidden entries are skipped: editors' temporaries, and the
 * "..data" / "..<timestamp>" directories of a mounted ConfigMap, whose files are also visible
 * through the symlinks at the top level (followed, like any symlink; loops are cut by inode).
 * A directory that cannot be listed, or an entry that cannot be looked at, is `unlisted`: what it
 * held is kept. One that is gone is gone.
 */
async function walk(root: string, dir: string, files: string[], scan: Scan, visited: Set<string>): Promise<void> {
  const identity = await watchEntry(scan, dir);
  if (identity !== undefined) {
    if (visited.has(identity)) {
      scan.watchDirs.delete(dir);
      return;
    }
    visited.add(identity);
  }
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (dir !== root && isGone(err)) return;
    cannotRead(scan, dir, err);
    scan.unlisted.push(dir);
    return;
  }
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    let isDir = entry.isDirectory();
    let isFile = entry.isFile();
    if (entry.isSymbolicLink()) {
      let target;
      try {
        target = await stat(path);
      } catch (err) {
        if (isGone(err)) continue; // dangling: nothing to read
        cannotRead(scan, path, err);
        scan.unlisted.push(path);
        continue;
      }
      isDir = target.isDirectory();
      isFile = target.isFile();
    }
    if (isDir) await walk(root, path, files, scan, visited);
    else if (isFile && MANIFEST_EXTENSIONS.includes(extname(entry.name).toLowerCase())) files.push(path);
  }
}

/** A manifest file's content as read (ManifestContent), the hash that names it, and what to free once it is parsed. */
interface FileContent {
  content: ManifestContent;
  contentHash: string;
  release(): void;
}

/**
 * Reads a manifest file: whole, or through a window when it was read before (`reread`: a watching
 * source's file that changed; file-window.ts says why). With `hasher` (a watching source, which
 * reads the file again: ScanOptions.rereads) its content is named by a hash, to tell a rewrite that
 * changed nothing: a JSON List's by its head and its items' hashes (the scan hashes each item;
 * `expectedItems`: as many as at the read before, if known), anything else's by a SHA-1 of its
 * bytes. Without, by `stamp`.
 */
async function readContent(file: string, stamp: string, reread: boolean, hasher: ListHasher | undefined, expectedItems: number | undefined): Promise<FileContent> {
  const json = extname(file).toLowerCase() === '.json';
  let bytes = json && reread ? undefined : await readFileBytes(file);
  const release = (): void => {
    if (bytes) releaseFileBytes(bytes);
  };
  if (json) {
    const window = bytes ? FileWindow.of(bytes) : FileWindow.open(file);
    let list: JsonListSpans | undefined;
    try {
      list = scanJsonList(window, hasher?.item, expectedItems);
    } catch (err) {
      window.close();
      throw err;
    }
    if (list) {
      const contentHash = hasher ? `xxh64:${hasher.list(list.head, list.hashes!).toString(36)}` : stamp;
      return {
        content: { list, window },
        contentHash,
        release: () => {
          window.close();
          release();
        },
      };
    }
    window.close();
    bytes ??= await readFileBytes(file);
  }
  return { content: { bytes: bytes!, json }, contentHash: hasher ? createHash('sha1').update(bytes!).digest('base64') : stamp, release };
}

/**
 * The objects of one file (refused ones reported and left out), "failed" when the file could not be
 * read or parsed (reported), "gone" when it was deleted after it was listed. A file whose stat is
 * what it was at its last read is not read again; one whose text is the same is not parsed again.
 */
async function readManifestFile(file: string, scan: Scan, before: ParsedFile | undefined, { sender, unfinishedYamlSettleMs, rereads }: ScanOptions): Promise<ManifestObject[] | 'failed' | 'gone'> {
  let read: FileContent;
  let stamp: string;
  let modifiedAt: number;
  const hasher = rereads ? await listHasher() : undefined;
  try {
    // Stat before reading: a write after the stat changes the stat again, so it is never missed.
    const s = await stat(file, { bigint: true });
    stamp = `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
    modifiedAt = Number(s.mtimeMs);
    if (before?.stamp === stamp) return reuse(file, before, scan);
    if (s.size > BigInt(MAX_MANIFEST_BYTES)) {
      const firstProblem = scan.problems.length;
      addProblem(scan, file, `not read: ${s.size} bytes, more than ${MAX_MANIFEST_BYTES}`, stamp);
      scan.parsed.set(file, { stamp, hash: '', result: 'failed', problems: scan.problems.slice(firstProblem) });
      return 'failed';
    }
    read = await readContent(file, stamp, before !== undefined && rereads, hasher, before?.items?.hashes.length);
  } catch (err) {
    // Deleted between listing and reading: the next event's re-read settles it.
    if (isGone(err)) return 'gone';
    cannotRead(scan, file, err);
    return 'failed';
  }
  try {
    const { content, contentHash } = read;
    if (before && unfinishedYamlSettleMs > 0 && 'bytes' in content && looksUnfinished(file, content.bytes) && Date.now() - modifiedAt < unfinishedYamlSettleMs) {
      // Kept as it was (read again with the retries) until it looks whole or settles.
      // A file read for the first time has nothing to keep: what parses of it applies at once.
      scan.unparsed = true;
      reuse(file, before, scan);
      return 'failed';
    }
    if (before?.hash === contentHash) return reuse(file, { ...before, stamp }, scan);
    const firstProblem = scan.problems.length;
    // A file read before keeps what its items gave (ListMemo), and takes what it can from before.
    const items: ListItemsRead | undefined = before && hasher ? { earlier: before.items, now: undefined, previous: before.result === 'failed' ? undefined : before.result } : undefined;
    const result = parseAndCollect(file, content, scan, contentHash, sender, items);
    if (result === 'failed') scan.unparsed = true;
    const parsed: ParsedFile = { stamp, hash: contentHash, result, problems: scan.problems.slice(firstProblem) };
    if (items?.now && result !== 'failed') parsed.items = items.now;
    scan.parsed.set(file, parsed);
    return result;
  } finally {
    read.release();
  }
}

/**
 * A file caught while it is written: empty, or a YAML file with no line break at its end. (A
 * truncated JSON does not parse, so it keeps what it gave anyway; YAML often does parse, without
 * what was cut off, and an empty file parses as no objects at all.)
 */
function looksUnfinished(file: string, bytes: Uint8Array): boolean {
  // Emptied: a writer that truncates before it writes (a shell redirect, writeFile) was caught between.
  if (blank(bytes)) return true;
  if (extname(file).toLowerCase() === '.json') return false;
  // Indentation after the last line break is no sign: what follows a cut there is not seen either way.
  let end = bytes.length - 1;
  while (end >= 0 && (bytes[end] === 0x20 || bytes[end] === 0x09)) end--;
  return end >= 0 && bytes[end] !== 0x0a;
}

/** Whitespace only (as /^\s*$/ has it), told from the first byte that is not ASCII whitespace. */
function blank(bytes: Uint8Array): boolean {
  for (const b of bytes) {
    if (b === 0x20 || (b >= 0x09 && b <= 0x0d)) continue;
    return b < 0x80 ? false : /^\s*$/.test(utf8(bytes));
  }
  return true;
}

/** What an unchanged file gave last time. */
function reuse(file: string, parsed: ParsedFile, scan: Scan): ManifestObject[] | 'failed' {
  scan.problems.push(...parsed.problems);
  scan.parsed.set(file, parsed);
  if (parsed.result === 'failed' && parsed.hash !== '') scan.unparsed = true;
  return parsed.result;
}

function parseAndCollect(file: string, content: ManifestContent, scan: Scan, contentHash: string, sender: Sender | undefined, items?: ListItemsRead): ManifestObject[] | 'failed' {
  const parsed = parseManifest(file, content);
  if ('failed' in parsed) {
    addProblem(scan, file, parsed.failed, contentHash);
    return 'failed';
  }
  const objects: ManifestObject[] = [];
  const problemsBefore = scan.problems.length;
  try {
    for (const doc of parsed.documents) collectObject(doc.value, doc.origin, undefined, undefined, { objects, scan, contentHash, sender, items });
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
  if (items?.patch) {
    // The file's objects are those of its read before, patched once the scan has read everything.
    scan.patches.push(items.patch);
    return items.patch.objects;
  }
  return objects;
}

/** Adds an object of a file to the scan, unless another file or document defined it first (then false). */
function addObject(obj: ManifestObject, scan: Scan): boolean {
  const earlier = scan.objects.get(obj.key);
  if (earlier === obj) return true; // sent while its file was read
  if (!earlier) {
    scan.objects.set(obj.key, obj);
    return true;
  }
  scan.duplicates = true;
  const meta = obj.object.metadata;
  const ref = printable(meta?.namespace ? `${meta.namespace}/${meta.name}` : `${meta?.name}`);
  addProblem(scan, objectOrigin(obj), `${obj.kind} ${ref} is already defined in ${objectOrigin(earlier)}; this copy is ignored`, objectOrigin(earlier), { kind: obj.kind, ref });
  return false;
}

