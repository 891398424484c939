import { describe, expect, it } from 'vitest';
import { sameDeviceValue } from '../../../src/plan/device-fields.js';

describe('sameDeviceValue', () => {
  it('compares texts, numbers and flags as the server stores them', () => {
    expect(sameDeviceValue('public_key', ' abc= ', 'abc=')).toBe(true);
    expect(sameDeviceValue('public_key', 'abc=', 'abd=')).toBe(false);
    expect(sameDeviceValue('description', '', null)).toBe(true);
    expect(sameDeviceValue('description', 'a', null)).toBe(false);
    expect(sameDeviceValue('mtu', 1380, 1380)).toBe(true);
    expect(sameDeviceValue('mtu', 1380, 1420)).toBe(false);
    expect(sameDeviceValue('mtu', '1380', 1380)).toBe(false); // a text is no number: both null against 1380
    expect(sameDeviceValue('mtu', '1380', null)).toBe(true);
    expect(sameDeviceValue('use_default_mtu', undefined, true)).toBe(true);
    expect(sameDeviceValue('use_default_mtu', false, true)).toBe(false);
    expect(sameDeviceValue('ipv6', 'FD00:0::1', 'fd00::1')).toBe(true);
    expect(sameDeviceValue('ipv4', '10.0.0.1', '10.0.0.2')).toBe(false);
  });

  it('compares lists as sets in normal form, and a number that has no JSON text as JSON would', () => {
    expect(sameDeviceValue('allowed_ips', ['10.0.0.0/8', '0.0.0.0/0'], ['0.0.0.0/0', '10.0.0.0/8'])).toBe(true);
    expect(sameDeviceValue('allowed_ips', ['10.0.0.0/8'], ['10.0.0.0/8', '0.0.0.0/0'])).toBe(false);
    expect(sameDeviceValue('dns', [], null)).toBe(true);
    // The comparison is that of the values' JSON texts, where an infinite number is written null.
    expect(sameDeviceValue('mtu', Number.POSITIVE_INFINITY, null)).toBe(true);
    expect(sameDeviceValue('mtu', Number.NaN, Number.NaN)).toBe(true);
  });
});
