// examples/port-map.ts with real traffic: a client, a host and a container, each a namespace
// (client 198.18.1.2 - 198.18.1.1 host 198.18.2.1 - 198.18.2.2 container). A connection to the
// host's port reaches the container's server, from outside, from the host itself and from the
// container (hairpin); the container sees the host's address (masquerade); removing the mapping
// stops it; a conflicting mapping is refused with the kernel's reason.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probe, servePod } from '../../src/netns/cluster.js';
import { Netns } from '../helpers/netns.js';
import { host, runExample } from './run-example.js';

let client: Netns;
let hostNs: Netns;
let container: Netns;
const portMap = (...args: string[]): string => runExample(hostNs, 'port-map.ts', args);
const reach = (from: Netns, proto: 'tcp' | 'udp' = 'tcp') => probe(from, '198.18.1.1', 8080, { proto, timeoutMs: 1000 });

beforeAll(async () => {
  client = Netns.create();
  hostNs = Netns.create();
  container = Netns.create();
  client.link(hostNs, { ifname: 'eth0', cidr: '198.18.1.2/24' }, { ifname: 'eth0', cidr: '198.18.1.1/24' });
  hostNs.link(container, { ifname: 'eth1', cidr: '198.18.2.1/24' }, { ifname: 'eth0', cidr: '198.18.2.2/24' });
  hostNs.exec('sysctl', ['-qw', 'net.ipv4.ip_forward=1']);
  // Only the container routes through the host; the client knows the host's link and nothing else.
  container.exec('ip', ['route', 'add', 'default', 'via', '198.18.2.1']);
  await servePod(host(container, '198.18.2.2', '2001:db8:2::2'), 80);
});
afterAll(() => {
  for (const ns of [client, hostNs, container]) ns?.remove();
});

describe('examples/port-map.ts', () => {
  it('before a mapping, nothing answers on the host port', () => {
    portMap('up');
    expect(reach(client).answers).toEqual(['error:ECONNREFUSED']);
  });

  it('add: the client reaches the container through the host port, and the container sees the host', () => {
    portMap('add', 'tcp', '8080', '198.18.2.2:80');
    expect(reach(client)).toMatchObject({ answers: [container.name], peers: ['198.18.2.1'] });
  });

  it('from the host itself (output chain) and from the container (hairpin)', () => {
    expect(reach(hostNs)).toMatchObject({ answers: [container.name], peers: ['198.18.2.1'] });
    expect(reach(container)).toMatchObject({ answers: [container.name], peers: ['198.18.2.1'] });
  });

  it('udp mappings are their own elements', () => {
    expect(reach(client, 'udp').answers).toEqual(['error:timeout']);
    portMap('add', 'udp', '8080', '198.18.2.2:80');
    expect(reach(client, 'udp')).toMatchObject({ answers: [container.name], peers: ['198.18.2.1'] });
    expect(portMap('list').trim().split('\n').sort()).toEqual(['tcp 8080 -> 198.18.2.2:80', 'udp 8080 -> 198.18.2.2:80']);
  });

  it('a host port mapped elsewhere already is refused with the kernel\'s reason, and the mapping stays', () => {
    expect(() => portMap('add', 'tcp', '8080', '198.18.2.3:80')).toThrow(/refused: .*add element ip port-map ports \{ tcp \. 8080 : 198\.18\.2\.3 \. 80 \}.*already in map ports with other data.*EEXIST/);
    expect(reach(client).answers).toEqual([container.name]);
  });

  it('remove: the host port no longer leads to the container', () => {
    portMap('remove', 'tcp', '8080');
    expect(reach(client).answers).toEqual(['error:ECONNREFUSED']);
    portMap('down');
    expect(hostNs.nftList()).toBe('');
  });
});
