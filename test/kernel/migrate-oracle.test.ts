/**
 * The Linux kernel as the oracle of `netform migrate firezone-1x`, independent of both of its
 * evaluators. For seeded random 0.7 states (cases.ts's generator, declared in files) and one
 * hand-made state, the lab (lab.ts) runs twice: one router loads the ruleset 0.7.36 builds for
 * the state (as kernel-oracle.test.ts does, there checked against fz_wall's own commands), the
 * other a literal nftables rendering of the 1.x objects `migrate` wrote to main.tf.json, read back
 * from the JSON (firezone-1x.ts: default drop, one accept per resource and protocol, no filters =
 * every protocol). The same packets go through both: the corners of every rule's and every
 * resource's block (first and last address, and just outside), ports 0, 1, 65534, 65535 and each
 * block's port bounds (and one past them), TCP, UDP, ICMP and GRE (IP protocol 47), the
 * generator's own random packets, and the counter-example packet of every difference report.json
 * lists. Each pair of verdicts is checked against report.json's claim for the packet's user:
 *
 * - the kernels disagree only where the user's report lists a difference holding the packet (0.7
 *   accepts and 1.x refuses: `lost`; the reverse: `gained`), so `equal` means the kernels agree
 *   everywhere and `narrower` means 1.x accepts nothing 0.7.36 refuses;
 * - every difference's example packet really differs, in its direction, in the kernel (an example
 *   the lab cannot send, such as 0.0.0.0, is replaced by another address of its blocks);
 * - each user's verdict follows from its lists.
 *
 * Three runs of `migrate` per state: the default (asserted disjoint: no user's resources overlap
 * with different filters), `--assume-filter-routing` (they may; the rendering's union of accepts
 * is what clients with firezone#12684 do, "first resource whose filter permits", see
 * firezone-1x.ts), and `--prefer wider --everyone-group ID` (packets only 1.x accepts). Where a
 * user's resources do overlap with different filters, the packets also go through a rendering of
 * the old clients' routing (most specific prefix), checked against `old_clients`.
 *
 * Needs root, nftables, iproute2 and python3 (the raw sockets of GRE and port 0). Under CI=true a
 * missing one is an error; elsewhere the suite is skipped with one line.
 * NETFORM_KERNEL_MIGRATE_SETS=N runs N states instead of 6 (the first is the hand-made one); a
 * disagreement prints its state's files and 1.x ruleset, enough to replay it.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatAddress, parseCidrOrAddress, parseIpAddress, type IpFamily } from '../../src/model/net.js';
import type { DesiredState } from '../../src/model/state.js';
import { nftStateOfDesired, renderRuleset } from '../../src/nft/ruleset.js';
import { runCli } from '../helpers/cli.js';
import { parseReport, resolvedUsers } from '../helpers/migrate-report.js';
import { seeded } from '../helpers/seeded.js';
import { apiDevice, apiRule, apiUser, desiredOf, randomCase, usableDestination, type Case } from './cases.js';
import { prefixTies, render1x, resourcesByUser, type Client, type Resource1x } from './firezone-1x.js';
import { deviceAddress, Lab, labUnavailable, SERVER_ADDRESSES, sideOf, type Proto } from './lab.js';

/** A packet of the oracle: TCP, UDP, ICMP or GRE. */
interface Probe {
  src: string;
  dst: string;
  proto: Proto | 'gre';
  port?: number;
}

function unavailableHere(): string | null {
  const lab = labUnavailable();
  if (lab) return lab;
  const python = spawnSync('python3', ['-c', 'import socket'], { encoding: 'utf8' });
  return python.status === 0 ? null : 'no python3 (it sends the GRE and port-0 packets through raw sockets)';
}
const unavailable = unavailableHere();
if (unavailable && process.env.CI === 'true')
  throw new Error(
    `the kernel suite cannot run: ${unavailable}; CI must run it (.ci/run installs nftables and iproute2)`,
  );
if (unavailable) console.warn(`kernel suite (migrate firezone-1x) skipped: ${unavailable}`);

