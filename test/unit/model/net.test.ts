import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import {
  addressSortKey,
  cidrContains,
  formatAddress,
  isHostname,
  parseCidrOrAddress,
  parseEndpoint,
  parseIpAddress,
  rangesIntersect,
} from '../../../src/model/net.js';
import {
  answerPortRange,
  formatPortRange,
  HIGHEST_RULE_PORT,
  normalizePortRange,
  parsePortRange,
  reachesPortLimit,
} from '../../../src/model/ports.js';

describe('parseIpAddress', () => {
  it('accepts dotted quads and IPv6, canonicalising IPv6', () => {
    expect(parseIpAddress('10.0.0.1')).toEqual({ family: 4, value: 0x0a000001n, text: '10.0.0.1' });
    expect(parseIpAddress('FD00:0:0::1')?.text).toBe('fd00::1');
    expect(parseIpAddress('::ffff:10.0.0.1')?.family).toBe(6);
  });

  it('reads an IPv6 address written in RFC 5952 form to the value and text ipaddr.js gives, and any other form as ipaddr.js reads it', () => {
    // A small deterministic generator: groups that are often zero, so runs of zeros of every length and place occur.
    let seed = 7;
    const next = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const samples = [
      '::',
      '::1',
      '1::',
      'fd00::3:2:2',
      '1:0:0:1:0:0:0:1',
      '1:0:0:1:0:0:1:1',
      '0:1:0:0:1:0:0:0',
      '1:0:1:0:1:0:1:0',
    ];
    for (let n = 0; n < 200; n++) {
      const groups = Array.from({ length: 8 }, () => (next() % 3 === 0 ? next() % 0x10000 : next() % 4 === 0 ? 1 : 0));
      samples.push(groups.map((g) => g.toString(16)).join(':'));
    }
    for (const written of samples) {
      const reference = ipaddr.IPv6.parse(written);
      let value = 0n;
      for (const part of reference.parts) value = (value << 16n) | BigInt(part);
      const expected = { family: 6, value, text: reference.toString() };
      // The canonical text (taken by the fast path), the fully written one and an upper-case one (ipaddr.js's path).
      for (const text of [reference.toString(), written, written.toUpperCase(), reference.toNormalizedString()])
        expect(parseIpAddress(text), text).toEqual(expected);
    }
    for (const bad of [
      '1::2::3',
      ':::',
      '1:2:3:4:5:6:7:8:9',
      '12345::',
      'fd00::g',
      '1:2:3:4:5:6:7::8',
      ':1::',
      '1::2:',
    ])
      expect(parseIpAddress(bad), bad).toBe(null);
  });

  it('reads ::a.b.c.d as the IPv4-compatible address, as PostgreSQL, Erlang and nft do (not as ::ffff:a.b.c.d)', () => {
    // Found by the kernel suite's ruleset comparison: nft filters ::102:304 for a rule to ::1.2.3.4.
    expect(parseIpAddress('::1.2.3.4')).toEqual({ family: 6, value: 0x01020304n, text: '::102:304' });
    expect(parseIpAddress('::ffff:1.2.3.4')?.value).toBe(0xffff01020304n);
    expect(parseCidrOrAddress('::10.0.0.0/104')).toMatchObject({ start: 0x0a000000n, end: 0x0affffffn });
    expect(parseIpAddress('::1.2.3.256')).toBeNull();
  });

  it('refuses the loose IPv4 spellings ipaddr.js would otherwise accept, zone ids and junk', () => {
    for (const bad of ['10', '10.1', '0x0a.0.0.1', '10.0.0.256', 'fe80::1%eth0', '', 'host', 42, null]) {
      expect(parseIpAddress(bad), String(bad)).toBeNull();
    }
  });
});

