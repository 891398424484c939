/** Every worked example of docs/rule-semantics.md §7, with the verdicts seen in the lab. */
import { describe, expect, it } from 'vitest';
import {
  CompiledRules,
  defaultAccessSettings,
  evaluateDevice,
  parsePacket,
  parseTo,
  type AccessModel,
  type AccessRule,
  type AccessSettings,
} from '../../../src/access/index.js';

const USERS = ['u1', 'u2', 'u3'] as const;
type Who = (typeof USERS)[number];

function rule(owner: Who | null, action: 'accept' | 'drop', destination: string, ports?: string): AccessRule {
  const space = ports?.indexOf(' ') ?? -1;
  const [port_type, port_range] = ports
    ? [ports.slice(0, space) as 'tcp' | 'udp', ports.slice(space + 1)]
    : [null, null];
  return { owner: owner === null ? null : `${owner}@example.com`, action, destination, port_type, port_range };
}

function model(rules: AccessRule[], settings: Partial<AccessSettings> = {}): AccessModel {
  const users = new Map(
    USERS.map((u, i) => [
      `${u}@example.com`,
      {
        key: `${u}@example.com`,
        email: `${u}@example.com`,
        devices: [{ name: 'laptop', ipv4: `10.3.2.${i + 2}`, ipv6: `fd00::3:2:${i + 2}` }],
      },
    ]),
  );
  return { users, rules, settings: { ...defaultAccessSettings(), ...settings } };
}

/** The verdict for `who -> to`, and the deciding stage. */
function check(m: AccessModel, who: Who, to: string): { verdict: string; stage?: string; scope?: string } {
  const packet = parsePacket(to);
  if (!packet.ok) throw new Error(packet.message);
  const user = m.users.get(`${who}@example.com`)!;
  const d = evaluateDevice(new CompiledRules(m), user, user.devices[0], packet.value);
  return { verdict: d.verdict, ...(d.decidedBy ? { stage: d.decidedBy.stage, scope: d.decidedBy.scope } : {}) };
}