const SETS = Number(process.env.NETFORM_KERNEL_MIGRATE_SETS ?? 6);
const SEED = 20261129;
/** Corner packets per state, sampled from all of them (the examples and the generator's packets come on top). */
const CORNER_PACKETS = 240;

interface ReportEntry {
  code: string;
  family: IpFamily;
  protocol: 'all' | 'tcp' | 'udp' | 'icmp' | 'other';
  ports?: string;
  addresses: string[];
  addresses_total?: number;
  within?: string;
  example: string;
}
interface ReportUser {
  email: string;
  verdict: 'equal' | 'narrower' | 'wider';
  lost: ReportEntry[];
  gained: ReportEntry[];
  /** What clients without firezone#12684 refuse although newer ones let it through. */
  old_clients: ReportEntry[];
}
type Kind = 'lost' | 'gained' | 'old_clients';

/** A packet of one user's device, and why it is sent. */
interface Packet extends Probe {
  email: string;
  /**
   * The difference whose example it is: 0.7.36 must accept it and 1.x refuse it (`lost`), or the
   * reverse (`gained`); new clients accept it and old ones refuse it (`old_clients`).
   */
  example?: { kind: Kind; entry: ReportEntry };
}

/** The state as files `migrate -f` reads (JSON is YAML): every device address pinned. */
function filesOf(desired: DesiredState): string {
  return JSON.stringify({
    version: 1,
    settings: { port_rules: desired.settings.port_rules, server_addresses: desired.settings.server_addresses },
    users: desired.users.map((u) => ({
      email: u.email,
      role: 'unprivileged',
      devices: u.devices.map((d) => ({
        name: d.name,
        public_key: createHash('sha256').update(`${u.email} ${d.name}`).digest('base64'),
        ...d.fields,
      })),
      rules: u.rules.map(ruleOf),
    })),
    rules: desired.rules.map(ruleOf),
  });
}
function ruleOf(r: DesiredState['rules'][number]) {
  return {
    action: r.action,
    destination: r.destination,
    ...(r.port_type ? { port_type: r.port_type, port_range: r.port_range } : {}),
  };
}

/** The generator's state, declared in files; a live state with port rules off is taken with them on. */
function stateOf(seed: number): Case {
  const c = randomCase(seed);
  return c.mode === 'live' && !c.portRules ? { ...c, portRules: true, name: `random #${seed} (port rules on)` } : c;
}

/**
 * firezone#12684's shape in 0.7 rules: a user's own tcp/22 and udp/53 inside a block every user
 * reaches by TCP, in a default-deny network; with --assume-filter-routing the /24 and the /16
 * become overlapping Resources with different filters. The user's own drop of tcp/22 in another
 * /24 makes, with --everyone-group, a Resource of its Group narrower than the Everyone group's
 * around it: old clients refuse what new ones let through.
 */
function nestedAccepts(): Case {
  const [u1, u2] = ['00000000-0000-4000-8000-0000000000b1', '00000000-0000-4000-8000-0000000000b2'];
  return {
    name: 'nested accepts',
    portRules: true,
    mode: 'desired',
    probes: [],
    live: {
      users: [apiUser(u1, 'u1@lab.test'), apiUser(u2, 'u2@lab.test')],
      devices: [
        apiDevice(u1, deviceAddress('a', 0, 4), deviceAddress('a', 0, 6)),
        apiDevice(u2, deviceAddress('b', 0, 4), null),
      ],
      rules: [
        apiRule(null, 'drop', '10.0.0.0/8'),
        apiRule(null, 'accept', '10.1.0.0/16', 'tcp 1 - 65534'),
        apiRule(u1, 'accept', '10.1.1.0/24', 'udp 53 - 53'),
        apiRule(u1, 'accept', '10.1.1.7', 'tcp 22'),
        apiRule(u1, 'accept', '10.1.2.0/24'),
        apiRule(u1, 'drop', '10.1.3.0/24', 'tcp 22'),
      ],
    },
  };
}

function portBounds(text: string): [number, number] {
  const [lo, hi = lo] = text.split('-').map((s) => Number(s.trim()));
  return [lo!, hi!];
}

function inPorts(text: string, port: number): boolean {
  return text.split(',').some((part) => {
    const [lo, hi] = portBounds(part);
    return lo <= port && port <= hi;
  });
}

