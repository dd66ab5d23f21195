// The demo: a client and two backend namespaces, a kube-proxy-style ruleset programmed over netlink
// in the client (a verdict map dispatches the virtual IP to a service chain, whose one DNAT rule
// picks a backend with numgen), real TCP connections through it, and the ruleset read back.

import { Nftables, ip, meta, numgen, renderRuleset, rule, th, Transaction, types } from '../index.js';
import type { NftSet } from '../index.js';
import { Netns } from '../netns/netns.js';

const VIP = '198.18.100.1';
const BACKENDS = [
  { addr: '198.18.1.2', local: '198.18.1.1/24', remote: '198.18.1.2/24', ifname: 'to-b1' },
  { addr: '198.18.2.2', local: '198.18.2.1/24', remote: '198.18.2.2/24', ifname: 'to-b2' },
];
const CONNECTIONS = 20;

const SERVER = `require('net').createServer((s) => s.end(process.argv[1] + '\\n')).listen(8080, () => console.log('ready'));`;
const CLIENT = `
const net = require('net');
const [host, port, n] = process.argv.slice(1);
(async () => {
  const seen = {};
  for (let i = 0; i < Number(n); i++) {
    const who = await new Promise((resolve, reject) => {
      const s = net.connect({ host, port: Number(port), timeout: 3000 }, () => {});
      let data = '';
      s.on('data', (d) => (data += d));
      s.on('end', () => resolve(data.trim()));
      s.on('timeout', () => reject(new Error('timeout')));
      s.on('error', reject);
    });
    seen[who] = (seen[who] || 0) + 1;
  }
  console.log(JSON.stringify(seen));
})().catch((e) => { console.error(e.message); process.exit(1); });`;

function ruleset(): Transaction {
  const { ipv4_addr, inet_proto, inet_service } = types;
  const table = 'nftlink-demo';
  const serviceIps: NftSet = { family: 'ip', table, name: 'service-ips', key: [ipv4_addr, inet_proto, inet_service], data: 'verdict', comment: 'virtual IP -> service chain' };
  const tx = new Transaction()
    .add({ table: { family: 'ip', name: table, comment: 'programmed over netlink by nftlink' } })
    .add({ chain: { family: 'ip', table, name: 'service-web' } })
    .add({ chain: { family: 'ip', table, name: 'nat-output', base: { type: 'nat', hook: 'output', priority: -100, policy: 'accept' } } })
    .add({ set: serviceIps })
    .add({ rule: rule('ip').vmap([ip.daddr, meta.l4proto, th.dport], 'service-ips').rule(table, 'nat-output') })
    .add({
      rule: rule('ip')
        .match(meta.l4proto, 'tcp')
        .counter()
        .dnatMap({ family: 'ip', key: numgen('random', BACKENDS.length), map: { elements: BACKENDS.map((b, i) => ({ key: [i], value: [b.addr, 8080] })) } })
        .rule(table, 'service-web', 'one DNAT rule picks a backend'),
    })
    .add({ set: serviceIps, elements: [{ key: [VIP, 'tcp', 80], value: { kind: 'goto', chain: 'service-web' }, comment: 'default/web:http' }] });
  return tx;
}

async function main(): Promise<void> {
  const spaces: Netns[] = [];
  try {
    const client = Netns.create('nftlink-demo-client');
    spaces.push(client);
    const servers = BACKENDS.map((b, i) => {
      const ns = Netns.create(`nftlink-demo-b${i + 1}`);
      spaces.push(ns);
      client.link(ns, { ifname: b.ifname, cidr: b.local }, { ifname: 'eth0', cidr: b.remote });
      // Replies go back to whichever client address the connection came from.
      ns.exec('ip', ['route', 'add', 'default', 'via', b.local.split('/')[0]!]);
      return ns;
    });
    // The virtual IP needs a route for the first lookup; the DNAT in nat-output reroutes.
    client.exec('ip', ['route', 'add', `${VIP}/32`, 'dev', BACKENDS[0]!.ifname]);
    await Promise.all(
      servers.map(
        (ns, i) =>
          new Promise<void>((resolve, reject) => {
            const child = ns.spawn(process.execPath, ['-e', SERVER, `backend-${i + 1} (${BACKENDS[i]!.addr})`]);
            child.stdout!.once('data', () => resolve());
            child.once('exit', (code) => reject(new Error(`backend ${i + 1} exited with ${code}`)));
          }),
      ),
    );

    const tx = ruleset();
    console.log(`# the transaction, as nft text (nftlink sends it as one netlink batch, no nft process):\n${tx.render()}`);
    const nft = Nftables.open({ netns: client.name });
    try {
      await nft.commit(tx);
      const out = client.exec(process.execPath, ['-e', CLIENT, VIP, '80', String(CONNECTIONS)]);
      const seen = JSON.parse(out) as Record<string, number>;
      console.log(`# ${CONNECTIONS} TCP connections to ${VIP}:80 from the client namespace reached:`);
      for (const [who, n] of Object.entries(seen)) console.log(`  ${who}: ${n}`);
      const rs = await nft.dump({ family: 'ip', table: 'nftlink-demo' });
      console.log(`# read back over netlink (generation ${rs.generation}):\n${renderRuleset(rs)}`);
      const total = Object.values(seen).reduce((a, b) => a + b, 0);
      if (total !== CONNECTIONS || Object.keys(seen).length !== BACKENDS.length) {
        throw new Error(`expected ${CONNECTIONS} connections spread over ${BACKENDS.length} backends, got ${out}`);
      }
      console.log('demo ok: every connection went through the DNAT rule, to both backends');
    } finally {
      nft.close();
    }
  } finally {
    for (const ns of spaces) ns.remove();
  }
}

main().catch((err: unknown) => {
  console.error(`demo failed: ${(err as Error).message}`);
  process.exitCode = 1;
});
