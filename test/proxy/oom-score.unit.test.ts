// kube-proxy's oomScoreAdj, written to the process's oom_score_adj (a file here, /proc/self in the proxy).

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { applyOomScoreAdj } from '../../src/proxy/oom-score.js';
import type { Logger } from '../../src/logging/logger.js';

const dir = mkdtempSync(join(tmpdir(), 'nftlink-oom-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function recorder(): { log: Logger; lines: { level: string; msg: string; fields: Record<string, unknown> }[] } {
  const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
  const at = (level: string) => (msg: string, fields: Record<string, unknown> = {}): void => void lines.push({ level, msg, fields });
  return { log: { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') }, lines };
}

it('writes the value when it differs, leaves an equal one alone, and only warns when it cannot', () => {
  const path = join(dir, 'oom_score_adj');
  writeFileSync(path, '0\n');
  const r = recorder();
  applyOomScoreAdj(-999, r.log, path);
  expect(readFileSync(path, 'utf8')).toBe('-999');
  applyOomScoreAdj(-999, r.log, path);
  applyOomScoreAdj(-999, r.log, join(dir, 'missing', 'oom_score_adj'));
  expect(r.lines.map((l) => [l.level, l.msg])).toEqual([
    ['info', 'set oom_score_adj'],
    ['warn', 'cannot set oom_score_adj'],
  ]);
  expect(r.lines[0]!.fields).toEqual({ from: 0, to: -999 });
});