describe('§7 worked examples', () => {
  it('S1: global default-deny plus a per-user allowance', () => {
    const m = model([rule(null, 'drop', '0.0.0.0/0'), rule('u1', 'accept', '10.0.0.0/8')]);
    expect(check(m, 'u1', '10.1.2.3:22/tcp')).toEqual({ verdict: 'accept', stage: 'portless-accept', scope: 'user' });
    expect(check(m, 'u1', '10.1.2.3/icmp')).toEqual({ verdict: 'accept', stage: 'portless-accept', scope: 'user' });
    expect(check(m, 'u1', '8.8.8.8:53/udp')).toEqual({ verdict: 'drop', stage: 'portless-drop', scope: 'global' });
    expect(check(m, 'u2', '10.1.2.3:22/tcp')).toEqual({ verdict: 'drop', stage: 'portless-drop', scope: 'global' });
    expect(check(m, 'u1', '[2001:db8:1::1]:443/tcp')).toEqual({ verdict: 'accept' });
    expect(check(m, 'u1', '10.3.2.1:53/udp')).toEqual({ verdict: 'accept' });
  });

  it('S2: overlapping CIDRs with opposite actions in the same scope', () => {
    const a = model([rule(null, 'accept', '10.0.0.0/8'), rule(null, 'drop', '10.1.0.0/16')]);
    expect(check(a, 'u1', '10.1.2.3/icmp')).toMatchObject({ verdict: 'accept', stage: 'portless-accept' });
    const b = model([rule(null, 'drop', '10.0.0.0/8'), rule(null, 'accept', '10.1.0.0/16')]);
    expect(check(b, 'u1', '10.1.2.3/icmp').verdict).toBe('accept');
    expect(check(b, 'u1', '10.2.0.1/icmp').verdict).toBe('drop');
    expect(check(b, 'u1', '11.0.0.1/icmp')).toEqual({ verdict: 'accept' });
  });

  it('S3: port-specific versus portless rules (global)', () => {
    const a = model([rule(null, 'drop', '0.0.0.0/0'), rule(null, 'accept', '1.2.3.4', 'tcp 443')]);
    expect(check(a, 'u1', '1.2.3.4:443/tcp')).toMatchObject({ verdict: 'accept', stage: 'port-accept' });
    for (const to of ['1.2.3.4:80/tcp', '1.2.3.4:443/udp', '1.2.3.4/icmp', '1.2.3.5:443/tcp']) {
      expect(check(a, 'u1', to)).toMatchObject({ verdict: 'drop', stage: 'portless-drop' });
    }
    const b = model([rule(null, 'accept', '0.0.0.0/0'), rule(null, 'drop', '10.0.0.5', 'tcp 22')]);
    expect(check(b, 'u1', '10.0.0.5:22/tcp')).toMatchObject({ verdict: 'drop', stage: 'port-drop' });
    expect(check(b, 'u1', '10.0.0.5:23/tcp').verdict).toBe('accept');
    expect(check(b, 'u1', '10.0.0.5:22/udp').verdict).toBe('accept');
    const c = model([rule(null, 'drop', '10.0.0.0/8', 'tcp 1 - 65534'), rule(null, 'accept', '10.0.0.5', 'tcp 443')]);
    expect(check(c, 'u1', '10.0.0.5:443/tcp')).toMatchObject({ verdict: 'accept', stage: 'port-accept' });
    expect(check(c, 'u1', '10.0.0.5:80/tcp')).toMatchObject({ verdict: 'drop', stage: 'port-drop' });
    expect(check(c, 'u1', '10.0.0.5:80/udp')).toEqual({ verdict: 'accept' });
    expect(check(c, 'u1', '10.0.0.5:65535/tcp')).toEqual({ verdict: 'accept' });
  });

  it('S4: user scope versus global scope', () => {
    const a = model([rule(null, 'accept', '1.2.3.4', 'tcp 443'), rule('u1', 'drop', '1.2.3.0/24')]);
    expect(check(a, 'u1', '1.2.3.4:443/tcp')).toEqual({ verdict: 'drop', stage: 'portless-drop', scope: 'user' });
    expect(check(a, 'u2', '1.2.3.4:443/tcp')).toEqual({ verdict: 'accept', stage: 'port-accept', scope: 'global' });
    const b = model([rule(null, 'drop', '1.2.3.4', 'tcp 443'), rule('u1', 'accept', '1.2.3.4')]);
    expect(check(b, 'u1', '1.2.3.4:443/tcp')).toEqual({ verdict: 'accept', stage: 'portless-accept', scope: 'user' });
    expect(check(b, 'u2', '1.2.3.4:443/tcp')).toEqual({ verdict: 'drop', stage: 'port-drop', scope: 'global' });
    expect(check(b, 'u2', '1.2.3.4:80/tcp')).toEqual({ verdict: 'accept' });
    const c = model([
      rule('u1', 'drop', '1.2.3.4', 'tcp 443'),
      rule('u1', 'accept', '1.2.3.0/24'),
      rule(null, 'drop', '0.0.0.0/0'),
    ]);
    expect(check(c, 'u1', '1.2.3.4:443/tcp')).toEqual({ verdict: 'drop', stage: 'port-drop', scope: 'user' });
    expect(check(c, 'u1', '1.2.3.4:80/tcp')).toEqual({ verdict: 'accept', stage: 'portless-accept', scope: 'user' });
    expect(check(c, 'u1', '9.9.9.9/icmp')).toEqual({ verdict: 'drop', stage: 'portless-drop', scope: 'global' });
    expect(check(c, 'u2', '1.2.3.4:80/tcp')).toEqual({ verdict: 'drop', stage: 'portless-drop', scope: 'global' });
  });

  it('S5: range bounds, single port, host bits', () => {
    const m = model([
      rule(null, 'drop', '0.0.0.0/0'),
      rule(null, 'accept', '1.2.3.4', 'tcp 80 - 90'),
      rule(null, 'accept', '5.6.7.8/24', 'udp 53'),
    ]);
    expect(check(m, 'u1', '1.2.3.4:79/tcp').verdict).toBe('drop');
    expect(check(m, 'u1', '1.2.3.4:80/tcp').verdict).toBe('accept');
    expect(check(m, 'u1', '1.2.3.4:90/tcp').verdict).toBe('accept');
    expect(check(m, 'u1', '1.2.3.4:91/tcp').verdict).toBe('drop');
    expect(check(m, 'u1', '5.6.7.200:53/udp')).toMatchObject({ verdict: 'accept', stage: 'port-accept' });
    expect(check(m, 'u1', '5.6.7.200:54/udp').verdict).toBe('drop');
    expect(check(m, 'u1', '5.6.8.1:53/udp').verdict).toBe('drop');
  });

  it('S6: IPv6', () => {
    const m = model([
      rule(null, 'drop', '::/0'),
      rule('u1', 'accept', '2001:db8:1::/64', 'tcp 22'),
      rule(null, 'accept', '2001:db8:2::5'),
    ]);
    expect(check(m, 'u1', '[2001:db8:1::9]:22/tcp')).toEqual({
      verdict: 'accept',
      stage: 'port-accept',
      scope: 'user',
    });
    expect(check(m, 'u1', '[2001:db8:1::9]:23/tcp')).toEqual({
      verdict: 'drop',
      stage: 'portless-drop',
      scope: 'global',
    });
    expect(check(m, 'u2', '[2001:db8:1::9]:22/tcp').verdict).toBe('drop');
    expect(check(m, 'u2', '[2001:db8:2::5]:1/udp')).toEqual({
      verdict: 'accept',
      stage: 'portless-accept',
      scope: 'global',
    });
    expect(check(m, 'u2', '2001:db8:2::6/icmp').verdict).toBe('drop');
    expect(check(m, 'u2', '8.8.8.8:53/udp')).toEqual({ verdict: 'accept' });
    expect(check(m, 'u1', 'fd00::3:2:1/icmp')).toEqual({ verdict: 'accept' });
  });

  it('S7: a user-wide allow over a global deny', () => {
    const m = model([rule('u2', 'accept', '0.0.0.0/0'), rule(null, 'drop', '0.0.0.0/0')]);
    expect(check(m, 'u2', '8.8.8.8/icmp').verdict).toBe('accept');
    expect(check(m, 'u1', '8.8.8.8/icmp').verdict).toBe('drop');
    expect(check(m, 'u3', '8.8.8.8/icmp').verdict).toBe('drop');
  });

  it('S8: device to device is judged in both directions', () => {
    const only = model([rule(null, 'drop', '10.3.2.0/24'), rule('u1', 'accept', '10.3.2.0/24')]);
    expect(check(only, 'u1', '10.3.2.3:22/tcp').verdict).toBe('accept');
    expect(check(only, 'u2', '10.3.2.2/other').verdict).toBe('drop'); // the SYN-ACK back to U1
    const both = model([
      rule(null, 'drop', '10.3.2.0/24'),
      rule('u1', 'accept', '10.3.2.0/24'),
      rule('u2', 'accept', '10.3.2.0/24'),
    ]);
    expect(check(both, 'u2', '10.3.2.2/other').verdict).toBe('accept');
    const host = model([rule(null, 'drop', '10.3.2.2')]);
    expect(check(host, 'u2', '10.3.2.2/other').verdict).toBe('drop');
  });
});

