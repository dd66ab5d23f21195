// The `nftlink` command: parses the subcommand and hands it to its module (list.ts, proxy.ts).

import { parseArgs } from 'node:util';
import { FAMILY_BY_NUMBER, type Family } from '../nft/index.js';
import { SettingsError } from '../config/proxy-settings.js';
import { listRuleset } from './list.js';
import { monitorCommand } from './monitor.js';
import { PROXY_USAGE } from '../config/command-line.js';
import { packageVersion } from '../package-root.js';

// The proxy's commands load the Kubernetes client, prom-client and pino (about 0.4 s of start-up):
// only when one of them runs, so that `nftlink list` starts fast.
const proxyCommands = (): Promise<typeof import('./proxy.js')> => import('./proxy.js');

const USAGE = `usage: nftlink <command> [options]

commands:
  list [--netns NAME] [--table FAMILY NAME]   print the kernel's ruleset (over netlink) as nft text
  monitor [--netns NAME] [--table FAMILY NAME]
                                              print the ruleset's changes as they are committed, as
                                              nft monitor does, until interrupted
  proxy --manifests PATH [options] [--once]   run the service proxy (kube-proxy's nftables ruleset)
  render --manifests PATH [options]           print the ruleset the proxy would write, as nft -f text
  cleanup [--netns NAME] [--table NAME]       delete the proxy's tables

proxy and render options:
${PROXY_USAGE}`;

const FAMILIES = new Set<string>(Object.values(FAMILY_BY_NUMBER));

/** The --netns NAME and --table FAMILY NAME options of list and monitor. */
function scopeOptions(argv: string[]): { netns?: string; table?: { family: Family; name: string } } {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { netns: { type: 'string' }, table: { type: 'string' } },
    allowPositionals: true,
  });
  let table: { family: Family; name: string } | undefined;
  if (values.table !== undefined) {
    const name = positionals.shift();
    if (!FAMILIES.has(values.table) || name === undefined) {
      throw new UsageError(`--table takes a family (${[...FAMILIES].join(', ')}) and a table name`);
    }
    table = { family: values.table as Family, name };
  }
  if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  return { ...(values.netns !== undefined ? { netns: values.netns } : {}), ...(table ? { table } : {}) };
}

async function list(argv: string[]): Promise<void> {
  process.stdout.write(await listRuleset(scopeOptions(argv)));
}

class UsageError extends Error {}

const COMMANDS: Record<string, (argv: string[]) => Promise<void>> = {
  list,
  monitor: (argv) => monitorCommand(scopeOptions(argv)),
  proxy: async (argv) => (await proxyCommands()).proxyCommand(argv),
  render: async (argv) => (await proxyCommands()).renderCommand(argv),
  cleanup: async (argv) => (await proxyCommands()).cleanupCommand(argv),
};

const isHelp = (a: string | undefined): boolean => a === '-h' || a === '--help';

export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  if (!cmd || isHelp(cmd)) {
    process.stdout.write(USAGE);
    return cmd ? 0 : 2;
  }
  if (cmd === '--version') {
    process.stdout.write(`nftlink v${packageVersion()}\n`);
    return 0;
  }
  // `nftlink help [command]` and `nftlink <command> --help`, as kube-proxy and nft answer --help:
  // the usage on stdout, exit 0, nothing run.
  if (cmd === 'help' || rest.some(isHelp)) {
    const of = cmd === 'help' ? rest[0] : cmd;
    if (of !== undefined && !COMMANDS[of]) {
      process.stderr.write(`nftlink: unknown command "${of}"\n${USAGE}`);
      return 2;
    }
    process.stdout.write(USAGE);
    return 0;
  }
  const run = COMMANDS[cmd];
  if (!run) {
    process.stderr.write(`nftlink: unknown command "${cmd}"\n${USAGE}`);
    return 2;
  }
  try {
    await run(rest);
    return 0;
  } catch (err) {
    const usage = err instanceof UsageError || err instanceof SettingsError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    process.stderr.write(`nftlink ${cmd}: ${(err as Error).message}\n`);
    return usage ? 2 : 1;
  }
}
