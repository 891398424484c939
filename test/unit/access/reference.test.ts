/**
 * The evaluator against the reference (a literal transcription of docs/rule-semantics.md §6 pseudo-code) on
 * thousands of seeded random small rule sets and packets.
 */
import { describe, expect, it } from 'vitest';
import {
  CompiledRules,
  defaultAccessSettings,
  evaluateDevice,
  packetOf,
  type AccessModel,
  type Protocol,
} from '../../../src/access/index.js';
import { int, pick, prng } from '../../helpers/access-random.js';
import { referenceVerdict, type RefRule } from '../../helpers/access-reference.js';
import { counted, rounds, share } from '../../helpers/rounds.js';

const ROUNDS = rounds(5000);

const V4_POOL = ['10.0.0.0', '10.0.0.5', '10.0.1.7', '10.0.0.128', '10.3.2.1', '10.3.2.2', '192.168.1.1'];
const V6_POOL = ['2001:db8::', '2001:db8::5', '2001:db8:0:1::7', 'fd00::3:2:1', '2001:db8::8000'];
const PROTOCOLS: Protocol[] = ['tcp', 'udp', 'icmp', 'other'];

function randomDestination(random: () => number): string {
  const v6 = random() < 0.3;
  const base = pick(random, v6 ? V6_POOL : V4_POOL);
  const prefix = v6 ? pick(random, [0, 32, 64, 120, 126, 128]) : pick(random, [0, 8, 16, 23, 24, 25, 30, 32]);
  if (random() < 0.25) return base; // a bare host
  return `${base}/${prefix}`;
}

function randomRule(random: () => number, users: string[]): RefRule {
  const ported = random() < 0.5;
  const lo = int(random, 1, 20);
  const hi = random() < 0.5 ? lo : int(random, lo, 25);
  return {
    user_id: random() < 0.5 ? null : pick(random, users),
    action: random() < 0.5 ? 'accept' : 'drop',
    destination: randomDestination(random),
    port_type: ported ? pick(random, ['tcp', 'udp'] as const) : null,
    port_range: ported ? (lo === hi && random() < 0.5 ? `${lo}` : `${lo} - ${hi}`) : null,
  };
}

function randomPacketAddress(random: () => number): string {
  const v6 = random() < 0.3;
  const base = pick(random, v6 ? V6_POOL : V4_POOL);
  if (random() < 0.5) return base;
  if (v6) return base.replace(/::?$/, '::').replace(/::$/, `::${int(random, 0, 0xffff).toString(16)}`);
  const parts = base.split('.');
  parts[3] = String(int(random, 0, 255));
  if (random() < 0.3) parts[2] = String(int(random, 0, 3));
  return parts.join('.');
}

describe('evaluator versus the reference pseudo-code', () => {
  it(`agrees on ${counted(ROUNDS)} random rule sets × 10 packets (seeded)`, () => {
    const random = prng(12345);
    let compared = 0;
    const verdicts = { accept: 0, drop: 0, 'no tunnel': 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const userIds = ['u1', 'u2', 'u3'];
      const rules = Array.from({ length: int(random, 0, 6) }, () => randomRule(random, userIds));
      const portRulesSupported = random() < 0.85;
      const serverLocalAddrs = random() < 0.9 ? ['10.3.2.1', 'fd00::3:2:1'] : ['10.0.0.5'];
      const devices = userIds.map((_, i) => ({
        name: 'd',
        ipv4: random() < 0.9 ? `10.3.2.${i + 2}` : null,
        ipv6: random() < 0.8 ? `fd00::3:2:${i + 2}` : null,
      }));
      const disabled = userIds.map(() => random() < 0.05);
      const model: AccessModel = {
        users: new Map(
          userIds.map((id, i) => [
            id,
            { key: id, email: id, devices: [devices[i]!], ...(disabled[i] ? { noTunnel: 'disabled' } : {}) },
          ]),
        ),
        rules: rules.map((r) => ({
          owner: r.user_id,
          action: r.action,
          destination: r.destination,
          port_type: r.port_type,
          port_range: r.port_range,
        })),
        settings: { ...defaultAccessSettings(), portRules: portRulesSupported, serverAddresses: serverLocalAddrs },
      };
      const compiled = new CompiledRules(model);
      for (let p = 0; p < 10; p++) {
        const u = int(random, 0, 2);
        const address = randomPacketAddress(random);
        const protocol = pick(random, PROTOCOLS);
        const port =
          protocol === 'tcp' || protocol === 'udp' ? pick(random, [0, 1, int(random, 1, 26), 65535]) : undefined;
        const expected = referenceVerdict(
          devices[u]!,
          { id: userIds[u]!, disabled: disabled[u]! },
          address,
          protocol,
          port,
          {
            rules,
            portRulesSupported,
            serverLocalAddrs,
          },
        );
        const user = model.users.get(userIds[u]!)!;
        const actual = evaluateDevice(compiled, user, user.devices[0], packetOf(address, protocol, port)!).verdict;
        const context = JSON.stringify({
          rules,
          address,
          protocol,
          port,
          u,
          portRulesSupported,
          serverLocalAddrs,
          devices,
          disabled,
        });
        expect(actual, context).toBe({ ACCEPT: 'accept', DROP: 'drop', NO_TUNNEL: 'no tunnel' }[expected]);
        verdicts[actual]++;
        compared++;
      }
    }
    expect(compared).toBe(ROUNDS * 10);
    // The random inputs exercise every outcome, not only the default.
    expect(verdicts.accept).toBeGreaterThan(5000 * share(5000));
    expect(verdicts.drop).toBeGreaterThan(2500 * share(5000));
    expect(verdicts['no tunnel']).toBeGreaterThan(1000 * share(5000));
  }, 120_000); // CPU-bound and deterministic: its time grows with the machine's load, never its verdict
});
