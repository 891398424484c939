/**
 * checkDesiredState on states built in code, as the CDKTF front end builds them: with its own
 * source locations, or none at all.
 */
import { describe, expect, it } from 'vitest';
import { checkDesiredState } from '../../../src/desired/check/state.js';
import { applyUseDefaultShorthand } from '../../../src/desired/shorthand.js';
import { formatDiagnostic } from '../../../src/views/diagnostics.js';
import { describeSecretRef, Secret, type SecretRef } from '../../../src/model/secret.js';
import { defaultSettings, type DesiredRule, type DesiredState, type DesiredUser } from '../../../src/model/state.js';

const KEY_A = 'a6AiqHg3kQ3fepsVVJCJayNNPq3C2wiQU1pLxXGos1A=';
const KEY_B = 'czTQMxaFqFgu1WLW8vVpN8eaaNkb4fCB491C7dz4iks=';

function state(parts: Partial<DesiredState>): DesiredState {
  return {
    settings: defaultSettings(),
    users: [],
    rules: [],
    absent: { users: [], devices: [] },
    sources: [],
    ...parts,
  };
}

function user(email: string, extra: Partial<DesiredUser> = {}): DesiredUser {
  return { email, devices: [], rules: [], ...extra };
}

function rule(destination: string, extra: Partial<DesiredRule> = {}): DesiredRule {
  return { action: 'accept', destination, port_type: null, port_range: null, ...extra };
}

describe('without source locations', () => {
  it('names values by their place in the state', () => {
    const diagnostics = checkDesiredState(
      state({
        users: [
          user('alice@example.com', {
            devices: [{ name: 'laptop', fields: { public_key: KEY_A, mtu: 9000, use_default_mtu: false } }],
            rules: [rule('10.0.0.0/8'), rule('10.1.0.0/16')],
          }),
        ],
        rules: [rule('10.0.0.0/40')],
      }),
    );
    expect(diagnostics.map(formatDiagnostic)).toEqual([
      'users[0].devices[0].mtu: must be less than or equal to 1500',
      'rules[0].destination: is invalid (expected an IP address or CIDR block such as 10.1.0.0/16)',
      'users[0].rules[1].destination: destination overlaps with an existing rule: accept 10.0.0.0/8 at users[0].rules[0] (rules with the same action and the same user, or both global, must not overlap)',
    ]);
  });

  it('accepts a clean state', () => {
    const clean = state({
      users: [
        user('alice@example.com', {
          role: 'admin',
          password: new Secret('a-long-enough-password', { env: 'X' }),
          devices: [
            { name: 'laptop', fields: { public_key: KEY_A }, preshared_key: new Secret(KEY_B, { env: 'PSK' }) },
          ],
          rules: [
            rule('10.0.0.0/8', { port_type: 'tcp', port_range: '443' }),
            rule('10.0.0.0/8', { port_type: 'udp', port_range: '443' }),
          ],
        }),
        user('bob@example.com', { rules: [rule('10.0.0.0/8', { port_type: 'tcp', port_range: '443' })] }),
      ],
      rules: [rule('10.0.0.0/8', { port_type: 'tcp', port_range: '443' }), rule('10.0.0.0/8', { action: 'drop' })],
    });
    expect(checkDesiredState(clean)).toEqual([]);
  });
});

describe('with a front end’s own locations', () => {
  it('points at the field when its location is known, else at the object, with the front end’s path', () => {
    const at = (line: number, path?: string) => ({ file: 'cdk.tf.json', line, column: 7, ...(path ? { path } : {}) });
    const diagnostics = checkDesiredState(
      state({
        users: [
          user('alice@example.com', {
            source: at(3, 'firezone_user.alice'),
            devices: [
              {
                name: 'laptop',
                fields: {
                  public_key: KEY_A,
                  persistent_keepalive: 500,
                  use_default_persistent_keepalive: false,
                  use_default_endpoint: false,
                },
                source: {
                  ...at(10, 'firezone_device.laptop'),
                  fields: { persistent_keepalive: at(14), use_default_endpoint: at(15) },
                },
              },
            ],
          }),
        ],
      }),
    );
    expect(diagnostics).toEqual([
      {
        file: 'cdk.tf.json',
        line: 14,
        column: 7,
        path: 'firezone_device.laptop.persistent_keepalive',
        message: 'must be less than or equal to 120',
      },
      { file: 'cdk.tf.json', line: 15, column: 7, path: 'firezone_device.laptop.endpoint', message: "can't be blank" },
    ]);
  });
});

describe('secrets in checks', () => {
  it('reads neither the password nor the preshared key (W3.6: they are checked where they are sent)', () => {
    const unread = (ref: SecretRef) =>
      new Secret(() => {
        throw new Error(`${describeSecretRef(ref)} was read`);
      }, ref);
    const password = unread({ env: 'PW' });
    const presharedKey = unread({ file: 'x.psk' });
    const diagnostics = checkDesiredState(
      state({
        users: [
          user('alice@example.com', {
            password,
            devices: [{ name: 'laptop', fields: { public_key: KEY_A }, preshared_key: presharedKey }],
          }),
        ],
      }),
    );
    expect(diagnostics).toEqual([]);
    expect(password.wasRead || presharedKey.wasRead).toBe(false);
  });
});

describe('overlap sweep', () => {
  it('finds every overlapping pair among many rules, and only those', () => {
    // 2,000 disjoint /24 blocks, then three rules that each overlap exactly one of them.
    const rules = Array.from({ length: 2000 }, (_, i) => rule(`10.${Math.floor(i / 256)}.${i % 256}.0/24`));
    rules.push(rule('10.0.5.7'), rule('10.7.200.128/25'), rule('10.0.5.0/24', { action: 'drop' }), rule('11.0.0.0/8'));
    const diagnostics = checkDesiredState(state({ rules }));
    expect(diagnostics.map((d) => d.path)).toEqual(['rules[2000].destination', 'rules[2001].destination']);
    expect(diagnostics[0]!.message).toContain('accept 10.0.5.0/24 at rules[5]');
    expect(diagnostics[1]!.message).toContain(`accept 10.7.200.0/24 at rules[${7 * 256 + 200}]`);
  });
});

describe('the use_default shorthand', () => {
  it('sets use_default_<x> false for each given <x>, and keeps a stated flag', () => {
    expect(
      applyUseDefaultShorthand({
        mtu: 1400,
        dns: [],
        use_default_endpoint: true,
        allowed_ips: ['10.0.0.0/8'],
        use_default_allowed_ips: true,
      }),
    ).toEqual({
      mtu: 1400,
      use_default_mtu: false,
      dns: [],
      use_default_dns: false,
      use_default_endpoint: true,
      allowed_ips: ['10.0.0.0/8'],
      use_default_allowed_ips: true,
    });
    expect(applyUseDefaultShorthand({ public_key: KEY_A })).toEqual({ public_key: KEY_A });
  });
});
