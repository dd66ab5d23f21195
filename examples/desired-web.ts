// A desired state for examples/ruleset-diff.ts: a web server's filter table, written with the rule
// builder. Any module whose default export is a DesiredState will do.

import { ct, meta, rule, tcp, types, type DesiredState } from 'nftlink';

const inTable = { family: 'inet', table: 'web' } as const;

export default {
  tables: [{ family: 'inet', name: 'web' }],
  chains: [{ ...inTable, name: 'input', base: { type: 'filter', hook: 'input', priority: 0, policy: 'drop' } }],
  sets: [{ ...inTable, name: 'web-ports', key: [types.inet_service], elements: [{ key: [80] }, { key: [443] }] }],
  rules: [
    rule('inet').match(meta.iifname, 'lo').accept().rule('web', 'input'),
    rule('inet').match(ct.state, 'established,related').accept().rule('web', 'input'),
    rule('inet').inSet(tcp.dport, 'web-ports').accept().rule('web', 'input'),
  ],
} satisfies DesiredState;
