// ADD, DEL and CHECK against the nf_tables of the namespace the plugin runs in (the container's
// host). Each reads the table, works out the smallest change, and commits it as one transaction on
// the condition that nothing changed since the read (the generation, a compare-and-swap); when a
// concurrent invocation got there first, it reads again. So plugins for several containers may run
// at once, and a DEL can remove the table when it takes away its last attachment.

import {
  chainChange,
  knownChain,
  NftCommitError,
  NftGenerationError,
  rulesByChain,
  sameRules,
  Transaction,
  type Chain,
  type NftConnection,
  type Rule,
  type Ruleset,
} from 'nftlink';
import { CNI_ERROR, CniError } from './cni.js';
import type { PortMapConfig } from './config.js';
import { ATTACHMENT_PREFIX, attachmentChains, dnatRules, jumpRules, SHARED, sharedRules, snatRules, TABLE, type Attachment, type AttachmentChains } from './layout.js';

/** Attempts before a DEL or ADD that keeps losing the race gives up with "try again later". */
const ATTEMPTS = 20;

/** The table as read: its chains by name and their rules in order (with the kernel's handles). */
class TableView {
  readonly chains = new Map<string, Chain>();
  readonly rules: Map<string, Rule[]>;

  constructor(readonly ruleset: Ruleset) {
    for (const c of ruleset.chains) this.chains.set(c.name, c);
    this.rules = rulesByChain(ruleset.rules);
  }

  get exists(): boolean {
    return this.ruleset.tables.length > 0;
  }

  rulesOf(chain: string): Rule[] {
    return this.rules.get(chain) ?? [];
  }

  /** The rules anywhere in the table that jump to `target`. */
  jumpsTo(target: string): Rule[] {
    return this.ruleset.rules.filter((r) => r.exprs.some((e) => e.type === 'immediate' && e.verdict?.kind === 'jump' && e.verdict.chain === target));
  }

  /** The attachments' chains other than `except`'s. */
  otherAttachmentChains(except: AttachmentChains): string[] {
    return [...this.chains.keys()].filter((n) => n.startsWith(ATTACHMENT_PREFIX) && n !== except.dnat.name && n !== except.snat.name);
  }
}

async function readTable(nft: NftConnection): Promise<TableView> {
  return new TableView(await nft.dump({ family: TABLE.family, table: TABLE.name, elements: false }));
}

/**
 * Reads the table, plans with `plan` and commits on the condition that the table's generation still
 * holds; reads and plans again when it did not. A plan of nothing commits nothing.
 */
async function commitPlanned(nft: NftConnection, plan: (view: TableView) => Transaction): Promise<void> {
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const view = await readTable(nft);
    const tx = plan(view);
    if (tx.size === 0) return;
    try {
      await nft.commit(tx, { generation: view.ruleset.generation });
      return;
    } catch (err) {
      if (err instanceof NftGenerationError) {
        // Someone committed in between: back off a little, at random, so that racers spread out.
        await new Promise((r) => setTimeout(r, Math.random() * 10 * attempt));
        continue;
      }
      if (err instanceof NftCommitError) throw new CniError(CNI_ERROR.kernelRefused, 'the kernel refused the nftables transaction', err.message);
      throw err;
    }
  }
  throw new CniError(CNI_ERROR.tryAgainLater, `the nftables ruleset changed during each of ${ATTEMPTS} attempts to update table ${TABLE.family} ${TABLE.name}`);
}

/** Queues what makes `chain` hold exactly `rules`: nothing when it does already. */
function writeChain(tx: Transaction, view: TableView, chain: Chain, rules: readonly Rule[]): void {
  const existing = view.chains.get(chain.name);
  const change = chainChange(existing && knownChain(existing, view.rulesOf(chain.name)), chain, rules);
  if (change.kind === 'same') return;
  if (!existing) tx.add({ chain });
  if (existing && change.kind === 'rewrite' && change.flush) tx.flush({ chain });
  if (change.kind === 'replace') {
    tx.replace({ rule: { ...rules[0]!, handle: change.handle } });
    return;
  }
  for (const rule of rules) tx.add({ rule });
}

/** Queues what leaves exactly `wanted` as the rules jumping to `target` (their chain's other rules untouched). */
function writeJump(tx: Transaction, view: TableView, target: string, wanted: Rule | undefined): void {
  const jumps = view.jumpsTo(target);
  const keep = wanted && jumps.length === 1 && jumps[0]!.chain === wanted.chain && sameRules(jumps, [wanted]);
  if (keep) return;
  for (const r of jumps) tx.delete({ rule: r });
  if (wanted) tx.add({ rule: wanted });
}

