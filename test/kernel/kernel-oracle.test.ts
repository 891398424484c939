/**
 * The Linux kernel as the access evaluator's oracle: the ruleset `netform nft` renders for a state
 * is loaded into a router namespace, real TCP, UDP and ICMP packets go from device addresses
 * through it, and what arrives at each destination is compared with netform's evaluator (and the
 * reference transcription of docs/rule-semantics.md §6, test/helpers/access-reference.ts). First the worked examples
 * S1–S8 of rule-semantics.md §7 (whose verdicts are checked too), then seeded random rule sets.
 * The ruleset is also compared with the one 0.7.36's fz_wall builds command by command.
 *
 * Needs root, nftables and iproute2 (test/kernel/lab.ts). Under CI=true a missing one is an error;
 * elsewhere the suite is skipped with one line saying why.
 *
 * NETFORM_KERNEL_SETS=N runs N random rule sets instead of 200 (while debugging a disagreement:
 * each one is printed with its state, enough to replay it). The rule sets go through two labs side
 * by side (NETFORM_KERNEL_LABS=N for N; 1 sends one rule set at a time): each lab's kernel is
 * waited on while the other sends. Every rule set and packet is the same whatever N is.
 *
 * Left out of the random sets, each the subject of another issue: users without devices (W3.6)
 * and port ranges reaching 65535 (W3.7). "No tunnel" verdicts (disabled users, devices without an
 * address in the family) cannot be sent and stay in unit tests.
 */
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accessModelOfDesired,
  accessModelOfLive,
  CompiledRules,
  evaluateDevice,
  packetOf,
  type AccessModel,
  type Decision,
} from '../../src/access/index.js';
import { checkDesiredState } from '../../src/desired/check/state.js';
import { userKey } from '../../src/model/keys.js';
import { parseRule, rulesOverlap } from '../../src/model/rule.js';
import type { ApiDevice, ApiRule } from '../../src/model/types.js';
import { nftStateOfDesired, nftStateOfLive, renderRuleset } from '../../src/nft/ruleset.js';
import { referenceVerdict } from '../helpers/access-reference.js';
import { apiRule, desiredOf, randomCase, workedExamples, type Case } from './cases.js';
import { comparableListing, fzWallCommands } from './fz-wall.js';
import { Lab, labUnavailable, listInFreshNamespace, SERVER_ADDRESSES } from './lab.js';

const unavailable = labUnavailable();
if (unavailable && process.env.CI === 'true')
  throw new Error(
    `the kernel suite cannot run: ${unavailable}; CI must run it (.ci/run installs nftables and iproute2)`,
  );
if (unavailable) console.warn(`kernel suite skipped: ${unavailable}`);

const RANDOM_SETS = Number(process.env.NETFORM_KERNEL_SETS ?? 200);
const SEED = 20240601;
/** Labs side by side for the kernel comparisons (NETFORM_KERNEL_LABS; 1 sends one case at a time). */
const LABS = Math.max(1, Number(process.env.NETFORM_KERNEL_LABS ?? 2));

interface Disagreement {
  case: string;
  probe: string;
  kernel: 'accept' | 'drop';
  evaluator: string;
  reference: string;
  decidedBy?: string;
  spec?: string;
}

/** The case's ruleset as `netform nft` renders it (from the live state, or from files). */
function rulesetOf(c: Case): string {
  return renderRuleset(
    c.mode === 'live' ? nftStateOfLive(c.live, { portRules: c.portRules }) : nftStateOfDesired(desiredOf(c)),
  );
}

