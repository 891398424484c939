/**
 * The access delta, computed with each side's whole families decided once (new and gone tunnels
 * decided again only inside a user's own rules), equals the straightforward computation that
 * decides every device's whole family afresh (test/helpers/access-delta-reference.ts): the same
 * entries, regions, rules, order and blast radius, byte for byte as JSON, on seeded random fleets
 * with overlapping global and own rules, ports, server addresses inside rules, disabled users and
 * devices whose tunnels are kept, new and gone in either family. The brute-force packet checks of
 * delta.test.ts say the reference is right. The document (version 2: each list of regions stated
 * once, entries referring to it), read back, is that delta again: the same JSON where large groups
 * are not cut, the same packets and rules where they are (small chunk and run sizes).
 */
import { describe, expect, it } from 'vitest';
import { computeAccessDelta, type DeltaInput } from '../../../src/access/delta.js';
import { accessDeltaDocument, expandAccessDelta, type AccessDeltaDocument } from '../../../src/access/delta-sets.js';
import type { AccessDevice, AccessModel, AccessRule, AccessUser } from '../../../src/access/index.js';
import { deltaMeaning } from '../../helpers/access-delta-cells.js';
import { referenceAccessDelta } from '../../helpers/access-delta-reference.js';
import { int, pick, prng } from '../../helpers/access-random.js';
import { counted, rounds } from '../../helpers/rounds.js';

const ROUNDS = rounds(300);
const USERS = ['a@x.test', 'b@x.test', 'c@x.test', 'd@x.test', 'e@x.test'];
const V4 = ['10.0.0.0', '10.0.0.8', '10.0.1.0', '10.0.0.255', '10.3.2.1', '192.168.0.0'];
const V6 = ['2001:db8::', '2001:db8::10', 'fd00::3:2:1'];
const SERVERS = ['10.3.2.1', '10.0.0.9', 'fd00::3:2:1', '2001:db8::11'];

function randomRule(random: () => number): AccessRule {
  const v6 = random() < 0.25;
  const base = pick(random, v6 ? V6 : V4);
  const prefix = v6 ? pick(random, [0, 100, 124, 128]) : pick(random, [0, 8, 16, 24, 28, 31, 32]);
  const ported = random() < 0.5;
  const lo = int(random, 1, 30);
  return {
    owner: random() < 0.5 ? null : pick(random, USERS),
    action: random() < 0.5 ? 'accept' : 'drop',
    destination: `${base}/${prefix}`,
    port_type: ported ? pick(random, ['tcp', 'udp'] as const) : null,
    port_range: ported ? `${lo} - ${int(random, lo, 40)}` : null,
  };
}

/** A device with a tunnel in IPv4, IPv6 or both (undefined: assumed assigned; null: none). */
function randomDevice(random: () => number, name: string): AccessDevice {
  const shape = int(random, 0, 3);
  return shape === 0
    ? { name }
    : shape === 1
      ? { name, ipv6: null }
      : shape === 2
        ? { name, ipv4: null }
        : { name, ipv4: undefined };
}

function randomUsers(random: () => number): Map<string, AccessUser> {
  const users = new Map<string, AccessUser>();
  for (const key of USERS) {
    if (random() < 0.15) continue;
    const devices = Array.from({ length: int(random, 0, 3) }, (_, i) => randomDevice(random, `d${i}`));
    users.set(key, { key, email: key, devices, ...(random() < 0.1 ? { noTunnel: 'disabled' } : {}) });
  }
  return users;
}

/** The users after: most devices kept (some changing families), some gone, some new. */
function changedUsers(random: () => number, before: Map<string, AccessUser>): Map<string, AccessUser> {
  const after = new Map<string, AccessUser>();
  for (const key of USERS) {
    const was = before.get(key);
    if (!was) {
      if (random() < 0.5) after.set(key, randomUsers(random).get(key) ?? { key, email: key, devices: [{ name: 'n' }] });
      continue;
    }
    if (random() < 0.1) continue;
    const devices = was.devices
      .filter(() => random() < 0.8)
      .map((d) => (random() < 0.2 ? randomDevice(random, d.name) : d));
    if (random() < 0.4) devices.push(randomDevice(random, `new${int(random, 0, 2)}`));
    const unique = [...new Map(devices.map((d) => [d.name, d])).values()];
    after.set(key, { key, email: key, devices: unique, ...(random() < 0.1 ? { noTunnel: 'disabled' } : {}) });
  }
  return after;
}

