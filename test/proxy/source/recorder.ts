// What a manifest source's tests watch it with: a SourceHandler that records each Service event as
// one line ("add a 80", "delete a": a deletion names its object only) and each problem, and a wait.

import type { SourceHandler, SourceProblem } from '../../../src/proxy/source/source.js';

export interface Recorder extends SourceHandler {
  events: string[];
  problems: SourceProblem[];
}

export function recorder(): Recorder {
  const r: Recorder = {
    events: [],
    problems: [],
    service: (t, s) => r.events.push(t === 'delete' ? `delete ${s.metadata?.name}` : `${t} ${s.metadata?.name} ${s.spec?.ports?.[0]?.port}`),
    endpointSlice: (t, s) => r.events.push(`${t} slice ${s.metadata?.name}`),
    synced: () => {},
    problem: (p) => r.problems.push(p),
  };
  return r;
}

/** Polls `condition` every 20 ms; throws naming `what` after `ms`. */
export async function until(condition: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
