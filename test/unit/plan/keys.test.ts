/** Natural keys as the planner uses them: the fast path of normalizeDestination agrees with full parsing; --target reads them in every spelling. */
import { describe, expect, it } from 'vitest';
import { normalizeDestination, ruleKey } from '../../../src/model/keys.js';
import { parseCidrOrAddress } from '../../../src/model/net.js';
import { nearestKey, normalizeTarget, TargetError } from '../../../src/plan/target.js';
import { targetProblemText } from '../../../src/views/model-target.js';

describe('normalizeDestination', () => {
  it("gives the parser's canonical text for every spelling", () => {
    const samples: string[] = [];
    for (let i = 0; i < 2000; i++) {
      const octets = Array.from({ length: 4 }, (_, j) => (i * 37 + j * 101) % 256);
      const text = octets.join('.');
      samples.push(text, `${text}/${i % 33}`, `${text}/${(i % 33).toString().padStart(2, '0')}`, ` ${text} `);
    }
    samples.push(
      '10.0.0.1',
      '255.255.255.255/32',
      '0.0.0.0/0',
      '010.0.0.1',
      '10.0.0.0/33',
      '1.2.3',
      '::1',
      'FD00:0::3:2:0/120',
      '2001:db8::',
    );
    for (const s of samples) {
      const parsed = parseCidrOrAddress(s);
      expect(normalizeDestination(s), s).toBe(parsed ? parsed.canonical : s.trim());
    }
  });
});

describe('normalizeTarget of a rule', () => {
  const key = ruleKey({
    ownerEmail: 'alice@example.com',
    action: 'accept',
    destination: '10.1.0.0/16',
    port_type: 'tcp',
    port_range: '443',
  });

  it("keeps one canonical form, the planner's, and reads a single port as the server answers it or files write it", () => {
    expect(key).toBe('alice@example.com|accept|10.1.0.0/16|tcp:443 - 443');
    for (const ports of ['tcp:443', 'tcp:443-443', 'tcp:443 - 443', 'TCP: 443 ']) {
      expect(normalizeTarget(`rule:Alice@Example.com|accept|10.1.0.0/16|${ports}`), ports).toBe(`rule:${key}`);
    }
    expect(normalizeTarget('rule:*|drop|10.9.0.1|any')).toBe('rule:*|drop|10.9.0.1/32|any');
    expect(normalizeTarget('rule:*|accept|10.0.0.0/8|udp:1000-2000')).toBe('rule:*|accept|10.0.0.0/8|udp:1000 - 2000');
  });

  /** normalizeTarget's refusal in the words the command line prints. */
  const refusal = (text: string) => () => {
    try {
      normalizeTarget(text);
    } catch (error) {
      if (error instanceof TargetError) throw new Error(targetProblemText(error.problem, true), { cause: error });
      throw error;
    }
  };

  it('refuses text that is no rule key, giving the shape (W3.5)', () => {
    expect(refusal('rule:whatever')).toThrow(/4 parts separated by \|.*rule:OWNER\|ACTION\|DESTINATION\|PORTS/);
    expect(refusal('rule:*|allow|10.0.0.0/8|any')).toThrow(/the action "allow" is not accept or drop/);
    expect(refusal('rule:*|accept|10.0.0.0/8|sctp:22')).toThrow(/the ports "sctp:22"/);
    expect(refusal('rule:bob|accept|10.0.0.0/8|any')).toThrow(/the owner "bob" is no email, \* or global/);
  });

  it('accepts tcp:22, tcp/22, tcp:22-22, tcp:20 - 22, and * or global for the owner (W3.5)', () => {
    const single = 'rule:*|drop|10.0.0.0/8|tcp:22 - 22';
    for (const ports of ['tcp:22', 'tcp/22', 'tcp:22-22', 'tcp: 22 - 22', 'TCP/22'])
      for (const owner of ['*', 'global', 'GLOBAL'])
        expect(normalizeTarget(`rule:${owner}|drop|10.0.0.0/8|${ports}`), `${owner} ${ports}`).toBe(single);
    expect(normalizeTarget('rule:global|drop|10.0.0.0/8|tcp:20 - 22')).toBe('rule:*|drop|10.0.0.0/8|tcp:20 - 22');
  });

  it('finds the nearest known key for a hint', () => {
    const known = ['rule:*|drop|10.0.0.0/8|tcp:3389 - 3389', 'user:alice@example.com'];
    expect(nearestKey('rule:*|drop|10.0.0.0/8|tcp:3380 - 3380', known)).toBe(known[0]);
    expect(nearestKey('user:alce@example.com', known)).toBe('user:alice@example.com');
    expect(nearestKey('user:zzz@nowhere.test', known)).toBeUndefined();
    // Letters and digits first, a +tag ignored: o'neil+vpn, though erin is fewer edits away.
    const people = ['user:erin@corp.example', "user:o'neil+vpn@corp.example"];
    expect(nearestKey('user:oneil@corp.example', people)).toBe("user:o'neil+vpn@corp.example");
    expect(nearestKey('user:eri@corp.example', people)).toBe('user:erin@corp.example');
  });
});
