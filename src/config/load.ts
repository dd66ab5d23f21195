// The configuration a proxy command runs with, as kube-proxy builds it: its defaults, then the
// --config file (which wins) or the flags. A file that only strict decoding refuses (an unknown or
// repeated field) loads as kube-proxy loads it, leniently: those errors come back in
// `strictErrors`, for the log.

import { readFileSync } from 'node:fs';
import type { Logger } from '../logging/logger.js';
import { deprecatedPorts, kubeProxyFlags, type ProxyFlagValues } from './command-line.js';
import { parseKubeProxyConfig } from './kube-proxy-config.js';
import { resolveKubeProxyConfig, type ResolvedConfig } from './kube-proxy-flags.js';

export interface LoadedConfig extends ResolvedConfig {
  /** Strict-decoding errors of the --config file, which loaded leniently. */
  strictErrors: string[];
  /** The --config file's text, to notice when it changes. */
  fileText?: string;
}

export function loadProxyConfig(values: ProxyFlagValues): LoadedConfig {
  const strictErrors: string[] = [];
  const fileText = values.config !== undefined ? readFileSync(values.config, 'utf8') : undefined;
  const file = fileText !== undefined ? parseKubeProxyConfig(fileText, values.config, strictErrors) : undefined;
  // As kube-proxy: the deprecated ports apply to neither a --config file nor --write-config-to's output.
  const ports = values['write-config-to'] === undefined ? deprecatedPorts(values) : {};
  return { ...resolveKubeProxyConfig(kubeProxyFlags(values), file, ports), strictErrors, ...(fileText !== undefined ? { fileText } : {}) };
}

/** kube-proxy's "Using lenient decoding as strict decoding failed", once per strict error. */
export function logStrictErrors(strictErrors: readonly string[], log: Logger): void {
  for (const error of strictErrors) log.warn('using lenient decoding of --config as strict decoding failed', { error });
}

/** What the proxy logs of its configuration's load: strict-decoding errors, ignored flags, flags without effect. */
export function logConfigLoad(loaded: LoadedConfig, log: Logger): void {
  logStrictErrors(loaded.strictErrors, log);
  for (const flag of loaded.ignoredFlags) log.warn('flag ignored: --config sets it', { flag });
  for (const { flag, reason } of loaded.noEffectFlags) log.info('flag accepted for kube-proxy compatibility; it has no effect', { flag, reason });
}
