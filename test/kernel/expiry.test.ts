/**
 * Expired grants against the kernel: files whose device, user's rule, global rule and user expire,
 * planned at an instant after their expiries against a server that still holds them (the run that
 * should have applied them was missed). The state after apply (src/access/after-apply.ts) of that
 * plan is what the kernel, loaded with the ruleset of the server apply leaves, does: the expired
 * grants no longer pass; before their instant the same files leave them passing.
 *
 * Needs root, nftables and iproute2, as kernel-oracle.test.ts; skipped with one line without them
 * (an error under CI=true).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stateAfterApply } from '../../src/access/after-apply.js';
import { CompiledRules, evaluateDevice, packetOf } from '../../src/access/index.js';
import { effectiveAt } from '../../src/desired/expiry.js';
import { userKey } from '../../src/model/keys.js';
import { defaultSettings, type DesiredState, type LiveState } from '../../src/model/state.js';
import { nftStateOfLive, renderRuleset } from '../../src/nft/ruleset.js';
import { planChanges } from '../../src/plan/index.js';
import type { Plan } from '../../src/plan/types.js';
import { apiDevice, apiRule, apiUser } from './cases.js';
import { deviceAddress, Lab, labUnavailable, SERVER_ADDRESSES, type Probe } from './lab.js';

const unavailable = labUnavailable();
if (unavailable && process.env.CI === 'true')
  throw new Error(`the kernel suite cannot run: ${unavailable}; CI must run it`);
if (unavailable) console.warn(`kernel suite (expiries) skipped: ${unavailable}`);

const U1 = '00000000-0000-4000-8000-0000000000b1';
const U2 = '00000000-0000-4000-8000-0000000000b2';
const ADMIN = '00000000-0000-4000-8000-0000000000b4';
const SRC = {
  u1: [deviceAddress('a', 0, 4), deviceAddress('a', 0, 6)],
  u1phone: [deviceAddress('b', 1, 4), deviceAddress('b', 1, 6)],
  u2: [deviceAddress('b', 0, 4), deviceAddress('b', 0, 6)],
};

/** The server as the files made it before anything expired. */
function live(): LiveState {
  const admin = { ...apiUser(ADMIN, 'admin@corp.test'), role: 'admin' as const };
  const device = (user: string, [v4, v6]: string[], name: string) => ({ ...apiDevice(user, v4!, v6!), name });
  return {
    users: [admin, apiUser(U1, 'u1@corp.test'), apiUser(U2, 'u2@corp.test')],
    devices: [device(U1, SRC.u1, 'laptop'), device(U1, SRC.u1phone, 'phone'), device(U2, SRC.u2, 'laptop')],
    rules: [
      apiRule(null, 'drop', '10.0.0.0/8'),
      apiRule(null, 'accept', '10.9.0.0/16'),
      apiRule(U1, 'accept', '10.1.0.0/16', 'tcp 22 - 22'),
      apiRule(U2, 'accept', '10.2.0.0/16'),
    ],
  };
}

/** u1's laptop expires 12-20, the global accept 12-22, u1's ssh rule 12-25, u2 12-28. Prune off. */
function files(): DesiredState {
  return {
    settings: {
      ...defaultSettings(),
      manage: { users: ['*@corp.test'], rules: ['10.0.0.0/8'] },
      port_rules: true,
      server_addresses: [...SERVER_ADDRESSES],
    },
    users: [
      { email: 'admin@corp.test', role: 'admin', devices: [], rules: [] },
      {
        email: 'u1@corp.test',
        devices: [
          { name: 'laptop', fields: {}, expires: '2026-12-20' },
          { name: 'phone', fields: {} },
        ],
        rules: [
          { action: 'accept', destination: '10.1.0.0/16', port_type: 'tcp', port_range: '22', expires: '2026-12-25' },
        ],
      },
      {
        email: 'u2@corp.test',
        expires: '2026-12-28',
        devices: [{ name: 'laptop', fields: {} }],
        rules: [{ action: 'accept', destination: '10.2.0.0/16', port_type: null, port_range: null }],
      },
    ],
    rules: [
      { action: 'drop', destination: '10.0.0.0/8', port_type: null, port_range: null },
      { action: 'accept', destination: '10.9.0.0/16', port_type: null, port_range: null, expires: '2026-12-22' },
    ],
    absent: { users: [], devices: [] },
    sources: [],
  };
}