/** A random fleet and change (the rules, users and their changes as the first test draws them). */
function randomInput(random: () => number): DeltaInput {
  const rules = Array.from({ length: int(random, 0, 12) }, () => randomRule(random));
  const changedRules = random() < 0.3 ? rules : rules.filter(() => random() < 0.7);
  const afterRules = [...changedRules, ...Array.from({ length: int(random, 0, 4) }, () => randomRule(random))];
  const settings = { portRules: random() < 0.9, serverAddresses: SERVERS.filter(() => random() < 0.5) };
  const usersBefore = randomUsers(random);
  return {
    before: { users: usersBefore, rules, settings },
    after: { users: changedUsers(random, usersBefore), rules: afterRules, settings },
    compared: { before: 'before', after: 'after' },
  };
}

/** The document as a program reads it: its JSON text parsed, its sets expanded. */
const readBack = (doc: AccessDeltaDocument) => expandAccessDelta(JSON.parse(JSON.stringify(doc)));

describe('access delta: the whole-family baseline equals deciding every device afresh', () => {
  it(`its document (region sets) reads back as the same delta, as JSON, on ${counted(ROUNDS)} random fleets (seeded)`, () => {
    const random = prng(20261130);
    let shared = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const input = randomInput(random);
      const doc = accessDeltaDocument(computeAccessDelta(input));
      expect(JSON.stringify(readBack(doc)), `round ${round}`).toBe(JSON.stringify(referenceAccessDelta(input)));
      const refs = doc.entries.flatMap((e) => [...e.gained, ...e.lost]);
      shared += refs.length - new Set(refs).size;
      // Every set is referred to, and by an index it has.
      expect(new Set(refs).size).toBe(doc.region_sets.length);
    }
    expect(shared).toBeGreaterThan(ROUNDS / 10);
  }, 120_000);

  it(`with large groups cut in chunks and runs (small sizes): the same packets and rules, on ${counted(ROUNDS)} random fleets (seeded)`, () => {
    const random = prng(20261131);
    let cut = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const input = randomInput(random);
      const doc = accessDeltaDocument(computeAccessDelta({ ...input, sharing: { chunkCells: 2, runGroups: 2 } }));
      const want = referenceAccessDelta(input);
      expect(deltaMeaning(readBack(doc)), `round ${round}`).toEqual(deltaMeaning(want));
      if (doc.entries.some((e) => e.gained.length + e.lost.length > 2)) cut++;
    }
    expect(cut).toBeGreaterThan(ROUNDS / 10);
  }, 120_000);

  it(`gives the same delta, as JSON, on ${counted(ROUNDS)} random fleets and changes (seeded)`, () => {
    const random = prng(20261129);
    let newOrGone = 0;
    let regions = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const rules = Array.from({ length: int(random, 0, 12) }, () => randomRule(random));
      const changedRules = random() < 0.3 ? rules : rules.filter(() => random() < 0.7);
      const afterRules = [...changedRules, ...Array.from({ length: int(random, 0, 4) }, () => randomRule(random))];
      const settings = {
        portRules: random() < 0.9,
        serverAddresses: SERVERS.filter(() => random() < 0.5),
      };
      const usersBefore = randomUsers(random);
      const before: AccessModel = { users: usersBefore, rules, settings };
      const after: AccessModel = { users: changedUsers(random, usersBefore), rules: afterRules, settings };
      const input = { before, after, compared: { before: 'before', after: 'after' } };
      const got = computeAccessDelta(input);
      const want = referenceAccessDelta(input);
      expect(
        JSON.stringify(got),
        JSON.stringify({
          round,
          rules,
          afterRules,
          before: [...before.users.values()],
          after: [...after.users.values()],
        }),
      ).toBe(JSON.stringify(want));
      for (const e of want.entries) {
        if (Object.values(e.tunnel).some((t) => t !== 'kept')) newOrGone++;
        regions += e.gained.length + e.lost.length;
      }
    }
    // The inputs exercised what the baseline shortcuts: devices with new and gone families, many regions.
    expect(newOrGone).toBeGreaterThan(ROUNDS / 2);
    expect(regions).toBeGreaterThan(ROUNDS * 5);
  }, 120_000);
});