function evaluatorFor(c: Case) {
  const model: AccessModel =
    c.mode === 'live'
      ? accessModelOfLive(c.live, { portRules: c.portRules, serverAddresses: [...SERVER_ADDRESSES] })
      : accessModelOfDesired(desiredOf(c));
  const rules = new CompiledRules(model);
  // The reference reads the state the server has: declared with port rules off, rules are stored without ports.
  const stored =
    c.mode === 'desired' && !c.portRules
      ? c.live.rules.map((r) => ({ ...r, port_type: null, port_range: null }))
      : c.live.rules;
  const ownerOf = new Map<string, { email: string; id: string; device: ApiDevice }>();
  for (const device of c.live.devices) {
    const user = c.live.users.find((u) => u.id === device.user_id)!;
    for (const address of [device.ipv4, device.ipv6])
      if (address) ownerOf.set(address, { email: user.email, id: user.id, device });
  }
  return (probe: Case['probes'][number]): { decision: Decision; reference: string } => {
    const owner = ownerOf.get(probe.src)!;
    const user = model.users.get(userKey(owner.email))!;
    const device = user.devices.find((d) => d.name === owner.device.name);
    if (!device) throw new Error(`no device ${owner.device.name} in the model`);
    const packet = packetOf(probe.dst, probe.proto, probe.port)!;
    const decision = evaluateDevice(rules, user, device, packet);
    const reference = referenceVerdict(
      owner.device,
      { id: owner.id, disabled: false },
      probe.dst,
      probe.proto,
      probe.port,
      { rules: stored, portRulesSupported: c.portRules, serverLocalAddrs: [...SERVER_ADDRESSES] },
    );
    return { decision, reference };
  };
}

function describeProbe(probe: Case['probes'][number]): string {
  const where =
    probe.port === undefined ? probe.dst : `${probe.dst.includes(':') ? `[${probe.dst}]` : probe.dst}:${probe.port}`;
  return `${probe.src} -> ${where}/${probe.proto}`;
}

interface Compared {
  packets: number;
  disagreements: Disagreement[];
  /** The evaluator's verdicts over the case's packets. */
  accepted: number;
  dropped: number;
}

/** Runs a case through the lab; the disagreements between kernel, evaluator, reference and spec. */
async function compare(lab: Lab, c: Case): Promise<Compared> {
  await lab.load(rulesetOf(c));
  const arrived = await lab.probe(c.probes);
  const evaluate = evaluatorFor(c);
  const disagreements: Disagreement[] = [];
  let accepted = 0;
  c.probes.forEach((probe, i) => {
    const kernel = arrived[i] ? 'accept' : 'drop';
    const { decision, reference } = evaluate(probe);
    if (decision.verdict === 'accept') accepted++;
    const referenceVerdictText = reference === 'ACCEPT' ? 'accept' : reference === 'DROP' ? 'drop' : 'no tunnel';
    if (decision.verdict !== kernel || referenceVerdictText !== kernel || (probe.expect && probe.expect !== kernel)) {
      disagreements.push({
        case: c.name,
        probe: describeProbe(probe),
        kernel,
        evaluator: decision.verdict,
        reference: referenceVerdictText,
        ...(decision.decidedBy
          ? {
              decidedBy: `${decision.decidedBy.rule.action} ${decision.decidedBy.rule.destination} ${decision.decidedBy.rule.port_type ?? ''} ${decision.decidedBy.rule.port_range ?? ''} (${decision.decidedBy.scope} ${decision.decidedBy.stage})`,
            }
          : {}),
        ...(probe.expect ? { spec: probe.expect } : {}),
      });
    }
  });
  if (disagreements.length > 0) {
    // Enough to replay it: the rules and devices of the case.
    console.error(
      `kernel and evaluator disagree in ${c.name}:\n${JSON.stringify(
        {
          rules: c.live.rules.map(({ inserted_at: _i, updated_at: _u, id: _id, ...r }) => r),
          devices: c.live.devices.map((d) => [d.user_id, d.ipv4, d.ipv6]),
          portRules: c.portRules,
          disagreements,
        },
        null,
        2,
      )}`,
    );
  }
  return { packets: c.probes.length, disagreements, accepted, dropped: c.probes.length - accepted };
}

/**
 * The labs side by side: while one waits on its kernel, another sends. Lab k runs the cases k,
 * k + n, k + 2n, … in that order; the results come back in the cases' order.
 */