/** The plan carried out on the live state, as apply does it: its deletions and cascades (it creates nothing here). */
function carriedOut(state: LiveState, plan: Plan): LiveState {
  const removed = new Set<string>();
  for (const change of plan.changes) {
    for (const item of change.cascade ?? []) removed.add(item.liveId);
    if (change.liveId && change.action === 'delete') removed.add(change.liveId);
  }
  expect(plan.changes.filter((c) => c.action === 'create' || c.action === 'replace')).toEqual([]);
  return {
    users: state.users.filter((u) => !removed.has(u.id)),
    devices: state.devices.filter((d) => !removed.has(d.id)),
    rules: state.rules.filter((r) => !removed.has(r.id)),
  };
}

function probes(): Probe[] {
  const out: Probe[] = [];
  const targets: [string, 'tcp' | 'udp' | 'icmp', number?][] = [
    ['10.1.2.3', 'tcp', 22],
    ['10.9.1.1', 'tcp', 443],
    ['10.2.3.4', 'udp', 53],
    ['10.5.0.1', 'icmp'],
  ];
  for (const [src] of Object.values(SRC))
    for (const [dst, proto, port] of targets) out.push({ src: src!, dst, proto, ...(port ? { port } : {}) });
  return out;
}

describe.skipIf(unavailable !== null)('expired grants: the state after apply agrees with the kernel', () => {
  let lab: Lab;
  beforeAll(async () => {
    lab = await Lab.create();
  }, 60_000);
  afterAll(async () => {
    await lab?.close();
  });

  it('before and after each expiry, the kernel loaded with what apply leaves passes what netform says', async () => {
    const options = { server: 'http://lab', createdAt: '2026-12-01T00:00:00.000Z', tokenUser: 'admin@corp.test' };
    const accepted: Record<string, number> = {};
    let packets = 0;
    for (const at of ['2026-12-01', '2026-12-21', '2026-12-23', '2026-12-26', '2026-12-29']) {
      const state = live();
      const desired = effectiveAt(files(), new Date(`${at}T00:00:00Z`));
      const plan = planChanges(desired, state, options);
      const after = stateAfterApply({ changes: plan.changes, undeclared: plan.undeclared, live: state, desired });
      await lab.load(renderRuleset(nftStateOfLive(carriedOut(state, plan), { portRules: true })));
      const sent = probes();
      const arrived = await lab.probe(sent);
      packets += sent.length;
      const rules = new CompiledRules(after.model);
      const disagreements: string[] = [];
      let passed = 0; // packets from a device apply leaves, accepted
      sent.forEach((probe, i) => {
        const kernel = arrived[i] ? 'accept' : 'drop';
        const email = SRC.u2.includes(probe.src) ? 'u2@corp.test' : 'u1@corp.test';
        const user = after.model.users.get(userKey(email));
        const device = user?.devices.find((d) => d.ipv4 === probe.src || d.ipv6 === probe.src);
        // A device (or user) apply deleted has no WireGuard peer: nothing it sends reaches the
        // ruleset (the lab sends from its address all the same, so there is nothing to compare).
        if (!user || !device) return;
        const verdict = evaluateDevice(rules, user, device, packetOf(probe.dst, probe.proto, probe.port)!).verdict;
        if (verdict === 'accept') passed++;
        if (verdict !== kernel)
          disagreements.push(`${at}: ${JSON.stringify(probe)}: kernel ${kernel}, after apply ${verdict}`);
      });
      expect(disagreements).toEqual([]);
      accepted[at] = passed;
    }
    // Each expiry takes something away, and nothing comes back.
    const counts = Object.values(accepted);
    for (let i = 1; i < counts.length; i++) expect(counts[i]!).toBeLessThan(counts[i - 1]!);
    console.log(`kernel (expiries): ${packets} packets compared; accepted by date ${JSON.stringify(accepted)}`);
  }, 120_000);
});
