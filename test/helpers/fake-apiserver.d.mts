// Types of fake-apiserver.mjs (the in-process tests use it from TypeScript).

export type Resource = 'services' | 'endpointslices' | 'nodes';

export type Obj = { metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string; labels?: Record<string, string> }; [k: string]: unknown };

export interface RecordedRequest {
  at: number;
  resource: Resource;
  watch: boolean;
  query: URLSearchParams;
  authorization: string | undefined;
  userAgent: string;
}

export interface SavedState {
  rv: number;
  uidSeq: number;
  compactedRV: number;
  history: unknown[];
  store: Record<Resource, [string, Obj][]>;
}

export class FakeApiServer {
  constructor(saved?: SavedState);
  refuseWatches: boolean;
  goneAsHttpStatus: boolean;
  pauseWatches: boolean;
  bookmarkMs: number;
  listDelayMs: number;
  watchDelayMs: number;
  readonly counts: { lists: number; watches: number; bookmarks: number; gone: number; refused: number };
  readonly requests: RecordedRequest[];
  url: string;
  start(port?: number): Promise<string>;
  stop(): Promise<void>;
  upsert(resource: Resource, obj: Obj): Obj;
  remove(resource: Resource, namespace: string | undefined, name: string): void;
  dropWatches(): number;
  endWatches(): number;
  compact(): void;
  failNext(resource: Resource | '*', code: number, opts?: { watch?: boolean; times?: number }): void;
  writeToWatches(resource: Resource, text: string): number;
  readonly openWatches: number;
  readonly resourceVersion: number;
  state(): SavedState;
}