async function compareAll(labs: readonly Lab[], cases: readonly Case[]): Promise<Compared[]> {
  const results: Compared[] = new Array(cases.length);
  await Promise.all(
    labs.map(async (lab, k) => {
      for (let i = k; i < cases.length; i += labs.length) results[i] = await compare(lab, cases[i]!);
    }),
  );
  return results;
}

/** Runs `work` on every item, at most `limit` at a time; the results in the items' order. */
async function inTurns<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await work(items[i]!);
      }
    }),
  );
  return results;
}

/** Declared with port rules off: pairs of an accept and a drop of one scope that overlap once stored without ports. */
function portlessPairs(c: Case): number {
  if (c.mode !== 'desired' || c.portRules) return 0;
  const stored = (rule: ApiRule) => parseRule({ ...rule, owner: rule.user_id, port_type: null, port_range: null })!;
  let pairs = 0;
  const rules = c.live.rules;
  for (let i = 0; i < rules.length; i++)
    for (let j = i + 1; j < rules.length; j++) {
      const [a, b] = [rules[i]!, rules[j]!];
      if (a.action === b.action || a.user_id !== b.user_id || (a.port_type === null && b.port_type === null)) continue;
      if (rulesOverlap(stored(a), { ...stored(b), action: a.action })) pairs++;
    }
  return pairs;
}

const OVERLAP = 'destination overlaps with an existing rule';

describe('validate agrees with the overlap rule of the random states declared with port rules off', () => {
  it('accepts every such state, and refuses each rule the generator left out as overlapping once stored', () => {
    let states = 0;
    let refused = 0;
    let pairs = 0;
    for (let i = 0; i < RANDOM_SETS; i++) {
      const c = randomCase(SEED + i);
      if (c.mode !== 'desired' || c.portRules) continue;
      states++;
      pairs += portlessPairs(c);
      const overlaps = (state: Case) => checkDesiredState(desiredOf(state)).filter((d) => d.message.includes(OVERLAP));
      expect(overlaps(c), c.name).toEqual([]);
      for (const rule of c.refused ?? []) {
        refused++;
        const found = overlaps({ ...c, live: { ...c.live, rules: [...c.live.rules, rule] } });
        expect(found.length, `${c.name}: ${rule.action} ${rule.destination} ${rule.port_type ?? ''}`).toBeGreaterThan(
          0,
        );
        expect(found.some((d) => d.message.includes('stores both without their ports'))).toBe(true);
      }
    }
    console.log(
      `validate on random states with port rules off: ${states} states accepted (${pairs} accept/drop pairs overlapping once stored without ports), ${refused} left-out rules refused`,
    );
    expect(states).toBeGreaterThan(0);
    expect(pairs).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  });
});

describe.skipIf(unavailable !== null)('the kernel agrees with the evaluator', () => {
  const labs: Lab[] = [];
  beforeAll(async () => {
    // Every set-up finished before a failure is reported, so that afterAll closes each lab made.
    const made = await Promise.allSettled(Array.from({ length: LABS }, () => Lab.create()));
    for (const m of made) if (m.status === 'fulfilled') labs.push(m.value);
    for (const m of made) if (m.status === 'rejected') throw m.reason;
  }, 60_000);
  afterAll(async () => {
    await Promise.all(labs.map((lab) => lab.close()));
  });

  it('on the worked examples S1–S8, with the verdicts rule-semantics.md gives', async () => {
    let packets = 0;
    const disagreements: Disagreement[] = [];
    for (const result of await compareAll(labs, workedExamples())) {
      packets += result.packets;
      disagreements.push(...result.disagreements);
    }
    console.log(
      `kernel oracle: worked examples S1–S8, ${workedExamples().length} rule sets, ${packets} packets compared`,
    );
    expect(disagreements).toEqual([]);
  }, 120_000);

  it(`on ${RANDOM_SETS} seeded random rule sets × 50 packets`, async () => {
    const started = Date.now();
    let packets = 0;
    let sets = 0;
    const disagreements: Disagreement[] = [];
    const verdicts = { accept: 0, drop: 0 };
    const modes = { live: 0, desired: 0, portRulesOff: 0, portlessPairs: 0 };
    const cases = Array.from({ length: RANDOM_SETS }, (_, i) => randomCase(SEED + i));
    const results = await compareAll(labs, cases);
    cases.forEach((c, i) => {
      const result = results[i]!;
      sets++;
      modes[c.mode]++;
      if (!c.portRules) modes.portRulesOff++;
      modes.portlessPairs += portlessPairs(c);
      packets += result.packets;
      disagreements.push(...result.disagreements);
      verdicts.accept += result.accepted;
      verdicts.drop += result.dropped;
    });
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.log(
      `kernel oracle: ${sets} random rule sets (${modes.live} from live states, ${modes.desired} from files, ${modes.portRulesOff} with port rules off, ` +
        `${modes.portlessPairs} accept/drop pairs overlapping once stored without ports), ` +
        `${packets} packets compared (${verdicts.accept} accepted, ${verdicts.drop} dropped) in ${seconds} s, ${disagreements.length} disagreements`,
    );
    expect(sets).toBe(RANDOM_SETS);
    expect(packets).toBeGreaterThanOrEqual(RANDOM_SETS * 50);
    expect(disagreements).toEqual([]);
  }, 300_000);
});