function inBlock(block: string, address: string): boolean {
  const b = parseCidrOrAddress(block)!;
  const a = parseIpAddress(address)!;
  return b.family === a.family && b.start <= a.value && a.value <= b.end;
}

/** Whether a report entry holds the packet: its family, protocol, ports and blocks (or, when the list is cut, its enclosing block). */
function holds(entry: ReportEntry, p: Probe): boolean {
  if (entry.family !== (p.dst.includes(':') ? 6 : 4)) return false;
  const proto = p.proto === 'gre' ? 'other' : p.proto;
  if (entry.protocol !== 'all' && entry.protocol !== proto) return false;
  if ((proto === 'tcp' || proto === 'udp') && entry.protocol !== 'all' && !inPorts(entry.ports ?? '0-65535', p.port!))
    return false;
  if (entry.addresses_total !== undefined) return inBlock(entry.within!, p.dst);
  return entry.addresses.some((block) => inBlock(block, p.dst));
}

/** `10.1.0.1 tcp/8080`, `10.9.0.0 gre`, `10.1.0.1 icmp`. */
function exampleProbe(example: string): { dst: string; proto: Proto; port?: number } {
  const [dst, what] = example.split(' ') as [string, string];
  const [proto, port] = what.split('/') as [Proto, string | undefined];
  if (!['tcp', 'udp', 'icmp', 'gre'].includes(proto)) throw new Error(`unexpected example ${example}`);
  return { dst, proto, ...(port !== undefined ? { port: Number(port) } : {}) };
}

/** The devices of each user as 1.x clients: one per 0.7 device, from its addresses. */
function clientsOf(c: Case): Client[] {
  return c.live.devices.map((d) => ({
    email: c.live.users.find((u) => u.id === d.user_id)!.email,
    addresses: [d.ipv4, d.ipv6].filter((a): a is string => typeof a === 'string'),
  }));
}

function corners(block: string): string[] {
  const b = parseCidrOrAddress(block)!;
  const max = b.family === 4 ? 2n ** 32n - 1n : 2n ** 128n - 1n;
  const values = [b.start, b.end, b.start - 1n, b.end + 1n].filter((v) => v >= 0n && v <= max);
  return [...new Set(values)].map((v) => formatAddress(b.family, v));
}

/**
 * The corner packets of a state: from every device address, to the corners of every rule's and
 * every resource's block and to the server's addresses, ICMP, GRE, and TCP and UDP to ports 0, 1,
 * 65534, 65535 and the bounds (and one past them) of the block's own port ranges. Sampled by the
 * state's seed: most from the rules' blocks, the filtered resources' and the server's addresses,
 * the rest from the resources without filters (the many pieces around the migrated scope).
 */
