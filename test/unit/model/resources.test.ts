import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { Checked, FieldErrors } from '../../../src/model/errors.js';
import { checkDeviceInput, checkTunnelAddress, wireguardKeyMessages } from '../../../src/model/device.js';
import { deviceKey, normalizeAllowedIps, normalizeDns, ruleKey, userKey } from '../../../src/model/keys.js';
import { checkRuleInput, checkRulePorts, parseRule, rulesOverlap, type RuleShape } from '../../../src/model/rule.js';
import { Secret } from '../../../src/model/secret.js';
import { checkUserInput } from '../../../src/model/user.js';

/** The error map of a failed check, undefined when it passed. */
const errorsOf = (r: Checked<unknown>): FieldErrors | undefined => (r.ok ? undefined : r.errors);

const KEY = Buffer.alloc(32, 7).toString('base64');
const USER_ID = '3f1b2c4d-5e6f-4a1b-8c2d-9e0f1a2b3c4d';

describe('users', () => {
  it("reports the seed's example: short password and no confirmation together", () => {
    expect(errorsOf(checkUserInput({ email: 'a@example.com', password: 'short' }, 'create'))).toEqual({
      password: ['should be at least 12 character(s)'],
      password_confirmation: ["can't be blank"],
    });
  });

  it('defaults the role, trims the email, keeps its case', () => {
    expect(checkUserInput({ email: '  Alice@Example.com ' }, 'create')).toEqual({
      ok: true,
      value: { email: 'Alice@Example.com', role: 'unprivileged' },
    });
  });

  it('refuses bad emails, unknown roles, mismatched and overlong passwords', () => {
    const r = checkUserInput(
      { email: 'a b@c', role: 'root', password: 'x'.repeat(65), password_confirmation: 'y' },
      'create',
    );
    expect(errorsOf(r)).toEqual({
      email: ['is invalid'],
      role: ['is invalid'],
      password: ['should be at most 64 character(s)'],
      password_confirmation: ['does not match confirmation'],
    });
    expect(errorsOf(checkUserInput({}, 'create'))).toEqual({ email: ["can't be blank"] });
    expect(checkUserInput({ email: `${'a'.repeat(250)}@b.com` }, 'create').ok).toBe(false);
  });

  it('on update accepts an empty body and ignores a null password and read-only keys', () => {
    expect(checkUserInput({}, 'update')).toEqual({ ok: true, value: {} });
    expect(checkUserInput({ password: null, disabled_at: '2020-01-01', id: 'x' }, 'update')).toEqual({
      ok: true,
      value: {},
    });
  });
});

