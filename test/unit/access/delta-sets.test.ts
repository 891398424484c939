/**
 * The access delta's document (version 2) grows with the distinct lists of regions, not with the
 * devices × what each reaches: a new device lists everything it reaches, and on a default-accept
 * server that is a hole per global rule and a region per rule that accepts. Version 1 listed it in
 * every entry (413 M characters on the bench fleet, more than a JavaScript string holds); version 2
 * states it once in `region_sets`, and each entry names the sets it is made of. Sizes are bytes of
 * JSON, in one process, never timed. A plan saved before (version 1) is read as it was.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { computeAccessDelta, type AccessDelta } from '../../../src/access/delta.js';
import { accessDeltaDocument, expandAccessDelta, type AccessDeltaDocument } from '../../../src/access/delta-sets.js';
import type { AccessModel, AccessRule, AccessUser } from '../../../src/access/index.js';

const host = (i: number) => `100.${64 + Math.floor(i / 65536)}.${Math.floor(i / 256) % 256}.${i % 256}`;
const settings = { portRules: true, serverAddresses: ['10.3.2.1'] };

/** `rules` global rules on hosts of 100.64.0.0/10, accept and drop in turn, two in three with ports: no rule covers the rest. */
function globalRules(count: number, at = (i: number) => i): AccessRule[] {
  return Array.from({ length: count }, (_, i) => ({
    owner: null,
    action: i % 2 === 0 ? 'accept' : 'drop',
    destination: `${host(at(i))}/32`,
    port_type: i % 3 === 0 ? null : i % 3 === 1 ? 'tcp' : 'udp',
    port_range: i % 3 === 0 ? null : `${1 + (i % 900)} - ${50 + (i % 900)}`,
  }));
}

const bytes = (value: unknown) => JSON.stringify(value).length;

/** 100 users without own rules, one device each; after: the first `fresh` get a second device. */
function newDevicesOfRulelessUsers(fresh: number): { inline: AccessDelta; doc: AccessDeltaDocument } {
  const rules = globalRules(300);
  const users = new Map<string, AccessUser>();
  const after = new Map<string, AccessUser>();
  for (let i = 0; i < 100; i++) {
    const key = `u${i}@x.test`;
    users.set(key, { key, email: key, devices: [{ name: 'laptop' }] });
    after.set(key, {
      key,
      email: key,
      devices: i < fresh ? [{ name: 'laptop' }, { name: 'new' }] : [{ name: 'laptop' }],
    });
  }
  const inline = computeAccessDelta({
    before: { users, rules, settings },
    after: { users: after, rules, settings },
    compared: { before: 'b', after: 'a' },
  });
  return { inline, doc: accessDeltaDocument(inline) };
}

/** The bench fleet's shape: `n` users with two devices and two own rules each, n global rules; 1% get a new device, 1% lose theirs. */
function benchShape(n: number): { before: AccessModel; after: AccessModel } {
  const rules: AccessRule[] = globalRules(n, (i) => 3 * i + 2);
  const users = new Map<string, AccessUser>();
  const changed = new Map<string, AccessUser>();
  for (let i = 0; i < n; i++) {
    const key = `u${i}@x.test`;
    for (const k of [0, 1])
      rules.push({
        owner: key,
        action: k === 0 ? 'accept' : 'drop',
        destination: `${host(3 * i + k)}/32`,
        port_type: null,
        port_range: null,
      });
    const devices = [{ name: 'laptop' }, { name: 'phone' }];
    users.set(key, { key, email: key, devices });
    changed.set(key, {
      key,
      email: key,
      devices: i % 100 === 3 ? [...devices, { name: 'new' }] : i % 100 === 1 ? [] : devices,
    });
  }
  return { before: { users, rules, settings }, after: { users: changed, rules, settings } };
}

describe('access delta document: its size', () => {
  it('new devices of users without own rules share one reach: 5 → 50 of them adds their entries, not 45 reaches', () => {
    const five = newDevicesOfRulelessUsers(5);
    const fifty = newDevicesOfRulelessUsers(50);
    expect(five.doc.entries).toHaveLength(5);
    expect(fifty.doc.entries).toHaveLength(50);
    // What they reach is stated once, the same for 5 and for 50.
    expect(bytes(fifty.doc.region_sets)).toBe(bytes(five.doc.region_sets));
    const reach = bytes(five.doc.region_sets);
    expect(reach).toBeGreaterThan(30_000);
    // The 45 more entries only name the sets: the bound is the table's size once, plus the entries.
    const entry = Math.max(...fifty.doc.entries.map(bytes));
    expect(entry).toBeLessThan(reach / 100);
    expect(bytes(fifty.doc)).toBeLessThanOrEqual(bytes(five.doc) + 45 * (entry + 1));
    expect(bytes(fifty.doc) / bytes(five.doc)).toBeLessThan(1.2);
    // Listed in every entry (version 1's shape), the same delta grows with the devices.
    expect(bytes(fifty.inline) / bytes(five.inline)).toBeGreaterThan(9);
    // And means the same: read back, it is the delta listed in every entry.
    expect(JSON.stringify(expandAccessDelta(JSON.parse(JSON.stringify(fifty.doc))))).toBe(JSON.stringify(fifty.inline));
  });

  it("the bench fleet's shape (own rules everywhere): 4× the fleet is about 4× the document, where the listed delta is 16×", () => {
    const size = (n: number) => {
      const { before, after } = benchShape(n);
      const inline = computeAccessDelta({ before, after, compared: { before: 'b', after: 'a' } });
      expect(inline.entries).toHaveLength(2 * (n / 100));
      return { doc: bytes(accessDeltaDocument(inline)), inline: bytes(inline) };
    };
    const small = size(400);
    const large = size(1600);
    expect(large.inline / small.inline).toBeGreaterThan(12);
    expect(large.doc / small.doc).toBeLessThan(5);
    expect(large.doc).toBeLessThan(large.inline / 4);
  }, 60_000);
});

describe('access delta document: version 1, as plans saved before it', () => {
  it("reads a saved plan's version 1 delta as it was written: each entry's regions listed", () => {
    const saved = JSON.parse(
      readFileSync(new URL('../../fixtures/saved-plan-notes/plan.json', import.meta.url), 'utf8'),
    ) as { access_delta: AccessDelta & { version: 1 } };
    expect(saved.access_delta.version).toBe(1);
    const read = expandAccessDelta(saved.access_delta);
    expect(read.entries.map((e) => [e.user, e.devices, e.gained.length, e.lost.length])).toEqual(
      saved.access_delta.entries.map((e) => [e.user, e.devices, e.gained.length, e.lost.length]),
    );
    expect(read.entries[1]!.gained[0]).toMatchObject({ family: 4, addresses: ['0.0.0.0/0'], protocol: 'all' });
  });
});