describe('parseCidrOrAddress', () => {
  it('computes the block of a CIDR, keeping host bits in the canonical text', () => {
    const c = parseCidrOrAddress('10.1.2.3/16')!;
    expect(c.canonical).toBe('10.1.2.3/16');
    expect(c.network).toBe('10.1.0.0/16');
    expect(formatAddress(4, c.start)).toBe('10.1.0.0');
    expect(formatAddress(4, c.end)).toBe('10.1.255.255');
  });

  it('treats a bare address as a block of one', () => {
    expect(parseCidrOrAddress('192.168.1.1')).toMatchObject({
      prefix: 32,
      hadPrefix: false,
      canonical: '192.168.1.1/32',
    });
    expect(parseCidrOrAddress('2001:db8::1')).toMatchObject({ prefix: 128, canonical: '2001:db8::1/128' });
  });

  it('refuses prefixes outside the family and malformed masks', () => {
    for (const bad of ['10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/-1', '10.0.0.0/8/8', '10.0.0.0/ 8', 'x/8']) {
      expect(parseCidrOrAddress(bad), bad).toBeNull();
    }
    expect(parseCidrOrAddress('0.0.0.0/0')?.end).toBe(0xffffffffn);
    expect(parseCidrOrAddress('::/0')?.end).toBe((1n << 128n) - 1n);
  });

  it('intersects and contains only within one family', () => {
    const a = parseCidrOrAddress('10.0.0.0/8')!;
    const b = parseCidrOrAddress('10.200.0.0/16')!;
    const c = parseCidrOrAddress('11.0.0.0/8')!;
    const v6 = parseCidrOrAddress('::/0')!;
    expect(rangesIntersect(a, b)).toBe(true);
    expect(rangesIntersect(a, c)).toBe(false);
    expect(rangesIntersect(a, v6)).toBe(false);
    expect(cidrContains(a, b)).toBe(true);
    expect(cidrContains(b, a)).toBe(false);
  });

  it('gives sort keys that order like the numbers', () => {
    expect(addressSortKey(4, 0x0a000001n)).toBe('0a000001');
    expect(addressSortKey(6, 1n)).toHaveLength(32);
    expect(addressSortKey(4, 9n) < addressSortKey(4, 10n)).toBe(true);
  });
});

describe('host names and endpoints', () => {
  it('knows host names', () => {
    expect(isHostname('vpn.example.com')).toBe(true);
    expect(isHostname('my_host-1')).toBe(true);
    expect(isHostname('bad host')).toBe(false);
    expect(isHostname('a..b')).toBe(false);
  });

  it('parses every endpoint shape of the contract', () => {
    expect(parseEndpoint('vpn.example.com')).toEqual({ host: 'vpn.example.com', port: null });
    expect(parseEndpoint('vpn.example.com:51820')).toEqual({ host: 'vpn.example.com', port: 51820 });
    expect(parseEndpoint('203.0.113.5:51820')).toEqual({ host: '203.0.113.5', port: 51820 });
    expect(parseEndpoint('2001:db8::5')).toEqual({ host: '2001:db8::5', port: null });
    expect(parseEndpoint('[2001:db8::5]:51820')).toEqual({ host: '2001:db8::5', port: 51820 });
  });

  it('refuses bad endpoints and ports outside 1..65535', () => {
    for (const bad of [
      '',
      'host:0',
      'host:65536',
      'host:abc',
      '[10.0.0.1]:80',
      '[2001:db8::5]:',
      'a b:80',
      '1.2.3:80',
      'host:80:90',
    ]) {
      expect(parseEndpoint(bad), bad).toBeNull();
    }
  });
});

describe('port ranges', () => {
  it('accepts the three spellings and stores lo - hi', () => {
    for (const [text, out] of [
      ['80', '80 - 80'],
      ['80-443', '80 - 443'],
      ['80 - 443', '80 - 443'],
      [' 22 ', '22 - 22'],
    ]) {
      const r = parsePortRange(text);
      expect(r.ok && formatPortRange(r.range)).toBe(out);
    }
    expect(normalizePortRange('80')).toBe('80 - 80');
    expect(normalizePortRange(null)).toBeNull();
  });

  it('reports the contract messages', () => {
    expect(parsePortRange('80-')).toEqual({ ok: false, message: 'bad format' });
    expect(parsePortRange('http')).toEqual({ ok: false, message: 'bad format' });
    expect(parsePortRange(80)).toEqual({ ok: false, message: 'bad format' });
    expect(parsePortRange('443-80')).toEqual({ ok: false, message: 'lower value cannot be higher than upper value' });
    expect(parsePortRange('0-80')).toEqual({ ok: false, message: 'port is not within valid range' });
    expect(parsePortRange('80-65536')).toEqual({ ok: false, message: 'port is not within valid range' });
  });

  it('reads a stored range reaching 65535, and knows it reaches past the highest port a new rule may name', () => {
    const r = parsePortRange('1 - 65535');
    expect(r).toEqual({ ok: true, range: { low: 1, high: 65535 } });
    expect(r.ok && reachesPortLimit(r.range)).toBe(true);
    expect(reachesPortLimit({ low: 1, high: HIGHEST_RULE_PORT })).toBe(false);
    expect(HIGHEST_RULE_PORT).toBe(65534);
  });

  it('answers a stored single port as one number and a range as lo - hi, as 0.7.36', () => {
    expect(answerPortRange('443 - 443')).toBe('443');
    expect(answerPortRange('65535 - 65535')).toBe('65535');
    expect(answerPortRange('80 - 443')).toBe('80 - 443');
    expect(answerPortRange('1 - 65535')).toBe('1 - 65535');
    expect(answerPortRange('44 - 443')).toBe('44 - 443');
    expect(answerPortRange(null)).toBeNull();
    // Both answer forms normalise to the one stored and keyed form.
    expect(normalizePortRange('443')).toBe(normalizePortRange('443 - 443'));
  });
});
