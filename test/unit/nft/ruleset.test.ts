/**
 * `netform nft`'s ruleset (src/nft/ruleset.ts): the text 0.7.36's fz_wall leaves in the kernel,
 * as nft 1.0.6 lists it. test/kernel/ loads it into real namespaces and compares it with fz_wall's
 * own command sequence; these tests pin the text and the choices made without a kernel.
 */
import { describe, expect, it } from 'vitest';
import {
  fileUserId,
  interfaceNameProblem,
  nftAddress,
  nftStateOfDesired,
  nftStateOfLive,
  renderRuleset,
} from '../../../src/nft/ruleset.js';
import { parseIpAddress } from '../../../src/model/net.js';
import { desired, device, liveDevice, liveRule, liveState, liveUser, rule, user } from '../../helpers/plan-fixtures.js';

const ALICE = liveUser('alice@example.com', { id: '3fa85f64-5717-4562-b3fc-2c963f66afa6' });
const BOB = liveUser('bob@example.com', { id: '0b0e7c1a-0000-4000-8000-000000000002' });

/** The table's body without the header comments and the two guard lines. */
function table(text: string): string {
  return text.slice(text.indexOf('table inet firezone {'));
}

describe('the ruleset of a live state', () => {
  it('is the text nft lists for what fz_wall builds', () => {
    const live = liveState({
      users: [ALICE],
      devices: [
        liveDevice(ALICE, 'laptop', { ipv4: '10.3.2.4', ipv6: 'fd00::3:2:4' }),
        liveDevice(ALICE, 'phone', { ipv4: '10.3.2.2', ipv6: null }),
      ],
      rules: [
        liveRule({ destination: '0.0.0.0/0', action: 'drop' }),
        liveRule({ destination: '10.0.0.5/24', action: 'accept' }),
        liveRule({ destination: '1.2.3.4', action: 'accept', port_type: 'udp', port_range: '53 - 53' }),
        liveRule({ destination: '1.2.3.4', action: 'accept', port_type: 'tcp', port_range: '80 - 90' }),
        liveRule({
          destination: '2001:db8:0:1::/64',
          action: 'drop',
          user_id: ALICE.id,
          port_type: 'tcp',
          port_range: '22',
        }),
      ],
    });
    const A = `user${ALICE.id}`;
    expect(table(renderRuleset(nftStateOfLive(live, { portRules: false })))).not.toContain('_layer4');
    expect(table(renderRuleset(nftStateOfLive(live)))).toBe(`table inet firezone {
\tset ip_drop {
\t\ttype ipv4_addr
\t\tflags interval
\t\telements = { 0.0.0.0/0 }
\t}

\tset ip_accept {
\t\ttype ipv4_addr
\t\tflags interval
\t\telements = { 10.0.0.0/24 }
\t}

\tset ip6_drop {
\t\ttype ipv6_addr
\t\tflags interval
\t}

\tset ip6_accept {
\t\ttype ipv6_addr
\t\tflags interval
\t}

\tset ip_drop_layer4 {
\t\ttype ipv4_addr . inet_proto . inet_service
\t\tflags interval
\t}

\tset ip_accept_layer4 {
\t\ttype ipv4_addr . inet_proto . inet_service
\t\tflags interval
\t\telements = { 1.2.3.4 . tcp . 80-90,
\t\t\t     1.2.3.4 . udp . 53 }
\t}

\tset ip6_drop_layer4 {
\t\ttype ipv6_addr . inet_proto . inet_service
\t\tflags interval
\t}

\tset ip6_accept_layer4 {
\t\ttype ipv6_addr . inet_proto . inet_service
\t\tflags interval
\t}

\tset ${A}_ip_devices {
\t\ttype ipv4_addr
\t\tflags interval
\t\t# alice@example.com
\t\telements = { 10.3.2.2, 10.3.2.4 }
\t}

\tset ${A}_ip6_devices {
\t\ttype ipv6_addr
\t\tflags interval
\t\telements = { fd00::3:2:4 }
\t}

\tset ${A}_ip_drop {
\t\ttype ipv4_addr
\t\tflags interval
\t}

\tset ${A}_ip_accept {
\t\ttype ipv4_addr
\t\tflags interval
\t}

\tset ${A}_ip6_drop {
\t\ttype ipv6_addr
\t\tflags interval
\t}

\tset ${A}_ip6_accept {
\t\ttype ipv6_addr
\t\tflags interval
\t}

\tset ${A}_ip_drop_layer4 {
\t\ttype ipv4_addr . inet_proto . inet_service
\t\tflags interval
\t}

\tset ${A}_ip_accept_layer4 {
\t\ttype ipv4_addr . inet_proto . inet_service
\t\tflags interval
\t}

\tset ${A}_ip6_drop_layer4 {
\t\ttype ipv6_addr . inet_proto . inet_service
\t\tflags interval
\t\telements = { 2001:db8:0:1::/64 . tcp . 22 }
\t}

\tset ${A}_ip6_accept_layer4 {
\t\ttype ipv6_addr . inet_proto . inet_service
\t\tflags interval
\t}

\tchain forward {
\t\ttype filter hook forward priority filter; policy accept;
\t\tip6 saddr @${A}_ip6_devices jump ${A}
\t\tip saddr @${A}_ip_devices jump ${A}
\t\tip6 daddr . meta l4proto . th dport @ip6_accept_layer4 iifname "wg-firezone" accept
\t\tip6 daddr . meta l4proto . th dport @ip6_drop_layer4 iifname "wg-firezone" drop
\t\tip daddr . meta l4proto . th dport @ip_accept_layer4 iifname "wg-firezone" accept
\t\tip daddr . meta l4proto . th dport @ip_drop_layer4 iifname "wg-firezone" drop
\t\tip6 daddr @ip6_accept iifname "wg-firezone" accept
\t\tip6 daddr @ip6_drop iifname "wg-firezone" drop
\t\tip daddr @ip_accept iifname "wg-firezone" accept
\t\tip daddr @ip_drop iifname "wg-firezone" drop
\t}

\tchain ${A} {
\t\tip6 daddr . meta l4proto . th dport @${A}_ip6_accept_layer4 iifname "wg-firezone" accept
\t\tip6 daddr . meta l4proto . th dport @${A}_ip6_drop_layer4 iifname "wg-firezone" drop
\t\tip daddr . meta l4proto . th dport @${A}_ip_accept_layer4 iifname "wg-firezone" accept
\t\tip daddr . meta l4proto . th dport @${A}_ip_drop_layer4 iifname "wg-firezone" drop
\t\tip6 daddr @${A}_ip6_accept iifname "wg-firezone" accept
\t\tip6 daddr @${A}_ip6_drop iifname "wg-firezone" drop
\t\tip daddr @${A}_ip_accept iifname "wg-firezone" accept
\t\tip daddr @${A}_ip_drop iifname "wg-firezone" drop
\t}
}
`);
  });

  it('starts with a header and the guard that replaces table inet firezone only', () => {
    const text = renderRuleset(nftStateOfLive(liveState(), { server: 'https://vpn.example.com/' }));
    const lines = text.split('\n');
    const guard = lines.indexOf('table inet firezone');
    expect(lines.slice(0, guard).every((l) => l.startsWith('# '))).toBe(true);
    expect(lines[0]).toContain('https://vpn.example.com/');
    expect(lines.slice(guard, guard + 3)).toEqual([
      'table inet firezone',
      'delete table inet firezone',
      'table inet firezone {',
    ]);
    expect(text).not.toMatch(/flush ruleset|delete table (?!inet firezone)/);
    expect(text).toContain('postrouting');
  });

  it('orders users by id (the last one first in forward), as fz_wall adds them', () => {
    const text = renderRuleset(nftStateOfLive(liveState({ users: [ALICE, BOB] })));
    const jumps = text.split('\n').filter((l) => l.includes(' jump '));
    expect(jumps.map((l) => l.trim().split(' ')[0] + ' ' + l.trim().split(' ').at(-1))).toEqual([
      `ip6 user${ALICE.id}`,
      `ip user${ALICE.id}`,
      `ip6 user${BOB.id}`,
      `ip user${BOB.id}`,
    ]);
    expect(text.indexOf(`set user${BOB.id}_ip_devices`)).toBeLessThan(text.indexOf(`set user${ALICE.id}_ip_devices`));
    expect(text.indexOf(`chain user${BOB.id} {`)).toBeLessThan(text.indexOf(`chain user${ALICE.id} {`));
  });

  it('without port rules (§5.1): no _layer4 sets or rules, and the rules with ports left out with a note', () => {
    const live = liveState({
      rules: [
        liveRule({ destination: '1.2.3.4', action: 'accept', port_type: 'tcp', port_range: '443 - 443' }),
        liveRule({ destination: '5.6.7.8', action: 'drop' }),
      ],
    });
    const text = renderRuleset(nftStateOfLive(live, { portRules: false }));
    expect(text).not.toContain('layer4');
    expect(text).not.toContain('1.2.3.4');
    expect(text).toContain('elements = { 5.6.7.8 }');
    expect(text).toContain('# settings.port_rules is false: 1 rule with ports left out');
  });

  it('writes blocks as their network (host bits dropped), hosts bare, IPv4 two to a line and IPv6 one', () => {
    const live = liveState({
      rules: [
        ...['10.1.2.3', '10.0.0.0/8', '192.168.7.9/16', '1.1.1.1/32', '8.8.8.8'].map((d) =>
          liveRule({ destination: d }),
        ),
        ...['2001:db8::7/32', '::ffff:1.2.3.4', 'fd00::1/128'].map((d) => liveRule({ destination: d })),
      ],
    });
    const text = renderRuleset(nftStateOfLive(live));
    expect(text).toContain('\t\telements = { 1.1.1.1, 8.8.8.8,\n\t\t\t     10.0.0.0/8, 192.168.0.0/16 }');
    expect(text).not.toMatch(/elements = \{[^}]*10\.1\.2\.3/); // inside 10.0.0.0/8: the server's overlap rule keeps it out
    expect(text).toContain('# left out: accept 10.1.2.3 overlaps accept 10.0.0.0/8 (the server refuses it)');
    expect(text).toContain('\t\telements = { ::ffff:1.2.3.4,\n\t\t\t     2001:db8::/32,\n\t\t\t     fd00::1 }');
  });

  it('takes another interface name, and refuses names Linux would', () => {
    const text = renderRuleset(nftStateOfLive(liveState(), { wgInterface: 'wg0' }));
    expect(text).toContain('ip daddr @ip_drop iifname "wg0" drop');
    expect(text).not.toContain('wg-firezone');
    for (const bad of ['', 'a'.repeat(16), 'wg 0', 'wg"0', 'wg/0', 'wg:0', '.', '..'])
      expect(interfaceNameProblem(bad), bad).not.toBeNull();
    // nft reads a trailing `*` in iifname as a wildcard, `\` and `"` as string syntax (review 2026-11b);
    // Linux counts bytes (IFNAMSIZ 16 with the NUL) and refuses white space of any kind.
    for (const bad of ['a*', 'wg*0', 'wg\\0', 'wg\t0', 'wg\u00a00', 'wg\u20280', 'wg\u202e0', '\u00fc'.repeat(8)])
      expect(interfaceNameProblem(bad), JSON.stringify(bad)).not.toBeNull();
    for (const good of ['wg-firezone', 'wg0', 'a'.repeat(15), 'wg.100', 'wg_x@1', '\u00fc'.repeat(7)])
      expect(interfaceNameProblem(good), good).toBeNull();
    expect(() => renderRuleset(nftStateOfLive(liveState(), { wgInterface: 'wg 0' }))).toThrow(/printable/);
  });
});