describe('devices', () => {
  it('applies defaults on create and echoes what was sent', () => {
    const r = checkDeviceInput({ user_id: USER_ID, public_key: KEY, mtu: 1380, use_default_mtu: false }, 'create');
    expect(r).toEqual({
      ok: true,
      value: {
        user_id: USER_ID,
        public_key: KEY,
        mtu: 1380,
        use_default_allowed_ips: true,
        use_default_dns: true,
        use_default_endpoint: true,
        use_default_mtu: false,
        use_default_persistent_keepalive: true,
      },
    });
  });

  it('checks keys: base64 of 32 bytes, 44 characters', () => {
    expect(wireguardKeyMessages(KEY)).toEqual([]);
    expect(wireguardKeyMessages('not base64!')).toEqual([
      'must be a base64-encoded string',
      'should be 44 character(s)',
    ]);
    expect(wireguardKeyMessages('AAAA')).toEqual(['should be 44 character(s)']);
    expect(wireguardKeyMessages('A'.repeat(44))).toEqual(['is invalid']);
  });

  it('reports every field error of a body together', () => {
    const r = checkDeviceInput(
      {
        public_key: 'x',
        mtu: 575,
        persistent_keepalive: 121,
        allowed_ips: ['10.0.0.0/8', '10.0.0.0/8', 'nope'],
        dns: ['1.1.1.1:53'],
        endpoint: 'host:0',
        use_default_dns: null,
        use_default_allowed_ips: false,
        use_default_endpoint: false,
        use_default_mtu: false,
        use_default_persistent_keepalive: false,
        ipv4: 'fd00::1',
      },
      'create',
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toEqual({
      user_id: ["can't be blank"],
      public_key: ['must be a base64-encoded string', 'should be 44 character(s)'],
      mtu: ['must be greater than or equal to 576'],
      persistent_keepalive: ['must be less than or equal to 120'],
      allowed_ips: ['should not contain duplicates', 'is invalid'],
      dns: ['is invalid'],
      endpoint: ['is invalid'],
      use_default_dns: ['is invalid'],
      ipv4: ['is invalid'],
    });
  });

  it('refuses a value together with use_default true, and a missing endpoint when the default is off', () => {
    const r = checkDeviceInput(
      { user_id: USER_ID, public_key: KEY, use_default_mtu: true, mtu: 1400, use_default_endpoint: false },
      'create',
    );
    expect(errorsOf(r)).toEqual({ mtu: ['must not be present'], endpoint: ["can't be blank"] });
  });

  it('on create an omitted use_default flag is true, so a value without use_default false is refused', () => {
    const r = checkDeviceInput(
      { user_id: USER_ID, public_key: KEY, mtu: 1400, dns: ['1.1.1.1'], allowed_ips: [] },
      'create',
    );
    expect(errorsOf(r)).toEqual({ mtu: ['must not be present'], dns: ['must not be present'] });
    expect(checkDeviceInput({ public_key: KEY, mtu: 1400 }, 'update').ok).toBe(true);
  });

  it('takes "" for a use_default flag as its default, true (as 0.7.36); null and other values are invalid', () => {
    const created = checkDeviceInput({ user_id: USER_ID, public_key: KEY, use_default_mtu: '' }, 'create');
    expect(created.ok && created.value.use_default_mtu).toBe(true);
    expect(checkDeviceInput({ use_default_dns: '' }, 'update')).toEqual({ ok: true, value: { use_default_dns: true } });
    // True, so a value of its own in the same body is refused, as with an explicit true.
    expect(errorsOf(checkDeviceInput({ use_default_mtu: '', mtu: 1400 }, 'update'))).toEqual({
      mtu: ['must not be present'],
    });
    expect(errorsOf(checkDeviceInput({ use_default_mtu: null, use_default_dns: ' ' }, 'update'))).toEqual({
      use_default_mtu: ['is invalid'],
      use_default_dns: ['is invalid'],
    });
  });

  it('keeps ipv4/ipv6 as written (trimmed), still checking they parse and are of the right family', () => {
    const r = checkDeviceInput(
      { user_id: USER_ID, public_key: KEY, ipv4: ' 10.3.2.9 ', ipv6: 'FD00:0:0:0:0:3:2:0AB' },
      'create',
    );
    expect(r.ok && r.value.ipv4).toBe('10.3.2.9');
    expect(r.ok && r.value.ipv6).toBe('FD00:0:0:0:0:3:2:0AB');
    expect(errorsOf(checkDeviceInput({ ipv4: '010.3.2.9', ipv6: '10.3.2.9' }, 'update'))).toEqual({
      ipv4: ['is invalid'],
      ipv6: ['is invalid'],
    });
    expect(errorsOf(checkDeviceInput({ ipv6: 'fd00::3:2:ab%eth0' }, 'update'))).toEqual({ ipv6: ['is invalid'] });
  });

  it('checks tunnel addresses', () => {
    const net = { cidr: '10.3.2.0/24', serverAddress: '10.3.2.1' };
    expect(checkTunnelAddress('10.3.2.2', 4, net)).toBeNull();
    expect(checkTunnelAddress('10.3.3.2', 4, net)).toBe('is not in the CIDR 10.3.2.0/24');
    expect(checkTunnelAddress('10.3.2.0', 4, net)).toBe('is reserved');
    expect(checkTunnelAddress('10.3.2.255', 4, net)).toBe('is reserved');
    expect(checkTunnelAddress('10.3.2.1', 4, net)).toBe('is reserved');
  });
});

describe('rules', () => {
  it('defaults the action to drop and normalises the port range', () => {
    expect(checkRuleInput({ destination: '10.0.0.0/8', port_type: 'tcp', port_range: '80-443' }, 'create')).toEqual({
      ok: true,
      value: { destination: '10.0.0.0/8', action: 'drop', port_type: 'tcp', port_range: '80 - 443' },
    });
  });

  it('takes "" for the default action, drop, on create and on update (as 0.7.36); null stays blank', () => {
    expect(checkRuleInput({ destination: '10.0.0.0/8', action: '' }, 'create')).toEqual({
      ok: true,
      value: { destination: '10.0.0.0/8', action: 'drop' },
    });
    expect(checkRuleInput({ action: '' }, 'update')).toEqual({ ok: true, value: { action: 'drop' } });
    expect(errorsOf(checkRuleInput({ action: null }, 'update'))).toEqual({ action: ["can't be blank"] });
    expect(errorsOf(checkRuleInput({ action: '  ' }, 'update'))).toEqual({ action: ["can't be blank"] });
  });

  it('refuses a range reaching 65535, except one an update sends back as the rule already holds it', () => {
    const refused = { port_range: ['port is not within valid range'] };
    expect(errorsOf(checkRuleInput({ destination: '10.0.0.0/8', port_range: '1-65535' }, 'create'))).toEqual(refused);
    expect(errorsOf(checkRuleInput({ port_range: '65535' }, 'update'))).toEqual(refused);
    expect(checkRuleInput({ port_range: '1-65534' }, 'update')).toEqual({
      ok: true,
      value: { port_range: '1 - 65534' },
    });
    const stored = { port_range: '1 - 65535' };
    expect(checkRuleInput({ port_range: '1-65535' }, 'update', stored)).toEqual({
      ok: true,
      value: { port_range: '1 - 65535' },
    });
    expect(errorsOf(checkRuleInput({ port_range: '2-65535' }, 'update', stored))).toEqual(refused);
  });

  it('refuses a null action, bad destination and port type', () => {
    expect(errorsOf(checkRuleInput({ destination: '10.0.0.0/40', action: null, port_type: 'icmp' }, 'create'))).toEqual(
      {
        destination: ['is invalid'],
        action: ["can't be blank"],
        port_type: ['is invalid'],
      },
    );
  });

  it('pairs port_type and port_range', () => {
    expect(checkRulePorts({ port_type: 'tcp', port_range: null })).toEqual({ port_range: ["can't be blank"] });
    expect(checkRulePorts({ port_type: null, port_range: '80 - 80' })).toEqual({ port_type: ["can't be blank"] });
    expect(checkRulePorts({ port_type: null, port_range: null })).toEqual({});
  });

  const rule = (over: Partial<RuleShape>): ReturnType<typeof parseRule> =>
    parseRule({ action: 'accept', destination: '10.0.0.0/8', port_type: null, port_range: null, owner: null, ...over });

  it('overlaps only with the same action, binding, intersecting destination and ports', () => {
    const base = rule({})!;
    expect(rulesOverlap(base, rule({ destination: '10.1.0.0/16' })!)).toBe(true);
    expect(rulesOverlap(base, rule({ action: 'drop' })!)).toBe(false);
    expect(rulesOverlap(base, rule({ owner: 'user-1' })!)).toBe(false);
    expect(rulesOverlap(base, rule({ destination: '11.0.0.0/8' })!)).toBe(false);
    expect(rulesOverlap(base, rule({ port_type: 'tcp', port_range: '80 - 80' })!)).toBe(false);
    const tcp = rule({ port_type: 'tcp', port_range: '80 - 443' })!;
    expect(rulesOverlap(tcp, rule({ port_type: 'tcp', port_range: '443 - 500' })!)).toBe(true);
    expect(rulesOverlap(tcp, rule({ port_type: 'tcp', port_range: '444 - 500' })!)).toBe(false);
    expect(rulesOverlap(tcp, rule({ port_type: 'udp', port_range: '80 - 443' })!)).toBe(false);
  });
});

describe('natural keys', () => {
  it('ignore email case and the spelling of destinations and port ranges', () => {
    expect(userKey(' Alice@Example.COM')).toBe('alice@example.com');
    expect(deviceKey('Alice@Example.com', 'laptop')).toBe('alice@example.com/laptop');
    const a = ruleKey({
      ownerEmail: 'A@x.io',
      action: 'accept',
      destination: '10.0.0.1',
      port_type: 'tcp',
      port_range: '80',
    });
    const b = ruleKey({
      ownerEmail: 'a@x.io',
      action: 'accept',
      destination: '10.0.0.1/32',
      port_type: 'tcp',
      port_range: '80 - 80',
    });
    expect(a).toBe(b);
    expect(
      ruleKey({ ownerEmail: null, action: 'drop', destination: 'FD00::0/64', port_type: null, port_range: null }),
    ).toBe('*|drop|fd00::/64|any');
  });

  it('compare lists as sets', () => {
    expect(normalizeAllowedIps(['10.0.0.0/8', '::/0', '10.0.0.0/8'])).toEqual(
      normalizeAllowedIps(['0:0::0/0', '10.0.0.0/8']),
    );
    expect(normalizeDns(['DNS.example.com', '1.1.1.1'])).toEqual(['1.1.1.1', 'dns.example.com']);
  });
});

describe('Secret', () => {
  it('never shows its value through JSON, strings or inspect', () => {
    const s = new Secret('hunter2-unique-value', { env: 'PW' });
    const shown = [JSON.stringify({ s }), String(s), `${s}`, inspect({ s }, { depth: 5 })].join('\n');
    expect(shown).not.toContain('hunter2-unique-value');
    expect(s.reveal()).toBe('hunter2-unique-value');
    expect(s.equals('hunter2-unique-value')).toBe(true);
  });
});
