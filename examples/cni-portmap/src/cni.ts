// The CNI protocol as the plugin speaks it (CNI spec 1.0, "Execution protocol" and "Error"):
// the command and its arguments come in environment variables, the network configuration on stdin;
// a result or an error object goes to stdout, and an error exits non-zero.

/** The CNI versions whose configuration and result formats the plugin reads and writes. */
export const SUPPORTED_VERSIONS = ['0.3.0', '0.3.1', '0.4.0', '1.0.0'] as const;

/** The spec's well-known error codes (1-99); plugin-specific codes are 100 and up. */
export const CNI_ERROR = {
  incompatibleVersion: 1,
  unsupportedField: 2,
  unknownContainer: 3,
  invalidEnvironment: 4,
  ioFailure: 5,
  decodeFailure: 6,
  invalidConfig: 7,
  tryAgainLater: 11,
  /** Plugin-specific: the kernel refused the nftables transaction. */
  kernelRefused: 100,
  /** Plugin-specific: CHECK found the attachment's mappings missing or changed. */
  mappingMismatch: 101,
} as const;

export class CniError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly details?: string,
  ) {
    super(message);
  }

  /** The error object of the spec: `{ cniVersion, code, msg, details }`. */
  toJSON(cniVersion: string): object {
    return { cniVersion, code: this.code, msg: this.message, ...(this.details ? { details: this.details } : {}) };
  }
}

export type CniCommand = 'ADD' | 'DEL' | 'CHECK' | 'VERSION';

/** What the runtime passes in the environment; which of it a command needs is checked here. */
export interface CniArgs {
  command: CniCommand;
  containerId: string;
  ifname: string;
  netns: string;
  path: string;
}

// The spec's rules for the values (libcni checks the same before it runs a plugin).
const CONTAINER_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const IFNAME_BAD = /[/:\s]/;

export function readArgs(env: NodeJS.ProcessEnv): CniArgs {
  const command = env.CNI_COMMAND;
  if (command === undefined || command === '') throw new CniError(CNI_ERROR.invalidEnvironment, 'CNI_COMMAND is not set');
  if (command !== 'ADD' && command !== 'DEL' && command !== 'CHECK' && command !== 'VERSION') {
    throw new CniError(CNI_ERROR.invalidEnvironment, `CNI_COMMAND "${command}" is not one of ADD, DEL, CHECK, VERSION`);
  }
  const args: CniArgs = {
    command,
    containerId: env.CNI_CONTAINERID ?? '',
    ifname: env.CNI_IFNAME ?? '',
    netns: env.CNI_NETNS ?? '',
    path: env.CNI_PATH ?? '',
  };
  if (command === 'VERSION') return args;
  const missing = [
    ['CNI_CONTAINERID', args.containerId],
    ['CNI_IFNAME', args.ifname],
    ['CNI_PATH', args.path],
    // The spec lets DEL come without a namespace (it may be gone already).
    ...(command === 'DEL' ? [] : [['CNI_NETNS', args.netns]]),
  ].filter(([, v]) => v === '').map(([k]) => k);
  if (missing.length) throw new CniError(CNI_ERROR.invalidEnvironment, `required environment variables missing: ${missing.join(', ')}`);
  if (!CONTAINER_ID.test(args.containerId)) {
    throw new CniError(CNI_ERROR.invalidEnvironment, `CNI_CONTAINERID "${args.containerId}" is not valid: it takes letters, digits, '_', '.' and '-', starting with a letter or digit`);
  }
  if (Buffer.byteLength(args.ifname) > 15 || IFNAME_BAD.test(args.ifname) || args.ifname === '.' || args.ifname === '..') {
    throw new CniError(CNI_ERROR.invalidEnvironment, `CNI_IFNAME "${args.ifname}" is not a valid interface name (at most 15 bytes, no '/', ':' or whitespace)`);
  }
  return args;
}

/**
 * VERSION's answer, in the newest version spoken whatever the request's: a runtime asks in its own
 * version to learn which the plugin speaks, so VERSION refuses none (as Go's skel answers).
 */
export function versionResult(): object {
  return { cniVersion: SUPPORTED_VERSIONS.at(-1), supportedVersions: [...SUPPORTED_VERSIONS] };
}
