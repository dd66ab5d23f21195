import { describe, expect, it } from 'vitest';
import { flagSettings, parseProxyArgs } from '../../src/config/command-line.js';
import { SettingsError } from '../../src/config/proxy-settings.js';

const settings = (...argv: string[]) => flagSettings(parseProxyArgs(['--manifests', '/nowhere', '--node-ip', '198.18.0.1', ...argv]).values);

describe('--full-sync-period', () => {
  it('takes a Go duration; without it the proxy keeps its default', () => {
    expect(settings('--full-sync-period', '30m').fullSyncPeriodMs).toBe(1_800_000);
    expect(settings('--full-sync-period', '90s').fullSyncPeriodMs).toBe(90_000);
    expect(settings().fullSyncPeriodMs).toBeUndefined();
  });

  it('refuses what is not a positive duration, naming the flag', () => {
    for (const bad of ['0s', 'soon', '-5m']) expect(() => settings(`--full-sync-period=${bad}`)).toThrow(SettingsError);
    expect(() => settings('--full-sync-period', 'soon')).toThrow(/--full-sync-period: "soon"/);
  });
});