function cornerPackets(c: Case, resources: Resource1x[], seed: number): Packet[] {
  const r = seeded(seed);
  const targets = new Map<string, { sharp: boolean; tcp: Set<number>; udp: Set<number> }>();
  const add = (block: string, sharp: boolean, bounds: ['tcp' | 'udp', number, number][]) => {
    for (const dst of corners(block)) {
      let t = targets.get(dst);
      if (!t) targets.set(dst, (t = { sharp, tcp: new Set([0, 1, 65534, 65535]), udp: new Set([0, 1, 65534, 65535]) }));
      t.sharp ||= sharp;
      for (const [proto, lo, hi] of bounds)
        for (const p of [lo - 1, lo, hi, hi + 1]) if (p >= 0 && p <= 65535) t[proto].add(p);
    }
  };
  for (const rule of c.live.rules)
    add(
      rule.destination,
      true,
      rule.port_type && rule.port_range ? [[rule.port_type, ...portBounds(rule.port_range)]] : [],
    );
  for (const res of resources)
    add(
      res.address,
      res.filters !== null,
      (res.filters ?? []).flatMap((f) =>
        f.protocol === 'icmp'
          ? []
          : (f.ports ?? []).map(([lo, hi]) => [f.protocol, lo, hi] as ['tcp' | 'udp', number, number]),
      ),
    );
  for (const s of SERVER_ADDRESSES) add(`${s}/${s.includes(':') ? 128 : 32}`, true, []);
  const pools: Record<'sharp' | 'plain', Packet[]> = { sharp: [], plain: [] };
  const users = new Map(c.live.users.map((u) => [u.id, u.email]));
  for (const device of c.live.devices)
    for (const src of [device.ipv4, device.ipv6]) {
      if (!src) continue;
      const side = sideOf(src)!;
      const email = users.get(device.user_id)!;
      for (const [dst, t] of targets) {
        if (dst.includes(':') !== src.includes(':') || !usableDestination(dst, side)) continue;
        const pool = pools[t.sharp ? 'sharp' : 'plain'];
        pool.push({ email, src, dst, proto: 'icmp' }, { email, src, dst, proto: 'gre' });
        for (const proto of ['tcp', 'udp'] as const)
          for (const port of t[proto]) pool.push({ email, src, dst, proto, port });
      }
    }
  const out: Packet[] = [];
  const take = (pool: Packet[], count: number) => {
    for (let n = 0; n < count && pool.length > 0; n++) out.push(pool.splice(r.int(0, pool.length - 1), 1)[0]!);
  };
  take(pools.sharp, Math.round(CORNER_PACKETS * 0.75));
  take(pools.plain, CORNER_PACKETS - out.length);
  take(pools.sharp, CORNER_PACKETS - out.length);
  return out;
}

/** Addresses of a report entry's blocks: the first, second, last but one and last of each. */
function entryAddresses(entry: ReportEntry): string[] {
  return entry.addresses.flatMap((block) => {
    const b = parseCidrOrAddress(block)!;
    const values = [b.start, b.start + 1n, b.end - 1n, b.end].filter((v) => v >= b.start && v <= b.end);
    return [...new Set(values)].map((v) => formatAddress(b.family, v));
  });
}

/**
 * Each difference's example packet, from a device of its user with that family whose side can
 * send it. An example the lab cannot send (0.0.0.0, an address on the device's own side) is
 * replaced by a stand-in: the same protocol and port to another address of the difference's blocks.
 */
function examplePackets(c: Case, report: ReportUser[]): { packets: Packet[]; standIns: number; unsendable: number } {
  const packets: Packet[] = [];
  let unsendable = 0;
  let standIns = 0;
  for (const user of report) {
    const id = c.live.users.find((u) => u.email === user.email)!.id;
    const sources = c.live.devices
      .filter((d) => d.user_id === id)
      .flatMap((d) => [d.ipv4, d.ipv6])
      .filter((s): s is string => !!s);
    const sendable = (dst: string) =>
      sources.find((s) => s.includes(':') === dst.includes(':') && usableDestination(dst, sideOf(s)!));
    for (const kind of ['lost', 'gained', 'old_clients'] as const)
      for (const entry of user[kind]) {
        const example = exampleProbe(entry.example);
        if (!holds(entry, { src: '', ...example }))
          throw new Error(
            `${user.email}: the example ${entry.example} is outside its own difference ${JSON.stringify(entry)}`,
          );
        let dst = example.dst;
        let src = sendable(dst);
        for (const other of src ? [] : entryAddresses(entry))
          if ((src = sendable(other))) {
            dst = other;
            standIns++;
            break;
          }
        if (!src) {
          unsendable++;
          continue;
        }
        packets.push({ email: user.email, src, ...example, dst, example: { kind, entry } });
      }
  }
  return { packets, standIns, unsendable };
}

/** A packet's identity: two packets with the same one are the same packet (one ICMP or GRE packet per source and destination). */
function keyOf(p: Probe): string {
  return `${p.src}|${p.dst}|${p.proto}|${p.port ?? ''}`;
}

/** The packets without repeats, sent at once; whether each arrived. */
async function verdicts(lab: Lab, packets: readonly Probe[]): Promise<Map<string, boolean>> {
  const arrived = await lab.probe(
    packets.map(({ src, dst, proto, port }) =>
      proto === 'gre' ? { src, dst, proto } : { src, dst, proto, ...(port !== undefined ? { port } : {}) },
    ),
  );
  return new Map(packets.map((p, i) => [keyOf(p), arrived[i]!]));
}

