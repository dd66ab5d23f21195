// A container runtime's side of CNI, as libcni does it, for tests of CNI plugins: a network
// configuration list run plugin by plugin for ADD (each one's result the next one's prevResult),
// in reverse for DEL, in order for CHECK (both with the cached result of ADD as prevResult), each
// plugin found by its "type" on CNI_PATH and run as a process with the CNI_* environment and its
// configuration on stdin. The plugins run in the "host" namespace (`ip netns exec`); the container
// is CNI_NETNS.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Netns } from '../helpers/netns.js';

export interface PortMapping {
  hostPort: number;
  containerPort: number;
  protocol?: string;
  hostIP?: string;
}

export interface NetworkConfigList {
  cniVersion: string;
  name: string;
  plugins: Record<string, unknown>[];
}

export interface PluginRun {
  /** The exit status. */
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout as JSON, when it is. */
  json?: Record<string, unknown>;
}

export interface Invocation {
  command: string | undefined;
  containerId?: string;
  ifname?: string;
  netns?: string;
  /** CNI_PATH: the directories searched for plugins, in order. */
  path: string[];
  /** Environment variables to leave out (to test a plugin's refusal). */
  unset?: string[];
}

/** Runs one plugin binary in `host` the way a runtime does; never throws for a failing plugin. */
export function runPlugin(host: Netns, type: string, inv: Invocation, stdin: string): Promise<PluginRun> {
  const dir = inv.path.find((d) => existsSync(join(d, type)));
  if (!dir) throw new Error(`plugin ${type} not found on CNI_PATH ${inv.path.join(':')}`);
  const env: Record<string, string> = {
    // The plugin gets the runtime's PATH (nftlink-portmap's `#!/usr/bin/env node` needs Node 24 on it).
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    CNI_COMMAND: inv.command ?? '',
    CNI_CONTAINERID: inv.containerId ?? '',
    CNI_NETNS: inv.netns ?? '',
    CNI_IFNAME: inv.ifname ?? '',
    CNI_ARGS: '',
    CNI_PATH: inv.path.join(':'),
  };
  if (inv.command === undefined) delete env.CNI_COMMAND;
  for (const k of inv.unset ?? []) delete env[k];
  return new Promise((resolve, reject) => {
    const child = spawn('ip', ['netns', 'exec', host.name, join(dir, type)], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const run: PluginRun = { code, stdout, stderr };
      try {
        if (stdout.trim()) run.json = JSON.parse(stdout) as Record<string, unknown>;
      } catch {
        // Left as text: the test that reads it says what it expected.
      }
      resolve(run);
    });
    child.stdin.end(stdin);
  });
}

export interface Attachment {
  containerId: string;
  ifname: string;
  /** The container's namespace (its path is CNI_NETNS). */
  netns: Netns;
  portMappings: PortMapping[];
}

/** What libcni gives each plugin of a list: the list's name and version, the runtime config of its capabilities, prevResult. */
function pluginConfig(list: NetworkConfigList, plugin: Record<string, unknown>, a: Attachment, prevResult: unknown): string {
  const conf: Record<string, unknown> = { ...plugin, cniVersion: list.cniVersion, name: list.name };
  const caps = plugin.capabilities as Record<string, boolean> | undefined;
  if (caps?.portMappings && a.portMappings.length) conf.runtimeConfig = { portMappings: a.portMappings };
  if (prevResult !== undefined) conf.prevResult = prevResult;
  return JSON.stringify(conf);
}

export class CniRuntime {
  /** ADD's results, by attachment, as libcni caches them for DEL and CHECK. */
  private readonly cache = new Map<string, unknown>();

  constructor(
    private readonly host: Netns,
    private readonly list: NetworkConfigList,
    private readonly path: string[],
  ) {}

  private invocation(command: string, a: Attachment): Invocation {
    return { command, containerId: a.containerId, ifname: a.ifname, netns: `/var/run/netns/${a.netns.name}`, path: this.path };
  }

  private key(a: Attachment): string {
    return `${a.containerId}/${a.ifname}`;
  }

  /** ADD through the whole list; throws with the failing plugin's error object. Resolves with each plugin's result, in order. */
  async add(a: Attachment): Promise<Record<string, unknown>[]> {
    const results: Record<string, unknown>[] = [];
    for (const plugin of this.list.plugins) {
      const run = await runPlugin(this.host, plugin.type as string, this.invocation('ADD', a), pluginConfig(this.list, plugin, a, results.at(-1)));
      if (run.code !== 0 || !run.json) throw new Error(`ADD ${plugin.type as string} failed (${run.code}): ${run.stdout}${run.stderr}`);
      results.push(run.json);
    }
    this.cache.set(this.key(a), results.at(-1));
    return results;
  }

  /** CHECK through the whole list; resolves with the first failing plugin's run, or undefined. */
  async check(a: Attachment): Promise<PluginRun | undefined> {
    for (const plugin of this.list.plugins) {
      const run = await runPlugin(this.host, plugin.type as string, this.invocation('CHECK', a), pluginConfig(this.list, plugin, a, this.cache.get(this.key(a))));
      if (run.code !== 0) return run;
    }
    return undefined;
  }

  /** One plugin of the list alone, with the cached result of ADD as prevResult (a repair, or a single step). */
  runOne(type: string, command: string, a: Attachment): Promise<PluginRun> {
    const plugin = this.list.plugins.find((p) => p.type === type);
    if (!plugin) throw new Error(`no plugin ${type} in the list`);
    return runPlugin(this.host, type, this.invocation(command, a), pluginConfig(this.list, plugin, a, this.cache.get(this.key(a))));
  }

  /** DEL through the list in reverse; throws with the failing plugin's error object. */
  async del(a: Attachment): Promise<void> {
    const prev = this.cache.get(this.key(a));
    for (const plugin of [...this.list.plugins].reverse()) {
      const run = await runPlugin(this.host, plugin.type as string, this.invocation('DEL', a), pluginConfig(this.list, plugin, a, prev));
      if (run.code !== 0) throw new Error(`DEL ${plugin.type as string} failed (${run.code}): ${run.stdout}${run.stderr}`);
    }
    this.cache.delete(this.key(a));
  }
}
