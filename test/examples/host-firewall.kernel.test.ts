// examples/host-firewall.ts with real traffic: a host and a client namespace on one link (IPv4 and
// IPv6), HTTP servers on the host, connections from the client. Allowed ports pass and others are
// dropped, answers to the host's own connections come back (established), IPv6 keeps working
// (neighbour discovery passes the drop policy), and the blocklist changes by single elements, with
// the kernel removing a timed-out block by itself.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probe, servePod } from '../../src/netns/cluster.js';
import { Netns } from '../helpers/netns.js';
import { host, runExample } from './run-example.js';

const V4 = { host: '198.18.10.1', client: '198.18.10.2' };
const V6 = { host: '2001:db8:10::1', client: '2001:db8:10::2' };

let hostNs: Netns;
let clientNs: Netns;
const firewall = (...args: string[]): string => runExample(hostNs, 'host-firewall.ts', args);
/** What one connection from the client to the host's port gets: the server's name, or error:timeout. */
const fromClient = (addr: string, port: number): string => probe(clientNs, addr, port, { timeoutMs: 1000 }).answers[0]!;
const inputChain = (): string => hostNs.exec('nft', ['-a', 'list', 'chain', 'inet', 'host-firewall', 'input']);

beforeAll(async () => {
  hostNs = Netns.create();
  clientNs = Netns.create();
  hostNs.link(clientNs, { ifname: 'eth0', cidr: `${V4.host}/24` }, { ifname: 'eth0', cidr: `${V4.client}/24` });
  hostNs.exec('ip', ['-6', 'addr', 'add', `${V6.host}/64`, 'dev', 'eth0', 'nodad']);
  clientNs.exec('ip', ['-6', 'addr', 'add', `${V6.client}/64`, 'dev', 'eth0', 'nodad']);
  const server = host(hostNs, V4.host, V6.host);
  await servePod(server, 8080);
  await servePod(server, 8081);
  await servePod(host(clientNs, V4.client, V6.client), 9000);
});
afterAll(() => {
  hostNs?.remove();
  clientNs?.remove();
});

describe('examples/host-firewall.ts', () => {
  it('without the firewall, every port answers (so a drop below is the firewall\'s)', () => {
    expect(fromClient(V4.host, 8081)).toBe(hostNs.name);
  });

  it('up: allowed ports answer over IPv4 and IPv6, the others are dropped', () => {
    firewall('up', '--allow', '22,8080');
    expect(fromClient(V4.host, 8080)).toBe(hostNs.name);
    expect(fromClient(V6.host, 8080)).toBe(hostNs.name);
    expect(fromClient(V4.host, 8081)).toBe('error:timeout');
    expect(fromClient(V6.host, 8081)).toBe('error:timeout');
  });

  it('answers to connections the host makes come back (ct state established)', () => {
    expect(probe(hostNs, V4.client, 9000, { timeoutMs: 1000 }).answers).toEqual([clientNs.name]);
    expect(probe(hostNs, V6.client, 9000, { timeoutMs: 1000 }).answers).toEqual([clientNs.name]);
  });

  it('allow and disallow change one element of the allow-set, the rules stay', () => {
    const rules = inputChain();
    firewall('allow', '8081');
    expect(fromClient(V4.host, 8081)).toBe(hostNs.name);
    firewall('disallow', '8081');
    expect(fromClient(V4.host, 8081)).toBe('error:timeout');
    expect(inputChain()).toBe(rules);
  });

  it('block with a timeout refuses the address until the kernel removes the element', async () => {
    const rules = inputChain();
    firewall('block', V4.client, '--for', '2');
    expect(fromClient(V4.host, 8080)).toBe('error:timeout');
    expect(fromClient(V6.host, 8080)).toBe(hostNs.name);
    expect(inputChain()).toBe(rules);
    await new Promise((r) => setTimeout(r, 2500));
    expect(hostNs.exec('nft', ['list', 'set', 'inet', 'host-firewall', 'blocked-v4'])).not.toContain(V4.client);
    expect(fromClient(V4.host, 8080)).toBe(hostNs.name);
  });

  it('unblock removes a block before its timeout (and is a no-op on one that is gone)', () => {
    firewall('block', V6.client);
    expect(fromClient(V6.host, 8080)).toBe('error:timeout');
    firewall('unblock', V6.client);
    expect(fromClient(V6.host, 8080)).toBe(hostNs.name);
    firewall('unblock', V6.client);
  });

  it('show prints the table as nft -f text that nft loads', () => {
    const text = firewall('show');
    expect(text).toContain('table inet host-firewall');
    expect(text).toContain('tcp dport @allowed-tcp accept');
    hostNs.exec('nft', ['-c', '-f', '-'], `delete table inet host-firewall\n${text}`);
  });

  it('a bad argument is refused with a message and exit code 1, changing nothing', () => {
    const before = hostNs.nftList();
    expect(() => firewall('allow', '70000')).toThrow(/not a port: 70000/);
    expect(hostNs.nftList()).toBe(before);
  });

  it('down removes the table, and traffic flows unfiltered again', () => {
    firewall('down');
    expect(hostNs.nftList()).toBe('');
    expect(fromClient(V4.host, 8081)).toBe(hostNs.name);
  });
});
