// nftlink-portmap: a chained CNI plugin that maps host ports to a container's ports with nftables,
// written over netlink by nftlink. The runtime runs it in the host's network namespace with the
// command in CNI_COMMAND and the network configuration on stdin (see README.md here).

import { readFileSync } from 'node:fs';
import { Nftables } from 'nftlink';
import { CNI_ERROR, CniError, readArgs, versionResult, type CniArgs } from './cni.js';
import { decode, parseConfig, peekVersion, type PortMapConfig } from './config.js';
import { addMappings, checkMappings, removeMappings } from './portmap.js';
import { enableRouteLocalnet, routeInterface } from './sysctl.js';

/** Runs one command; resolves with what goes to stdout (nothing for DEL and CHECK). */
async function run(args: CniArgs, stdin: string): Promise<object | undefined> {
  const raw = decode(stdin);
  if (args.command === 'VERSION') return versionResult();
  const conf = parseConfig(raw, args.command, args.ifname);
  const attachment = { network: conf.name, containerId: args.containerId, ifname: args.ifname };
  const nft = Nftables.open();
  try {
    switch (args.command) {
      case 'ADD':
        // Upstream passes the result on untouched when there is nothing to map, or no address of
        // the container's to map to; so does this plugin.
        if (mapsAnything(conf)) {
          await addMappings(nft, attachment, conf);
          if (conf.snat) localhostReachable(conf);
        }
        return { ...conf.prevResult, cniVersion: conf.cniVersion };
      case 'DEL':
        await removeMappings(nft, attachment);
        return undefined;
      case 'CHECK':
        if (mapsAnything(conf)) await checkMappings(nft, attachment, conf);
        return undefined;
    }
  } finally {
    nft.close();
  }
}

function mapsAnything(conf: PortMapConfig): boolean {
  return conf.mappings.length > 0 && conf.addresses.length > 0;
}

function localhostReachable(conf: PortMapConfig): void {
  const v4 = conf.addresses.find((a) => a.family === 'ip');
  const iface = v4 && routeInterface(v4.address);
  if (!iface) return;
  try {
    enableRouteLocalnet(iface);
  } catch (err) {
    throw new CniError(CNI_ERROR.ioFailure, `could not set route_localnet on ${iface}`, (err as Error).message);
  }
}

async function main(): Promise<number> {
  let stdin = '';
  let cniVersion = '1.0.0';
  try {
    const args = readArgs(process.env);
    stdin = readFileSync(0, 'utf8');
    cniVersion = peekVersion(stdin) ?? cniVersion;
    const out = await run(args, stdin);
    if (out) process.stdout.write(`${JSON.stringify(out)}\n`);
    return 0;
  } catch (err) {
    const e = err instanceof CniError ? err : new CniError(CNI_ERROR.ioFailure, 'nftlink-portmap failed', err instanceof Error ? err.message : String(err));
    process.stdout.write(`${JSON.stringify(e.toJSON(cniVersion))}\n`);
    return 1;
  }
}

process.exitCode = await main();