describe('settings and tunnels', () => {
  it('port_rules: false ignores every rule with ports (§5.1)', () => {
    const m = model([rule(null, 'drop', '0.0.0.0/0'), rule(null, 'accept', '1.2.3.4', 'tcp 443')], {
      portRules: false,
    });
    expect(check(m, 'u1', '1.2.3.4:443/tcp')).toMatchObject({ verdict: 'drop', stage: 'portless-drop' });
  });

  it('a disabled user and a device without an address in the family have no tunnel (§5.2, §5.3)', () => {
    const m = model([]);
    const u1 = m.users.get('u1@example.com')!;
    u1.noTunnel = 'user u1@example.com is disabled';
    const rules = new CompiledRules(m);
    const packet = parsePacket('1.1.1.1/icmp');
    if (!packet.ok) throw new Error();
    expect(evaluateDevice(rules, u1, u1.devices[0], packet.value)).toMatchObject({
      verdict: 'no tunnel',
      reason: 'user u1@example.com is disabled',
    });
    const u2 = m.users.get('u2@example.com')!;
    const v6 = parsePacket('[2001:db8::1]:443/tcp');
    if (!v6.ok) throw new Error();
    expect(evaluateDevice(rules, u2, { name: 'old', ipv4: '10.3.2.9', ipv6: null }, v6.value).verdict).toBe(
      'no tunnel',
    );
  });

  it('server addresses are configurable and never filtered (§5.4)', () => {
    const m = model([rule(null, 'drop', '0.0.0.0/0')], { serverAddresses: ['10.8.0.1'] });
    expect(check(m, 'u1', '10.8.0.1:22/tcp')).toEqual({ verdict: 'accept' });
    expect(check(m, 'u1', '10.3.2.1:22/tcp').verdict).toBe('drop');
  });

  it('explain: the later matches are listed in order', () => {
    const m = model([
      rule(null, 'drop', '0.0.0.0/0'),
      rule('u1', 'accept', '10.0.0.0/8'),
      rule(null, 'accept', '10.1.0.0/16', 'tcp 22'),
    ]);
    const packet = parsePacket('10.1.2.3:22/tcp');
    if (!packet.ok) throw new Error();
    const user = m.users.get('u1@example.com')!;
    const d = evaluateDevice(new CompiledRules(m), user, user.devices[0], packet.value, true);
    expect(d.decidedBy?.rule.destination).toBe('10.0.0.0/8');
    expect(d.alsoMatched.map((x) => [x.rule.destination, x.scope, x.stage])).toEqual([
      ['10.1.0.0/16', 'global', 'port-accept'],
      ['0.0.0.0/0', 'global', 'portless-drop'],
    ]);
  });
});

