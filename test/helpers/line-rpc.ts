// The parent's side of a line RPC with a child process (line-rpc-serve.mjs is the child's): each
// call is one JSON line on its stdin, answered by the line on its stdout that carries the same id.
// A child that exits fails every call still waiting, with what it wrote on stderr.

import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export class LineRpc {
  private seq = 0;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private stderr = '';
  /** Resolves once the child has exited. */
  readonly exited: Promise<void>;

  /** `child` spawned with stdio pipes; `name` prefixes its errors. */
  constructor(readonly child: ChildProcess, name: string) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = JSON.parse(line) as { id: number; ok: boolean; result?: unknown; error?: string };
      const w = this.waiting.get(m.id);
      if (!w) return;
      this.waiting.delete(m.id);
      if (m.ok) w.resolve(m.result);
      else w.reject(new Error(`${name}: ${m.error}`));
    });
    child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((r) => child.once('exit', () => r()));
    void this.exited.then(() => {
      for (const w of this.waiting.values()) w.reject(new Error(`${name} exited: ${this.stderr}`));
      this.waiting.clear();
    });
  }

  call<T = unknown>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    const id = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.stdin!.write(`${JSON.stringify({ id, op, ...args })}\n`);
    });
  }

  /** Kills the child without a word (SIGKILL). */
  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.exited;
  }
}
