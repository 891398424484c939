/**
 * The 1.x evaluator against upstream's own test vectors, restated as data: the tests of
 * rust/libs/connlib/tunnel-proto/src/filter_engine.rs and routing_table.rs at the commit in
 * docs/firezone-1x.md, and firezone#12684's example (a /16 allowing all TCP and a /24 allowing
 * tcp/22: a packet to port 80 inside the /24 is blocked on clients without #12684).
 */
import { describe, expect, it } from 'vitest';
import { cidrRange } from '../../../src/model/net.js';
import { decide1x, permits, reach1x, route, type Packet1x, type Resource1x } from '../../../src/migrate/evaluate-1x.js';
import { filterAround, filterInside, PERMIT_ALL, type Filter1x } from '../../../src/migrate/access.js';

function resource(id: string, cidr: string, filter: Filter1x): Resource1x {
  const range = cidrRange(cidr)!;
  return { id, family: range.family, start: range.start, end: range.end, prefix: Number(cidr.split('/')[1]), filter };
}

function packet(address: string, protocol: Packet1x['protocol'], port?: number): Packet1x {
  const range = cidrRange(address)!;
  return { family: range.family, address: range.start, protocol, ...(port === undefined ? {} : { port }) };
}

const tcp = (...ports: number[]): Filter1x => ({
  kind: 'some',
  tcp: ports.map((p) => [p, p] as const),
  udp: null,
  icmp: false,
});
const icmpOnly: Filter1x = { kind: 'some', tcp: null, udp: null, icmp: true };
const noIcmp: Filter1x = { kind: 'some', tcp: null, udp: null, icmp: false };

describe('filter_engine.rs vectors', () => {
  // allows_icmpv4_destination_unreachable, allows_icmpv6_destination_unreachable: icmp allowed means any ICMP type.
  it('an icmp filter permits any ICMP message (destination unreachable, v4 and v6)', () => {
    expect(permits(icmpOnly, packet('10.0.0.1', 'icmp'))).toBe(true);
    expect(permits(icmpOnly, packet('fd00::1', 'icmp'))).toBe(true);
  });
  // icmp_false_blocks_other_icmp_messages
  it('filters without icmp refuse every ICMP message (a timestamp request)', () => {
    expect(permits(noIcmp, packet('10.0.0.1', 'icmp'))).toBe(false);
  });
  it('no filters permit every protocol; any filter refuses protocols other than tcp, udp, icmp', () => {
    expect(permits(PERMIT_ALL, packet('10.0.0.1', 'other'))).toBe(true);
    expect(permits(tcp(22), packet('10.0.0.1', 'other'))).toBe(false);
    expect(permits(tcp(22), packet('10.0.0.1', 'tcp', 22))).toBe(true);
    expect(permits(tcp(22), packet('10.0.0.1', 'udp', 22))).toBe(false);
  });
});

