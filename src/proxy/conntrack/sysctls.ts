// The conntrack settings kube-proxy applies at start (cmd/kube-proxy: the conntracker): the table
// size (maxPerCore x CPUs, at least min) and the TCP and UDP timeouts, written to
// /proc/sys/net/netfilter. 0 leaves a value as the kernel has it. They apply to the network
// namespace the proxy runs in: with --netns they cannot be set from here.

import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import type { Logger } from '../../logging/logger.js';

const DIR = '/proc/sys/net/netfilter';

export interface ConntrackSetting {
  sysctl: string;
  value: number;
}

/** KubeProxyConfiguration's conntrack block, durations in milliseconds; 0 leaves a value as it is. */
export interface ConntrackConfig {
  maxPerCore: number;
  min: number;
  tcpEstablishedTimeoutMs: number;
  tcpCloseWaitTimeoutMs: number;
  tcpBeLiberal: boolean;
  udpTimeoutMs: number;
  udpStreamTimeoutMs: number;
}

/** What the configuration asks for, in sysctl units (entries, seconds). */
export function conntrackSettings(c: ConntrackConfig, cpuCount = cpus().length): ConntrackSetting[] {
  const out: ConntrackSetting[] = [];
  if (c.maxPerCore > 0) out.push({ sysctl: 'nf_conntrack_max', value: Math.max(c.maxPerCore * cpuCount, c.min) });
  const seconds = (ms: number): number => Math.round(ms / 1000);
  if (c.tcpEstablishedTimeoutMs > 0) out.push({ sysctl: 'nf_conntrack_tcp_timeout_established', value: seconds(c.tcpEstablishedTimeoutMs) });
  if (c.tcpCloseWaitTimeoutMs > 0) out.push({ sysctl: 'nf_conntrack_tcp_timeout_close_wait', value: seconds(c.tcpCloseWaitTimeoutMs) });
  if (c.tcpBeLiberal) out.push({ sysctl: 'nf_conntrack_tcp_be_liberal', value: 1 });
  if (c.udpTimeoutMs > 0) out.push({ sysctl: 'nf_conntrack_udp_timeout', value: seconds(c.udpTimeoutMs) });
  if (c.udpStreamTimeoutMs > 0) out.push({ sysctl: 'nf_conntrack_udp_timeout_stream', value: seconds(c.udpStreamTimeoutMs) });
  return out;
}

/** Writes each setting that differs; a failure (a read-only /proc/sys in a container) is logged, not fatal. */
export function applyConntrackSettings(settings: readonly ConntrackSetting[], log: Logger, dir = DIR): void {
  for (const s of settings) {
    const path = `${dir}/${s.sysctl}`;
    try {
      const current = Number(readFileSync(path, 'utf8').trim());
      // kube-proxy only ever raises nf_conntrack_max.
      if (s.sysctl === 'nf_conntrack_max' ? current >= s.value : current === s.value) continue;
      writeFileSync(path, String(s.value));
      log.info('set conntrack sysctl', { sysctl: s.sysctl, from: current, to: s.value });
    } catch (err) {
      log.error('cannot set conntrack sysctl', { sysctl: s.sysctl, value: s.value, reason: (err as Error).message });
    }
  }
}
