// What the proxy takes from its Node object, and when a change of it means a restart. As
// kube-proxy: this node's IPs are read once, at the first sync (--node-ip's, else the Node's or
// --bind-address, node-ips.ts), and a later change of the Node's IPs ends the process (its
// NodeManager) so that it restarts with them; with detectLocalMode NodeCIDR the local CIDRs are the
// Node's podCIDRs, the proxy waits for them and a change of them ends the process too
// (NodePodCIDRHandler).

import type { Node } from '../k8s/objects.js';
import type { Logger } from '../logging/logger.js';
import type { LayoutConfig } from '../proxy/layout/types.js';
import type { KubeProxyConfig } from '../config/kube-proxy-config.js';
import { layoutConfigs } from '../config/layout-configs.js';
import { chooseNodeIPs, nodeHostIPs, type NodeIPs } from '../config/node-ips.js';
import { localTrafficCIDRs, type ProxySettings } from '../config/proxy-settings.js';

export interface NodeWatchOptions {
  cfg: KubeProxyConfig;
  settings: ProxySettings;
  /** The interfaces' addresses: the node IPs only for manifests without a Node (no API server to ask). */
  interfaceAddresses: string[] | undefined;
  log: Logger;
  /** Ends the process so that it restarts with the Node's new values (process.exit). */
  exit?: (code: number) => void;
}

export class NodeWatch {
  private node: Node | undefined;
  private usedLocalCIDRs: string[] | undefined;
  private nodeIPs: NodeIPs | undefined;
  private startHostIPs: string[] = [];
  private readonly exit: (code: number) => void;

  constructor(private readonly opts: NodeWatchOptions) {
    this.exit = opts.exit ?? ((code) => process.exit(code));
  }

  /** Each family's layout configuration; undefined while NodeCIDR mode waits for the Node's podCIDRs. */
  families(): LayoutConfig[] | undefined {
    const { cfg, settings } = this.opts;
    let clusterCIDRs = settings.clusterCIDRs;
    if (cfg.detectLocalMode === 'NodeCIDR') {
      this.usedLocalCIDRs = localTrafficCIDRs(cfg, this.node);
      if (!this.usedLocalCIDRs) return undefined;
      clusterCIDRs = this.usedLocalCIDRs;
    }
    return layoutConfigs({ ...settings, clusterCIDRs, nodeIPs: this.currentNodeIPs() });
  }

  /** The Node was added or updated: exits if its IPs or (NodeCIDR) podCIDRs changed after they were used. */
  nodeChanged(node: Node): void {
    const { cfg, log } = this.opts;
    this.node = node;
    // A change of the Node's IPs after they were read means a restart (unless --node-ip fixed them,
    // or manifests without a Node gave the interfaces').
    const hostIPs = nodeHostIPs(node);
    const ips = this.nodeIPs;
    if (ips && ips.source !== 'flag' && ips.source !== 'interfaces' && hostIPs.join(',') !== this.startHostIPs.join(',')) {
      log.error("the node's IPs changed; exiting so that the proxy restarts with them", { before: this.startHostIPs, now: hostIPs });
      this.exit(1);
    }
    const now = localTrafficCIDRs(cfg, node);
    if (cfg.detectLocalMode === 'NodeCIDR' && this.usedLocalCIDRs && now && now.join(',') !== this.usedLocalCIDRs.join(',')) {
      log.error("the node's podCIDRs changed; exiting so that the proxy restarts with them", { before: this.usedLocalCIDRs, now });
      this.exit(1);
    }
  }

  /** This node's IPs, chosen at the first call (the first sync, when the Node is known) and kept. */
  private currentNodeIPs(): string[] {
    if (!this.nodeIPs) {
      const { cfg, settings, interfaceAddresses, log } = this.opts;
      this.startHostIPs = nodeHostIPs(this.node);
      this.nodeIPs = chooseNodeIPs({ flagIPs: settings.nodeIPs, bindAddress: cfg.bindAddress, node: this.node, interfaceAddresses });
      if (this.nodeIPs.source === 'loopback') log.warn("can't determine this node's IP, assuming loopback; if this is wrong, set --bind-address or --node-ip", { nodeIPs: this.nodeIPs.ips });
      else log.info('node IPs', { nodeIPs: this.nodeIPs.ips, source: this.nodeIPs.source });
    }
    return this.nodeIPs.ips;
  }
}