describe('routing_table.rs vectors', () => {
  const R1 = '00000000-0000-0000-0000-000000000001';
  const R2 = '00000000-0000-0000-0000-000000000002';
  for (const routing of ['filter', 'prefix'] as const) {
    it(`matches_hit_and_miss (${routing})`, () => {
      const t = [resource(R1, '10.0.0.0/8', PERMIT_ALL)];
      expect(route(t, packet('10.1.2.3', 'tcp', 80), routing)?.id).toBe(R1);
      expect(route(t, packet('192.168.0.1', 'tcp', 80), routing)).toBeUndefined();
    });
    it(`matches_longer_prefix_wins (${routing})`, () => {
      const t = [resource(R1, '10.0.0.0/8', PERMIT_ALL), resource(R2, '10.20.0.0/16', PERMIT_ALL)];
      expect(route(t, packet('10.20.0.1', 'tcp', 80), routing)?.id).toBe(R2);
      expect(route(t, packet('10.99.0.1', 'tcp', 80), routing)?.id).toBe(R1);
    });
    it(`remove_by_id: same network, the higher id wins the tie (${routing})`, () => {
      const t = [resource(R1, '10.0.0.0/8', PERMIT_ALL), resource(R2, '10.0.0.0/8', PERMIT_ALL)];
      expect(route(t, packet('10.1.2.3', 'tcp', 80), routing)?.id).toBe(R2);
      expect(route(t.slice(0, 1), packet('10.1.2.3', 'tcp', 80), routing)?.id).toBe(R1);
    });
  }
  it('matches_filter_wins_then_lexical_id (with #12684)', () => {
    const t = [resource(R1, '10.0.0.0/8', tcp(443)), resource(R2, '10.0.0.0/8', tcp(80))];
    expect(route(t, packet('10.1.2.3', 'tcp', 443), 'filter')?.id).toBe(R1);
    expect(route(t, packet('10.1.2.3', 'tcp', 80), 'filter')?.id).toBe(R2);
    expect(route(t, packet('10.1.2.3', 'tcp', 9999), 'filter')?.id).toBe(R2);
    expect(decide1x(t, packet('10.1.2.3', 'tcp', 9999), 'filter').verdict).toBe('deny');
  });
});

describe("firezone#12684's example", () => {
  const t = [
    resource('a', '1.1.0.0/16', { kind: 'some', tcp: [[0, 65535]], udp: null, icmp: false }),
    resource('b', '1.1.0.0/24', tcp(22)),
  ];
  it('blocks port 80 inside the /24 on clients without #12684 and permits it on clients with it', () => {
    expect(decide1x(t, packet('1.1.0.1', 'tcp', 80), 'prefix')).toMatchObject({
      verdict: 'deny',
      resource: { id: 'b' },
    });
    expect(decide1x(t, packet('1.1.0.1', 'tcp', 80), 'filter')).toMatchObject({
      verdict: 'permit',
      resource: { id: 'a' },
    });
    expect(decide1x(t, packet('1.1.0.1', 'tcp', 22), 'prefix').verdict).toBe('permit');
  });
  it("permits 1.1.1.1:80 (the PR's own example address, outside the /24) on both", () => {
    expect(decide1x(t, packet('1.1.1.1', 'tcp', 80), 'prefix').verdict).toBe('permit');
    expect(decide1x(t, packet('1.1.1.1', 'tcp', 80), 'filter').verdict).toBe('permit');
  });
  it('the region evaluator agrees: old clients lose 1.1.0.0/24 tcp except 22', () => {
    const filter = reach1x(t, 4, 'filter');
    const prefix = reach1x(t, 4, 'prefix');
    expect(filter).toHaveLength(1);
    expect(filter[0]!.access.tcp).toEqual([[0, 65535]]);
    expect(prefix.map((s) => s.access.tcp)).toEqual([[[22, 22]], [[0, 65535]]]);
  });
});

describe('the largest filter inside, the smallest around', () => {
  const some = { tcp: [[0, 65535]] as const, udp: [[53, 53]] as const, icmp: true, other: true };
  it('inside: ports and ICMP kept, other protocols dropped; a whole protocol keeps port 0', () => {
    expect(filterInside(some)).toEqual({ kind: 'some', tcp: [[0, 65535]], udp: [[53, 53]], icmp: true });
    expect(filterInside({ tcp: [[0, 80]], udp: [], icmp: false, other: false })).toEqual({
      kind: 'some',
      tcp: [[1, 80]],
      udp: null,
      icmp: false,
    });
    expect(filterInside({ tcp: [[0, 0]], udp: [], icmp: false, other: false })).toBeNull();
  });
  it('around: another protocol or port 0 without its protocol needs every protocol', () => {
    expect(filterAround(some)).toEqual(PERMIT_ALL);
    expect(filterAround({ tcp: [[0, 80]], udp: [], icmp: false, other: false })).toEqual(PERMIT_ALL);
    expect(filterAround({ tcp: [[22, 22]], udp: [], icmp: false, other: false })).toEqual(tcp(22));
  });
});