/** ADD: the shared chains as they must be, and the attachment's chains and jumps. Idempotent. */
export async function addMappings(nft: NftConnection, attachment: Attachment, conf: PortMapConfig): Promise<void> {
  const chains = attachmentChains(attachment);
  await commitPlanned(nft, (view) => {
    // Known state: jumps are checked against the chains the table holds. Only what the read did not
    // find is added, so an ADD with nothing to change sends nothing and leaves the generation be.
    const tx = new Transaction({ known: view.ruleset });
    if (!view.exists) tx.add({ table: TABLE });
    for (const name of Object.keys(SHARED) as (keyof typeof SHARED)[]) {
      const chain = SHARED[name];
      if (name === 'prerouting' || name === 'output') writeChain(tx, view, chain, sharedRules(name));
      else if (!view.chains.has(chain.name)) tx.add({ chain });
    }
    const [dnatJump, snatJump] = jumpRules(chains, conf.snat);
    writeChain(tx, view, chains.dnat, dnatRules(chains, conf));
    writeJump(tx, view, chains.dnat.name, dnatJump);
    if (conf.snat) {
      writeChain(tx, view, chains.snat, snatRules(chains, conf.addresses));
      writeJump(tx, view, chains.snat.name, snatJump);
    } else {
      removeChain(tx, view, chains.snat);
    }
    return tx;
  });
}

function removeChain(tx: Transaction, view: TableView, chain: Chain): void {
  if (!view.chains.has(chain.name)) return;
  for (const r of view.jumpsTo(chain.name)) tx.delete({ rule: r });
  if (view.rulesOf(chain.name).length) tx.flush({ chain });
  tx.delete({ chain });
}

/**
 * DEL: the attachment's chains and the jumps to them; the whole table with the last attachment.
 * Nothing to remove is success (the spec's DEL is idempotent), with or without runtimeConfig.
 */
export async function removeMappings(nft: NftConnection, attachment: Attachment): Promise<void> {
  const chains = attachmentChains(attachment);
  await commitPlanned(nft, (view) => {
    const tx = new Transaction();
    if (!view.exists) return tx;
    const ours = [chains.dnat, chains.snat].filter((c) => view.chains.has(c.name));
    if (ours.length === 0) return tx;
    if (view.otherAttachmentChains(chains).length === 0) return tx.delete({ table: TABLE });
    for (const c of ours) removeChain(tx, view, c);
    return tx;
  });
}

/**
 * CHECK: everything ADD writes for this attachment is there and unchanged, rule by rule; the first
 * difference is the error. (Another attachment's chains and rules are not looked at.)
 */
export async function checkMappings(nft: NftConnection, attachment: Attachment, conf: PortMapConfig): Promise<void> {
  const view = await readTable(nft);
  const mismatch = (what: string): CniError => new CniError(CNI_ERROR.mappingMismatch, `port mappings of container ${attachment.containerId} (${attachment.ifname}): ${what}`);
  if (!view.exists) throw mismatch(`table ${TABLE.family} ${TABLE.name} does not exist`);
  for (const name of Object.keys(SHARED) as (keyof typeof SHARED)[]) {
    const chain = view.chains.get(SHARED[name].name);
    if (!chain) throw mismatch(`chain ${SHARED[name].name} does not exist`);
    // hostports and postrouting hold the jumps of every attachment; prerouting and output are fixed.
    if ((name === 'prerouting' || name === 'output') && chainChange(knownChain(chain, view.rulesOf(name)), SHARED[name], sharedRules(name)).kind !== 'same') {
      throw mismatch(`chain ${name} is not as nftlink-portmap writes it`);
    }
  }
  const chains = attachmentChains(attachment);
  const expect: [Chain, Rule[], Rule | undefined][] = [];
  const [dnatJump, snatJump] = jumpRules(chains, conf.snat);
  expect.push([chains.dnat, dnatRules(chains, conf), dnatJump]);
  if (conf.snat) expect.push([chains.snat, snatRules(chains, conf.addresses), snatJump]);
  for (const [chain, rules, jump] of expect) {
    const found = view.chains.get(chain.name);
    if (!found) throw mismatch(`chain ${chain.name} does not exist`);
    if (chainChange(knownChain(found, view.rulesOf(chain.name)), chain, rules).kind !== 'same') throw mismatch(`the rules of chain ${chain.name} differ from the mappings`);
    const jumps = view.jumpsTo(chain.name);
    if (jumps.length !== 1 || jumps[0]!.chain !== jump!.chain || !sameRules(jumps, [jump!])) throw mismatch(`chain ${jump!.chain} does not jump to ${chain.name} exactly once`);
  }
}
