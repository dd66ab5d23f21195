// The layouts the proxy can program, by the name `--layout` takes. A layout may keep state (the
// slots layout remembers where each service's endpoints live), so every table gets its own instance.

import { kubeProxyLayout } from './kube-proxy/index.js';
import { SlotsLayout } from './slots/index.js';
import type { Layout } from './types.js';

export const LAYOUT_NAMES = ['slots', 'kube-proxy'] as const;
export type LayoutName = (typeof LAYOUT_NAMES)[number];
export const DEFAULT_LAYOUT: LayoutName = 'slots';

export function isLayoutName(s: string): s is LayoutName {
  return (LAYOUT_NAMES as readonly string[]).includes(s);
}

/** A fresh layout instance for one table. */
export function createLayout(name: LayoutName): Layout {
  switch (name) {
    case 'kube-proxy':
      return kubeProxyLayout;
    case 'slots':
      return new SlotsLayout();
  }
}
