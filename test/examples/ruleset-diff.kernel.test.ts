// examples/ruleset-diff.ts in a fresh namespace: the difference between the kernel and a desired
// state (examples/desired-web.ts) as nft commands, exit 1 while there is one and 0 once applied; a
// change made behind its back with nft (an element deleted, a rule added) shows as exactly what
// repairs it; other tables are left alone; `show` reads back a ruleset nft wrote.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Netns } from '../helpers/netns.js';
import { runExample, runExampleStatus } from './run-example.js';

let ns: Netns;
const DESIRED = 'examples/desired-web.ts';
const diffTool = (command: 'diff' | 'apply') => runExampleStatus(ns, 'ruleset-diff.ts', [command, DESIRED]);

beforeAll(() => {
  ns = Netns.create();
});
afterAll(() => ns?.remove());

describe('examples/ruleset-diff.ts', () => {
  it('an empty namespace differs by the whole desired table (exit 1), and diff changes nothing', () => {
    const r = diffTool('diff');
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('add table inet web\n');
    expect(r.stdout).toContain('add element inet web web-ports { 80, 443 }\n');
    expect(ns.nftList()).toBe('');
  });

  it('apply commits the difference; then there is none (exit 0)', () => {
    expect(diffTool('apply').status).toBe(0);
    expect(ns.nftList()).toContain('tcp dport @web-ports accept');
    expect(diffTool('diff')).toMatchObject({ status: 0, stdout: 'no difference\n' });
  });

  it('what nft changed behind its back is the difference, element by element and chain by chain', () => {
    ns.nftApply('delete element inet web web-ports { 443 }\nadd rule inet web input tcp dport 22 accept\nadd table ip other\n');
    const r = diffTool('diff');
    expect(r.status).toBe(1);
    expect(r.stdout).toBe(
      [
        'flush chain inet web input',
        'add rule inet web input iifname "lo" accept',
        'add rule inet web input ct state established,related accept',
        'add rule inet web input tcp dport @web-ports accept',
        'add element inet web web-ports { 443 }',
        '# 1 chain(s) written, 0 deleted, 0 set(s) created, 0 deleted, 1 element(s) changed',
        '',
      ].join('\n'),
    );
    expect(diffTool('apply').status).toBe(0);
    expect(diffTool('diff').status).toBe(0);
    expect(ns.nftList()).toContain('table ip other');
  });

  it('show reads back the whole ruleset as text nft loads', () => {
    const text = runExample(ns, 'ruleset-diff.ts', ['show']);
    expect(text).toContain('table ip other');
    expect(text).toContain('elements = { 80, 443 }');
    ns.exec('nft', ['-c', '-f', '-'], `flush ruleset\n${text}`);
  });

  it('a desired module that is not there exits 2 with the reason', () => {
    const r = runExampleStatus(ns, 'ruleset-diff.ts', ['diff', 'examples/no-such-file.ts']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/Cannot find module/);
  });
});
