/**
 * A reference evaluator written as literally as docs/rule-semantics.md §6 reads, for
 * comparison with src/access on random inputs. It shares no code with src/access: addresses and
 * CIDRs go straight through ipaddr.js, ports through a regular expression.
 */
import ipaddr from 'ipaddr.js';

export interface RefRule {
  user_id: string | null;
  action: 'accept' | 'drop';
  destination: string;
  port_type: 'tcp' | 'udp' | null;
  port_range: string | null;
}

export interface RefDevice {
  ipv4: string | null;
  ipv6: string | null;
}

export interface RefUser {
  id: string;
  disabled: boolean;
}

export type RefVerdict = 'ACCEPT' | 'DROP' | 'NO_TUNNEL';

export function referenceVerdict(
  D: RefDevice,
  U: RefUser,
  A: string,
  P: 'tcp' | 'udp' | 'icmp' | 'other',
  N: number | undefined,
  state: { rules: RefRule[]; portRulesSupported: boolean; serverLocalAddrs: string[] },
): RefVerdict {
  // 1.
  if (U.disabled) return 'NO_TUNNEL';
  // 2.
  const a = ipaddr.parse(A);
  const F = a.kind() === 'ipv4' ? 'v4' : 'v6';
  const src = F === 'v4' ? D.ipv4 : D.ipv6;
  if (src === null) return 'NO_TUNNEL';
  // 3.
  if (
    state.serverLocalAddrs.some(
      (s) => ipaddr.parse(s).kind() === a.kind() && ipaddr.parse(s).toString() === a.toString(),
    )
  )
    return 'ACCEPT';
  // 4.
  const family = (r: RefRule) => (ipaddr.parse(r.destination.split('/')[0]!).kind() === 'ipv4' ? 'v4' : 'v6');
  const usable = (r: RefRule) => family(r) === F && (r.port_type === null || state.portRulesSupported);
  const net = (r: RefRule): [ipaddr.IPv4 | ipaddr.IPv6, number] => {
    if (r.destination.includes('/')) return ipaddr.parseCIDR(r.destination);
    const host = ipaddr.parse(r.destination);
    return [host, host.kind() === 'ipv4' ? 32 : 128];
  };
  const hitsDst = (r: RefRule) => a.match(net(r));
  const hitsPort = (r: RefRule) => {
    if (P !== r.port_type || N === undefined) return false;
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(r.port_range!)!;
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    return lo <= N && N <= hi;
  };
  // 5.
  for (const scope of [state.rules.filter((r) => r.user_id === U.id), state.rules.filter((r) => r.user_id === null)]) {
    for (const [action, ported] of [
      ['accept', true],
      ['drop', true],
      ['accept', false],
      ['drop', false],
    ] as const) {
      if (ported && !state.portRulesSupported) continue;
      if (
        scope.some(
          (r) =>
            usable(r) &&
            r.action === action &&
            (r.port_type !== null) === ported &&
            hitsDst(r) &&
            (!ported || hitsPort(r)),
        )
      ) {
        return action === 'accept' ? 'ACCEPT' : 'DROP';
      }
    }
  }
  // 6.
  return 'ACCEPT';
}