function describePacket(p: Probe): string {
  const where = p.port === undefined ? p.dst : `${p.dst.includes(':') ? `[${p.dst}]` : p.dst}:${p.port}`;
  return `${p.src} -> ${where}/${p.proto}`;
}

/** The id given to --everyone-group. */
const EVERYONE = '00000000-0000-4000-8000-00000000e1e1'; // the 1.x API's group ids are UUIDs
const MODES = [
  { name: 'disjoint', args: [] },
  { name: 'filter-routing', args: ['--assume-filter-routing'] },
  { name: 'wider, Everyone group', args: ['--prefer', 'wider', '--everyone-group', EVERYONE] },
] as const;
type Mode = (typeof MODES)[number]['name'];

interface Tally {
  states: number;
  packets: number;
  bothAccept: number;
  bothDrop: number;
  lost: number;
  gained: number;
  examples: number;
  unsendable: number;
  standIns: number;
  /** Pairs of one user's resources that overlap with different filters. */
  overlaps: number;
  /** Pairs of one user's resources on the same block with different filters. */
  ties: number;
  /** Accepts rendered per protocol (`all`: a resource without filters). */
  filters: Record<string, number>;
  /** States and packets also sent through the old clients' rendering, and how many of those old clients refuse and new ones accept. */
  oldStates: number;
  oldPackets: number;
  oldRefused: number;
  /** Disagreements held only by the enclosing block of a difference whose list of blocks is cut. */
  heldByWithin: number;
  resources: number;
  verdicts: Record<string, number>;
}

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'netform-migrate-oracle-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function migrate(files: string, out: string, extra: string[]): Promise<{ tf: string; report: ReportUser[] }> {
  const result = await runCli(['migrate', 'firezone-1x', '-f', files, '-o', out, ...extra], { cwd: work });
  if (result.code !== 0) throw new Error(`migrate failed (${result.code}): ${result.stderr}`);
  // Each user's differences looked up in report.json's table (version 2).
  const report = resolvedUsers(parseReport(readFileSync(join(out, 'report.json'), 'utf8'))) as unknown as ReportUser[];
  return { tf: readFileSync(join(out, 'main.tf.json'), 'utf8'), report };
}

