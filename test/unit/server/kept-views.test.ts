/**
 * The views of rows the store keeps (frozen) are made once per row and settings, and frozen, so
 * that a route can keep the bytes of its answer with them (server/routes/answer.ts); any other row
 * gets a view of its own every time.
 */
import { describe, expect, it } from 'vitest';
import { deviceView, ruleView, shownDevice, shownRule } from '../../../server/services/views.js';
import type { ServerSettings } from '../../../server/services/settings.js';
import type { DeviceRow, RuleRow } from '../../../server/store/index.js';

const deepFreeze = <T>(value: T): T => {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
};

const device = (): DeviceRow =>
  ({
    id: '5f0c3c6e-1d2b-4c8a-9a51-0d6f2b7f1e01',
    user_id: '7a1e2c3d-4b5f-4a6b-8c7d-9e0f1a2b3c4d',
    name: 'laptop',
    description: null,
    public_key: 'BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=',
    preshared_key: null,
    ipv4: '10.0.0.2',
    ipv6: 'fd00::2',
    allowed_ips: null,
    dns: null,
    endpoint: null,
    mtu: null,
    persistent_keepalive: null,
    use_default_allowed_ips: true,
    use_default_dns: true,
    use_default_endpoint: true,
    use_default_mtu: true,
    use_default_persistent_keepalive: true,
    remote_ip: null,
    latest_handshake: null,
    rx_bytes: null,
    tx_bytes: null,
    inserted_at: '2026-11-29T12:00:00.000000Z',
    updated_at: '2026-11-29T12:00:00.000000Z',
  }) as DeviceRow;

const settings = (mtu: number): ServerSettings =>
  ({
    serverPublicKey: 'gqvhnCJHUpmV44Qc84wZ001ccZpX15DKESs9eqF5q1s=',
    defaults: { allowed_ips: ['0.0.0.0/0'], dns: ['1.1.1.1'], endpoint: 'vpn:51820', mtu, persistent_keepalive: 25 },
  }) as unknown as ServerSettings;

const rule = (): RuleRow =>
  ({
    id: '0b1c2d3e-4f50-4a61-8b72-9c8d7e6f5a4b',
    action: 'accept',
    destination: '10.1.2.0/24',
    port_type: 'tcp',
    port_range: '443 - 443',
    user_id: null,
    inserted_at: '2026-11-29T12:00:00.000000Z',
    updated_at: '2026-11-29T12:00:00.000000Z',
  }) as RuleRow;

describe('views of kept rows', () => {
  it('a kept device and settings: one frozen view, the same as deviceView makes', () => {
    const row = deepFreeze(device());
    const kept = deepFreeze(settings(1280));
    const view = shownDevice(row, kept);
    expect(Object.isFrozen(view)).toBe(true);
    expect(shownDevice(row, kept)).toBe(view);
    expect(view).toEqual(deviceView(device(), settings(1280)));
    expect(Object.keys(view)).toEqual(Object.keys(deviceView(device(), settings(1280))));
  });

  it('other settings (a default changed): a new view with the new default', () => {
    const row = deepFreeze(device());
    const first = shownDevice(row, deepFreeze(settings(1280)));
    const second = shownDevice(row, deepFreeze(settings(1400)));
    expect(second).not.toBe(first);
    expect(second.mtu).toBe(1400);
    expect(first.mtu).toBe(1280);
  });

  it('a row read afresh, or settings not kept: a view of its own each time, not frozen', () => {
    const row = device();
    const kept = deepFreeze(settings(1280));
    const a = shownDevice(row, kept);
    expect(Object.isFrozen(a)).toBe(false);
    expect(shownDevice(row, kept)).not.toBe(a);
    const frozenRow = deepFreeze(device());
    const loose = settings(1280);
    expect(Object.isFrozen(shownDevice(frozenRow, loose))).toBe(false);
    expect(shownDevice(frozenRow, loose)).not.toBe(shownDevice(frozenRow, loose));
  });

  it('rules: one frozen view per kept row, a new one for any other', () => {
    const row = deepFreeze(rule());
    const view = shownRule(row);
    expect(Object.isFrozen(view)).toBe(true);
    expect(shownRule(row)).toBe(view);
    expect(view).toEqual(ruleView(rule()));
    expect(view.port_range).toBe('443');
    const fresh = rule();
    expect(shownRule(fresh)).not.toBe(shownRule(fresh));
    expect(Object.isFrozen(shownRule(fresh))).toBe(false);
  });
});