/** Destinations in the spellings users write: host bits, bare hosts, /32 and /128, IPv4 inside IPv6. */
function spellings(): Case {
  const c = workedExamples()[0]!;
  const user = c.live.users[0]!.id;
  const drops = ['10.0.0.5/24', '1.2.3.4/32', '5.6.7.8', '2001:db8::7/32'];
  const accepts = ['0.0.0.0/0', '::/0'];
  const own = ['::1.2.3.4', '::ffff:1.2.3.4', '::ffff:10.0.0.0/104', '64:ff9b::1.2.3.4', '2001:db8:1::1/128'];
  return {
    ...c,
    name: 'destination spellings',
    live: {
      ...c.live,
      rules: [
        ...drops.map((d) => apiRule(null, 'drop', d)),
        ...accepts.map((d) => apiRule(null, 'accept', d)),
        ...own.map((d) => apiRule(user, 'accept', d)),
        apiRule(user, 'drop', '::1.2.3.4', 'tcp 1 - 65534'),
        apiRule(null, 'accept', '10.0.0.5/24', 'udp 53 - 53'),
      ],
    },
  };
}

describe.skipIf(unavailable !== null)("netform's ruleset is the one 0.7.36's fz_wall builds", () => {
  it('for the worked examples and random states, listed by nft', async () => {
    const cases = [...workedExamples(), spellings(), ...Array.from({ length: 30 }, (_, i) => randomCase(SEED + i))];
    const live = cases.filter((c) => c.mode === 'live');
    // Each listing in a namespace of its own: a few cases at a time, compared in the cases' order.
    const listings = await inTurns(live, 4, async (c) => {
      const options = { portRules: c.portRules, wgInterface: 'wg-firezone' };
      return Promise.all([
        listInFreshNamespace(renderRuleset(nftStateOfLive(c.live, options))),
        listInFreshNamespace(fzWallCommands(c.live, options)),
      ]).catch((error: Error) => {
        throw new Error(`${c.name}: ${error.message}\n${fzWallCommands(c.live, options)}`);
      });
    });
    live.forEach((c, i) => {
      const [ours, theirs] = listings[i]!;
      expect(comparableListing(ours), c.name).toBe(comparableListing(theirs));
    });
    console.log(`fz_wall listing: ${live.length} live states, each listed both ways by nft`);
  }, 120_000);
});

describe('the lab never runs nft in the namespace the suite runs in', () => {
  it('its agent refuses to start there', () => {
    const agent = fileURLToPath(new URL('./agent.mjs', import.meta.url));
    const own = String(statSync('/proc/self/ns/net').ino);
    const run = spawnSync(process.execPath, [agent], {
      env: { ...process.env, NETFORM_LAB_HOST_NETNS: own },
      encoding: 'utf8',
    });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('agent: refusing to run outside a namespace of its own\n');
  });
});