describe.skipIf(unavailable !== null)("the kernel agrees with migrate firezone-1x's report", () => {
  let lab07: Lab;
  let lab1x: Lab;
  beforeAll(async () => {
    [lab07, lab1x] = await Promise.all([Lab.create(), Lab.create()]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([lab07?.close(), lab1x?.close()]);
  });

  it(`on ${SETS} seeded random states, in three modes`, async () => {
    const started = Date.now();
    const problems: string[] = [];
    const tally = Object.fromEntries(MODES.map((m) => [m.name, blankTally()])) as Record<Mode, Tally>;
    for (let i = 0; i < SETS; i++) {
      const c = i === 0 ? nestedAccepts() : stateOf(SEED + i);
      const desired = desiredOf(c);
      const files = join(work, `state-${i}`);
      mkdirSync(files, { recursive: true });
      writeFileSync(join(files, 'netform.yaml'), filesOf(desired));
      const modes: { name: Mode; tf: string; report: ReportUser[] }[] = [];
      for (const [m, mode] of MODES.entries())
        modes.push({ name: mode.name, ...(await migrate(files, join(work, `out-${i}-${m}`), [...mode.args])) });
      const rendered = modes.map((mode) => {
        const byUser = resourcesByUser(mode.tf, EVERYONE);
        const resources = [...new Map([...byUser.values()].flat().map((r) => [r.name, r])).values()];
        return {
          ...mode,
          byUser,
          resources,
          ruleset: render1x(byUser, clientsOf(c)),
          overlaps: overlapsOf(byUser),
          ties: [...byUser.values()].reduce((n, list) => n + prefixTies(list), 0),
          examples: examplePackets(c, mode.report),
        };
      });
      // One list for every mode: the corners of every rule and of every mode's resources, the generator's packets, the examples.
      const unique = new Map<string, Packet>();
      const allResources = rendered.flatMap((m) => m.resources);
      for (const p of [
        ...cornerPackets(c, allResources, SEED + i),
        ...c.probes.map((p) => ({ ...p, email: emailOfSource(c, p.src) })),
        ...rendered.flatMap((m) => m.examples.packets),
      ])
        if (!unique.has(keyOf(p))) unique.set(keyOf(p), { ...p, example: undefined });
      const packets = [...unique.values()];
      await lab07.load(renderRuleset(nftStateOfDesired(desired)));
      await lab1x.load(rendered[0]!.ruleset);
      const [v07, first] = await Promise.all([verdicts(lab07, packets), verdicts(lab1x, packets)]);
      const v1x = [first];
      for (const mode of rendered.slice(1)) {
        await lab1x.load(mode.ruleset);
        v1x.push(await verdicts(lab1x, packets));
      }
      // Old clients differ from new ones only where one user's resources overlap with different filters.
      const vOld: (Map<string, boolean> | null)[] = [];
      for (const mode of rendered) {
        if (mode.overlaps === 0 || mode.ties > 0) {
          vOld.push(null);
          continue;
        }
        await lab1x.load(render1x(mode.byUser, clientsOf(c), 'prefix'));
        vOld.push(await verdicts(lab1x, packets));
      }
      rendered.forEach((mode, m) => {
        const t = tally[mode.name];
        t.states++;
        t.resources += mode.resources.length;
        for (const r of mode.resources)
          for (const f of r.filters ?? [{ protocol: 'all', ports: null }])
            t.filters[f.protocol] = (t.filters[f.protocol] ?? 0) + 1;
        t.unsendable += mode.examples.unsendable;
        t.standIns += mode.examples.standIns;
        t.overlaps += mode.overlaps;
        t.ties += mode.ties;
        // Disjoint by construction: without --assume-filter-routing or --everyone-group, no user's resources overlap with different filters.
        if (mode.name === 'disjoint' && mode.overlaps > 0)
          problems.push(
            `${c.name} disjoint: ${mode.overlaps} pairs of one user's resources overlap with different filters`,
          );
        const old = vOld[m];
        if (old) t.oldStates++;
        for (const u of mode.report)
          if (mode.overlaps === 0 && u.old_clients.length > 0)
            problems.push(`${c.name} ${mode.name}: ${u.email} has old-client differences though no resources overlap`);
        for (const u of mode.report) t.verdicts[u.verdict] = (t.verdicts[u.verdict] ?? 0) + 1;
        const before = problems.length;
        const verdictText = (p: Probe) => {
          const [a, b] = [v07.get(keyOf(p))!, v1x[m]!.get(keyOf(p))!];
          return {
            a,
            b,
            what: `${c.name} ${mode.name}: ${describePacket(p)}: 0.7 ${a ? 'accepts' : 'drops'}, 1.x ${b ? 'accepts' : 'drops'}`,
          };
        };
        for (const p of packets) {
          const user = mode.report.find((u) => u.email === p.email)!;
          const { a, b, what } = verdictText(p);
          t.packets++;
          if (a && b) t.bothAccept++;
          else if (!a && !b) t.bothDrop++;
          else if (a) t.lost++;
          else t.gained++;
          if (old) {
            const o = old.get(keyOf(p))!;
            t.oldPackets++;
            if (o && !b) problems.push(`${what}, but old clients accept it`);
            if (b && !o) {
              t.oldRefused++;
              if (!user.old_clients.some((e) => holds(e, p)))
                problems.push(
                  `${what}, old clients drop it, and the old-client differences of ${p.email} do not hold it`,
                );
            }
          }
          if (a === b) continue;
          const kind = a ? 'lost' : 'gained';
          const holding = user[kind].filter((e) => holds(e, p));
          if (holding.length === 0)
            problems.push(`${what}, and the ${kind} differences of ${p.email} (${user.verdict}) do not hold it`);
          else if (holding.every((e) => e.addresses_total !== undefined)) t.heldByWithin++;
        }
        for (const p of mode.examples.packets) {
          t.examples++;
          const { a, b, what } = verdictText(p);
          if (p.example!.kind === 'old_clients') {
            const o = old?.get(keyOf(p));
            if (!b || o !== false)
              problems.push(
                `${what}, old clients ${o === undefined ? 'not run' : o ? 'accept' : 'drop'}, but it is the example of ${p.email}'s old-client difference ${JSON.stringify(p.example!.entry)}`,
              );
            continue;
          }
          const want = p.example!.kind === 'lost' ? [true, false] : [false, true];
          if (a !== want[0] || b !== want[1])
            problems.push(
              `${what}, but it is the example of ${p.email}'s ${p.example!.kind} difference ${JSON.stringify(p.example!.entry)}`,
            );
        }
        for (const u of mode.report) {
          const expected = u.gained.length > 0 ? 'wider' : u.lost.length > 0 ? 'narrower' : 'equal';
          if (u.verdict !== expected)
            problems.push(
              `${c.name} ${mode.name}: ${u.email} is ${u.verdict} with ${u.lost.length} lost, ${u.gained.length} gained`,
            );
        }
        if (problems.length > before)
          console.error(
            `kernels and report disagree in ${c.name} (${mode.name}):\n${filesOf(desired)}\n${mode.ruleset}\n${problems.slice(before, before + 20).join('\n')}`,
          );
      });
    }
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    for (const [name, t] of Object.entries(tally))
      console.log(
        `migrate oracle (${name}): ${t.states} states, ${t.resources} resources (accepts ${JSON.stringify(t.filters)}, ${t.overlaps} pairs of one user's overlapping with different filters), ${t.packets} packets through both kernels ` +
          `(${t.bothAccept} accepted by both, ${t.bothDrop} dropped by both, ${t.lost} only by 0.7.36, ${t.gained} only by 1.x; ${t.heldByWithin} of these held only by a cut list's enclosing block), ` +
          `${t.examples} report examples sent (${t.standIns} of them stand-ins for examples the lab cannot send, ${t.unsendable} left out), users ${JSON.stringify(t.verdicts)}; old clients: ${t.oldStates} states, ${t.oldPackets} packets (${t.oldRefused} refused where new clients accept), ${t.ties} same-block ties not modelled`,
      );
    console.log(`migrate oracle: ${seconds} s, ${problems.length} disagreements`);
    expect(problems).toEqual([]);
    // The checks had something to check: packets both kernels accept, packets only 0.7.36 accepts,
    // packets only 1.x accepts (--prefer wider, the Everyone group), old clients refusing some.
    expect(tally.disjoint.bothAccept).toBeGreaterThan(0);
    expect(tally.disjoint.lost).toBeGreaterThan(0);
    expect(tally['wider, Everyone group'].gained).toBeGreaterThan(0);
    expect(tally['filter-routing'].overlaps).toBeGreaterThan(0);
    expect(tally['wider, Everyone group'].oldRefused).toBeGreaterThan(0);
  }, 600_000);
});

function overlapsOf(byUser: Map<string, Resource1x[]>): number {
  let pairs = 0;
  for (const list of byUser.values())
    for (let i = 0; i < list.length; i++)
      for (let j = i + 1; j < list.length; j++) {
        const [a, b] = [parseCidrOrAddress(list[i]!.address)!, parseCidrOrAddress(list[j]!.address)!];
        const overlap = a.family === b.family && a.start <= b.end && b.start <= a.end;
        if (overlap && JSON.stringify(list[i]!.filters) !== JSON.stringify(list[j]!.filters)) pairs++;
      }
  return pairs;
}

function blankTally(): Tally {
  return {
    states: 0,
    packets: 0,
    bothAccept: 0,
    bothDrop: 0,
    lost: 0,
    gained: 0,
    examples: 0,
    unsendable: 0,
    standIns: 0,
    overlaps: 0,
    ties: 0,
    filters: {},
    oldStates: 0,
    oldPackets: 0,
    oldRefused: 0,
    heldByWithin: 0,
    resources: 0,
    verdicts: {},
  };
}

function emailOfSource(c: Case, src: string): string {
  const device = c.live.devices.find((d) => d.ipv4 === src || d.ipv6 === src)!;
  return c.live.users.find((u) => u.id === device.user_id)!.email;
}
