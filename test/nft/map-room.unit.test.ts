import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { reserveRehashRoom } from '../../src/nft/reconcile/map-room.js';

const key = (i: number): string => `198.18.${String(i).padStart(8, '0')}`;

// In a process of its own, with --expose-gc: the heap a test worker shares with other tests moves
// by more than the tables measured here. Keys of one length, so that only the table can grow.
const script = `
const { reserveRehashRoom } = await import(${JSON.stringify(pathToFileURL(join(process.cwd(), 'src/nft/reconcile/map-room.ts')).href)});
const key = (i) => '198.18.' + String(i).padStart(8, '0');
const heap = () => { gc(); gc(); return process.memoryUsage().heapUsed; };
function run(reserve) {
  const n = 50000;
  const map = new Map();
  for (let i = 0; i < n; i++) map.set(key(i), i);
  const built = heap();
  if (reserve) reserveRehashRoom(map, -1);
  const reserved = heap();
  // Endpoints replaced one by one: a key deleted, another added, three times the Map's size over.
  for (let i = 0; i < 3 * n; i++) { map.delete(key(i)); map.set(key(n + i), n + i); }
  const churned = heap();
  return { reserveMB: (reserved - built) / 2 ** 20, churnMB: (churned - reserved) / 2 ** 20, size: map.size };
}
console.log(JSON.stringify({ plain: run(false), reserved: run(true) }));
`;

describe('reserveRehashRoom', () => {
  it('leaves the contents and their order as they were, and no padding key behind', () => {
    const map = new Map<string, number>();
    for (let i = 0; i < 3000; i++) map.set(key(i), i);
    const before = [...map];
    reserveRehashRoom(map, -1);
    expect([...map]).toEqual(before);
  });

  it('keeps a key of the caller that looks like its padding', () => {
    const map = new Map<string, number>();
    map.set('\u0000room:0', 7);
    for (let i = 0; i < 1000; i++) map.set(key(i), i);
    reserveRehashRoom(map, -1);
    expect(map.get('\u0000room:0')).toBe(7);
    expect(map.size).toBe(1001);
  });

  it('makes the growth that churn brings happen at once: the heap then stays flat while keys are replaced', () => {
    const out = execFileSync(process.execPath, ['--expose-gc', '--no-warnings', '--input-type=module', '-e', script], { encoding: 'utf8' });
    const r = JSON.parse(out) as Record<'plain' | 'reserved', { reserveMB: number; churnMB: number; size: number }>;
    expect(r.plain.size).toBe(50000);
    expect(r.reserved.size).toBe(50000);
    // Without the room, the first rehash under churn doubles the table (65536 -> 131072 entries of
    // about 28 bytes: 1.75 MB).
    expect(r.plain.churnMB).toBeGreaterThan(1.2);
    // With it, that memory is taken when the room is made, and the churn adds nothing.
    expect(r.reserved.reserveMB).toBeGreaterThan(1.2);
    expect(Math.abs(r.reserved.churnMB)).toBeLessThan(0.3);
  });
});