describe('the ruleset of a desired state', () => {
  const state = desired({
    users: [
      user('Alice@Example.com', {
        devices: [device('laptop', { ipv4: '10.3.2.20', ipv6: 'fd00::3:2:20' }), device('phone')],
        rules: [rule('10.1.0.0/16', { port_type: 'tcp', port_range: '443' })],
      }),
    ],
    rules: [rule('10.9.0.0/16', { action: 'drop' })],
  });

  it('names user chains from a hash of the email and leaves devices without pinned addresses out, saying so', () => {
    const id = fileUserId('alice@example.com');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(fileUserId(' ALICE@example.com')).toBe(id);
    const text = renderRuleset(nftStateOfDesired(state, { files: 'desired/' }));
    expect(text).toContain(`chain user${id} {`);
    expect(text).toContain(
      `\t\t# Alice@Example.com\n\t\t# Alice@Example.com/phone: no pinned IPv4 address (the server assigns one), left out\n\t\telements = { 10.3.2.20 }`,
    );
    expect(text).toContain('# Alice@Example.com/phone: no pinned IPv6 address (the server assigns one), left out');
    expect(text).toContain(
      `set user${id}_ip_accept_layer4 {\n\t\ttype ipv4_addr . inet_proto . inet_service\n\t\tflags interval\n\t\telements = { 10.1.0.0/16 . tcp . 443 }`,
    );
    expect(text).toContain('declared in desired/');
    expect(text).toContain('use --live for the exact ruleset');
  });

  it('with port_rules: false, stores rules with ports without them (§5.1.1)', () => {
    const off = { ...state, settings: { ...state.settings, port_rules: false } };
    const text = renderRuleset(nftStateOfDesired(off));
    expect(text).not.toContain('layer4');
    expect(text).toContain(
      `set user${fileUserId('alice@example.com')}_ip_accept {\n\t\ttype ipv4_addr\n\t\tflags interval\n\t\telements = { 10.1.0.0/16 }`,
    );
    expect(text).toContain('# settings.port_rules is false: 1 rule with ports stored without them');
  });
});

describe('addresses as nft prints them (glibc inet_ntop)', () => {
  it.each([
    ['::', '::'],
    ['::1', '::1'],
    ['::ffff:1.2.3.4', '::ffff:1.2.3.4'],
    ['::1.2.3.4', '::1.2.3.4'],
    ['::0.0.1.2', '::102'],
    ['1:0:0:1::1', '1:0:0:1::1'],
    ['1::1:0:0:1', '1::1:0:0:1'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
    ['::1:0:0', '::1:0:0'],
    ['1:0:0:0:1:0:0:0', '1::1:0:0:0'],
    ['fd00::3:2:1', 'fd00::3:2:1'],
    ['10.3.2.1', '10.3.2.1'],
  ])('%s is %s', (input, expected) => {
    const parsed = parseIpAddress(input)!;
    expect(nftAddress(parsed.family, parsed.value)).toBe(expected);
  });
});
