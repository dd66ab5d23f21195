// The "kube-proxy" layout: the ruleset of kube-proxy's nftables mode (Kubernetes 1.37 shapes; docs/kube-proxy-contract.md).

import { largeSets } from '../large-sets.js';
import { prepareChainBases } from '../names.js';
import type { Layout } from '../types.js';
import { baseObjects } from './base.js';
import { serviceObjects } from './service.js';

export const kubeProxyLayout: Layout = {
  name: 'kube-proxy',
  base: baseObjects,
  service: serviceObjects,
  prepare: prepareChainBases,
  largeSets,
};