describe('notation', () => {
  it('parses every form of `to` and refuses the others with a reason', () => {
    expect(parsePacket('10.1.2.3:22/tcp')).toMatchObject({ ok: true, value: { protocol: 'tcp', port: 22 } });
    expect(parsePacket('[2001:db8::1]:443/udp')).toMatchObject({ ok: true, value: { protocol: 'udp', port: 443 } });
    expect(parsePacket('2001:db8::1/icmp')).toMatchObject({ ok: true, value: { protocol: 'icmp' } });
    // ADDRESS/other is one packet without ports; a bare ADDRESS or a block is every protocol and port.
    expect(parsePacket('10.0.0.1/other')).toMatchObject({ ok: true, value: { protocol: 'other' } });
    expect(parseTo('10.0.0.1')).toMatchObject({
      ok: true,
      value: { kind: 'every', family: 4, a0: 167772161n, a1: 167772161n },
    });
    expect(parseTo('[2001:db8::1]')).toMatchObject({ ok: true, value: { kind: 'every', family: 6 } });
    expect(parseTo('10.0.0.7/24')).toMatchObject({
      ok: true,
      value: { kind: 'every', a0: 167772160n, a1: 167772415n },
    });
    expect(parseTo('10.0.0.0/33')).toMatchObject({ ok: false, message: expect.stringContaining('at most /32') });
    expect(parsePacket('10.0.0.1')).toMatchObject({ ok: false, message: expect.stringContaining('not one packet') });
    expect(parseTo('10.0.0.1:22')).toMatchObject({ ok: false, message: expect.stringContaining('needs /tcp or /udp') });
    expect(parseTo('10.0.0.1/tcp')).toMatchObject({ ok: false, message: expect.stringContaining('needs a port') });
    expect(parseTo('example.com:22/tcp')).toMatchObject({ ok: false });
    expect(parseTo('10.0.0.1:70000/tcp')).toMatchObject({ ok: false });
  });
});
