import { describe, expect, it } from 'vitest';
import { parseRepairArgs } from '../../bench/repair/args.js';
import { parseAttempts } from '../../bench/repair/probe-loop.js';
import { judgedMs, repairTime, trafficRecovery, unNATtedPorts, type Attempt } from '../../bench/repair/recovery.js';
import { summarize, table } from '../../bench/repair/report.js';

// The pure pieces of `npm run bench:repair`: what counts as "traffic works again" after a tamper,
// which log line is the repair, and how the repetitions are judged against issue 32's targets.

const a = (target: string, start: number, end: number, ok: boolean): Attempt => ({ target, start, end, ok });

describe('trafficRecovery', () => {
  it('is the first success started after the last failure, from the command return', () => {
    const attempts = [a('vip', 90, 91, true), a('vip', 100, 400, false), a('vip', 110, 111, false), a('vip', 120, 121.5, true), a('vip', 130, 131, true)];
    expect(trafficRecovery(attempts, 100, 105)).toEqual({ failed: 2, trafficMs: 16.5 });
  });

  it('waits for the slowest target, and ignores failures from before the command', () => {
    const attempts = [a('vip', 50, 51, false), a('vip', 110, 112, true), a('np', 110, 111, false), a('np', 140, 141, true)];
    expect(trafficRecovery(attempts, 100, 105)).toEqual({ failed: 1, trafficMs: 36 });
  });

  it('does not take a success from a connection already in flight when the command returned', () => {
    const attempts = [a('vip', 100, 101, false), a('vip', 102, 108, true), a('vip', 110, 111, true)];
    expect(trafficRecovery(attempts, 100, 105).trafficMs).toBe(6);
  });

  it('says a partial breakage recovered only after its last failure (one of two endpoints gone)', () => {
    const attempts = [a('vip', 101, 102, true), a('vip', 111, 112, false), a('vip', 121, 122, true), a('vip', 131, 132, false), a('vip', 141, 142, true)];
    expect(trafficRecovery(attempts, 100, 100)).toEqual({ failed: 2, trafficMs: 42 });
  });

  it('reports no figure when nothing failed, and an infinite one when traffic never came back', () => {
    expect(trafficRecovery([a('vip', 101, 102, true)], 100, 100)).toEqual({ failed: 0 });
    expect(trafficRecovery([a('vip', 101, 402, false)], 100, 100)).toEqual({ failed: 1, trafficMs: Infinity });
  });
});

describe('repairTime and judgedMs', () => {
  const line = (time: number, family: string, full: boolean, repaired = false) => ({ time, family, full, repaired, operations: 1, durationMs: 1 });
  const lines = [line(90, 'ip', true), line(120, 'ip6', true), line(125, 'ip', false), line(130, 'ip', true)];
  it('takes the first full sync of table ip after the command started', () => {
    expect(repairTime(lines, 100, 110)).toBe(20);
    expect(repairTime(lines, 200, 210)).toBeUndefined();
  });
  it('or the first targeted repair, whichever comes first', () => {
    expect(repairTime([line(105, 'ip6', false, true), line(115, 'ip', false, true), ...lines], 100, 110)).toBe(5);
  });
  it('judges by traffic when the change broke it, else by the repair', () => {
    expect(judgedMs({ failed: 3, trafficMs: 40, repairMs: 10 })).toBe(40);
    expect(judgedMs({ failed: 0, repairMs: 10 })).toBe(10);
  });
});

describe('unNATtedPorts', () => {
  it('finds the entries towards the ClusterIP whose reply comes from the ClusterIP itself (never DNATed)', () => {
    const list = [
      'tcp      6 118 SYN_SENT src=198.19.0.2 dst=198.18.200.60 sport=50400 dport=80 [UNREPLIED] src=198.18.10.2 dst=198.19.0.1 sport=8080 dport=50400 mark=0 use=1',
      'tcp      6 118 SYN_SENT src=198.19.0.2 dst=198.18.200.60 sport=55064 dport=80 [UNREPLIED] src=198.18.200.60 dst=198.19.0.2 sport=80 dport=55064 mark=0 use=1',
    ].join('\n');
    expect([...unNATtedPorts(list, '198.18.200.60')]).toEqual([55064]);
  });
});

describe('summarize', () => {
  it('passes p50 <= 100 and max <= 500, and counts a rep without a figure as a miss', () => {
    const ok = summarize({ layout: 'slots', kind: 'k', reps: [{ failed: 1, trafficMs: 10, repairMs: 5 }, { failed: 0, repairMs: 20 }, { failed: 2, trafficMs: 490, repairMs: 4 }] });
    expect(ok).toMatchObject({ measured: 'mixed', p50: 20, max: 490, failed: 3, pass: true });
    const lost = summarize({ layout: 'slots', kind: 'k', reps: [{ failed: 0, repairMs: 5 }, { failed: 0 }] });
    expect(lost).toMatchObject({ measured: 'repair', max: Infinity, pass: false });
    expect(table([ok, lost])).toContain('none');
  });
});

describe('parseAttempts and parseRepairArgs', () => {
  it('reads the probe loop lines and skips its ready line', () => {
    expect(parseAttempts('ready\n198.18.200.60:80 1.50 2.25 1\n198.19.0.1:30091 3 4 0\n')).toEqual([
      a('198.18.200.60:80', 1.5, 2.25, true),
      a('198.19.0.1:30091', 3, 4, false),
    ]);
  });
  it('reads the source port and why an attempt failed', () => {
    expect(parseAttempts('198.18.200.60:80 1 301 0 55064 timeout\n198.19.0.1:30091 3 4 1 40000 ok\n')).toEqual([
      { ...a('198.18.200.60:80', 1, 301, false), port: 55064, why: 'timeout' },
      { ...a('198.19.0.1:30091', 3, 4, true), port: 40000 },
    ]);
  });
  it('defaults to 10 reps over both layouts, 2.5 s apart, and refuses unknown layouts', () => {
    expect(parseRepairArgs([])).toMatchObject({ reps: 10, layouts: ['slots', 'kube-proxy'], spacingMs: 2500, intervalMs: 10, keepConntrack: false });
    expect(parseRepairArgs(['--keep-conntrack']).keepConntrack).toBe(true);
    expect(parseRepairArgs(['--reps', '3', '--layouts', 'slots']).reps).toBe(3);
    expect(() => parseRepairArgs(['--layouts', 'iptables'])).toThrow(/--layouts/);
    expect(() => parseRepairArgs(['--reps', '0'])).toThrow(/--reps/);
  });
});
