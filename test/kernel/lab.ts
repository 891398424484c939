/**
 * A network lab in Linux network namespaces for the kernel suite: a router that loads the ruleset
 * netform renders, device namespaces behind its `wg-firezone` interface, and a destination
 * namespace, with real TCP, UDP and ICMP packets between them. Needs root, nft (nftables) and ip
 * (iproute2); `labUnavailable()` says why not.
 *
 *     device side a ─┐                                   ┌─ destination t (any other address:
 *     (10.3.2.even)  ├─ bridge wg-firezone ─ router r ─ rt ┤   it counts what reaches it, then drops it)
 *     device side b ─┘  (10.3.2.1, fd00::3:2:1)          └─
 *     (10.3.2.odd)
 *
 * The router forwards between the device sides too (device to device), and its own addresses are
 * the server-local destinations. Every namespace has an agent (agent.mjs) that sends packets and
 * runs nft there; nft never runs in the namespace the suite runs in.
 *
 * Verdicts are read where a packet arrives: a table `inet probe` in each namespace adds every
 * probe it receives to a set, keyed by source, destination, protocol and source port (the marker;
 * ICMP probes by source and destination). The router's own probe table also records each probe
 * as it enters (prerouting) and as it reaches the forward hook, so the lab knows when every
 * packet has been through the router before it reads the destinations: no time-outs decide.
 *
 * GRE probes (IP protocol 47) and TCP or UDP probes to port 0 go out through raw sockets (the
 * agent hands them to python3); a GRE probe is keyed by source and destination, as ICMP ones.
 *
 * ICMP probes: a device cannot be made to send an echo request without raw sockets, so the lab
 * sends a UDP datagram from the destination address to port 9 of the device (from the destination
 * namespace, which owns every address, or from the router for its own addresses); the device
 * answers with an ICMP port unreachable from its address to the destination: an ICMP packet from
 * the device, filtered by the router like any other.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseIpAddress } from '../../src/model/net.js';

export type Proto = 'tcp' | 'udp' | 'icmp';
export type Side = 'a' | 'b';
type Role = 'r' | 'a' | 'b' | 't';
const ROLES: readonly Role[] = ['r', 'a', 'b', 't'];

export interface Probe {
  /** A device address (on side a or b). */
  src: string;
  dst: string;
  proto: Proto;
  /** Destination port, for tcp and udp (0 too: sent through a raw socket). */
  port?: number;
}

/** A GRE packet (IP protocol 47), sent through a raw socket. */
interface GreProbe {
  src: string;
  dst: string;
  proto: 'gre';
  port?: undefined;
}

/** The router's own addresses: the server-local destinations (rule-semantics.md §5.4). */
export const SERVER_ADDRESSES = ['10.3.2.1', 'fd00::3:2:1'];
/** Device addresses per side and family: side a holds 10.3.2.2, .4, …; side b 10.3.2.3, .5, … */
export const POOL = 30;

export function deviceAddress(side: Side, index: number, family: 4 | 6): string {
  if (index < 0 || index >= POOL) throw new Error(`no device address ${index} on side ${side}`);
  const last = (side === 'a' ? 2 : 3) + 2 * index;
  return family === 4 ? `10.3.2.${last}` : `fd00::3:2:${last.toString(16)}`;
}

/** The side holding a device address, or null for any other address. */
export function sideOf(address: string): Side | null {
  const parsed = parseIpAddress(address);
  if (!parsed) return null;
  const base = parsed.family === 4 ? 0x0a030200n : 0xfd000000000000000000000300020000n;
  const last = parsed.value - base;
  if (last < 2n || last >= BigInt(2 + 2 * POOL)) return null;
  return last % 2n === 0n ? 'a' : 'b';
}

function key(address: string): string {
  const parsed = parseIpAddress(address);
  if (!parsed) throw new Error(`not an address: ${address}`);
  return `${parsed.family}:${parsed.value}`;
}

/** Why the lab cannot run here, or null. */
export function labUnavailable(): string | null {
  if (process.platform !== 'linux') return `not Linux (${process.platform})`;
  if (process.getuid?.() !== 0) return 'not running as root (network namespaces and nft need it)';
  const tools: [string, string[], string][] = [
    ['nft', ['--version'], 'nftables'],
    ['ip', ['-V'], 'iproute2'],
    ['unshare', ['--version'], 'util-linux'],
  ];
  for (const [command, args, pkg] of tools) {
    const run = spawnSync(command, args, { encoding: 'utf8' });
    if (run.error || run.status !== 0) return `no ${command} on this machine (Debian package ${pkg})`;
  }
  const probe = spawnSync('unshare', ['-n', 'nft', 'list', 'ruleset'], { encoding: 'utf8' });
  if (probe.status !== 0)
    return `cannot run nft in a new network namespace: ${(probe.stderr || String(probe.error)).trim().split('\n')[0]}`;
  return null;
}

/**
 * `nft -f` of a ruleset, then `nft list table inet firezone`, in a network namespace made for
 * that one command (`unshare -n`), never in the suite's own.
 */
export function listInFreshNamespace(ruleset: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('unshare', ['-n', 'sh', '-c', 'nft -f - && nft list table inet firezone'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`nft failed (${code}): ${stderr}`))));
    // A child that exits early (nft refusing the file) closes its stdin: its exit code says why.
    child.stdin.on('error', () => {});
    child.stdin.end(ruleset);
  });
}

/** The namespace the suite runs in, which the lab must never touch. */
function hostNetns(): number {
  return statSync('/proc/self/ns/net').ino;
}

function run(command: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`${command} ${args.join(' ')} failed (${code}): ${stderr}`)),
    );
    child.stdin.on('error', () => {});
    child.stdin.end(input ?? '');
  });
}

/** Waits for every one of the promises, then fails with the first failure: nothing is left running. */
async function settled(promises: readonly Promise<unknown>[]): Promise<void> {
  for (const result of await Promise.allSettled(promises)) if (result.status === 'rejected') throw result.reason;
}

const AGENT = fileURLToPath(new URL('./agent.mjs', import.meta.url));

/** A running agent.mjs inside one namespace: one JSON command a line, one answer a line. */
class Agent {
  #next = 1;
  readonly #waiting = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  readonly ready: Promise<void>;
  #stderr = '';

  constructor(
    readonly role: Role,
    readonly child: ChildProcessWithoutNullStreams,
  ) {
    child.stderr.setEncoding('utf8').on('data', (c: string) => (this.#stderr += c));
    // Writes after the agent exited fail with EPIPE; its exit rejects what is waiting.
    child.stdin.on('error', () => {});
    let started: () => void;
    let failed: (e: Error) => void;
    this.ready = new Promise<void>((resolve, reject) => ((started = resolve), (failed = reject)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const message = JSON.parse(line);
      if (message.ready) return started();
      const waiting = this.#waiting.get(message.id);
      if (!waiting) return;
      this.#waiting.delete(message.id);
      if (message.ok) waiting.resolve(message.result);
      else waiting.reject(new Error(`agent ${role}: ${message.error}`));
    });
    child.on('close', (code) => {
      const error = new Error(`agent ${role} exited (${code}): ${this.#stderr}`);
      failed(error);
      for (const waiting of this.#waiting.values()) waiting.reject(error);
      this.#waiting.clear();
    });
  }

  call(cmd: string, payload: Record<string, unknown> = {}): Promise<any> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      this.child.stdin.write(`${JSON.stringify({ id, cmd, ...payload })}\n`);
    });
  }

  /** A line for the agent's long-running `nft -j -i`: its JSON output lines, or an error with its stderr. */
  async nfti(line: string): Promise<string[]> {
    const result = await this.call('nfti', { line });
    if (result.stderr) throw new Error(`nft (${line}) in namespace ${this.role}: ${result.stderr}`);
    return result.lines;
  }

  /** The probe table's sets, read through `nft -j -i`. */
  async probeSets(): Promise<Map<string, Set<string>>> {
    const result = await this.call('nftlist', { table: 'inet probe' });
    if (result.stderr) throw new Error(`nft (list table inet probe) in namespace ${this.role}: ${result.stderr}`);
    const [json] = result.lines as string[];
    if (!json) throw new Error(`nft listed nothing for the probe table in namespace ${this.role}`);
    return readSets(json);
  }

  /** Runs nft in the agent's namespace; its stdout, or an error with its stderr. */
  async nft(args: string[], stdin?: string): Promise<string> {
    const result = await this.call('nft', { args, stdin });
    if (result.code !== 0) throw new Error(`nft ${args.join(' ')} in namespace ${this.role}: ${result.stderr}`);
    return result.stdout;
  }
}

/** The sets that record probes, with the rules that fill them (`prefix`: in, pre, fwd, loc, at). */
function countingSets(prefix: string): string[] {
  return [
    `\tset ${prefix}_l4_4 { type ipv4_addr . ipv4_addr . inet_proto . inet_service; flags dynamic; size 65535; }`,
    `\tset ${prefix}_l4_6 { type ipv6_addr . ipv6_addr . inet_proto . inet_service; flags dynamic; size 65535; }`,
    `\tset ${prefix}_icmp_4 { type ipv4_addr . ipv4_addr; flags dynamic; size 65535; }`,
    `\tset ${prefix}_icmp_6 { type ipv6_addr . ipv6_addr; flags dynamic; size 65535; }`,
    `\tset ${prefix}_gre_4 { type ipv4_addr . ipv4_addr; flags dynamic; size 65535; }`,
    `\tset ${prefix}_gre_6 { type ipv6_addr . ipv6_addr; flags dynamic; size 65535; }`,
  ];
}

/** Probes carry a source port of 20000 or more (the marker); ICMP probes are port unreachables; GRE is always a probe. */
function countingRules(prefix: string, verdict = ''): string[] {
  const then = verdict ? ` ${verdict}` : '';
  return [
    `\t\tmeta nfproto ipv4 meta l4proto { tcp, udp } th sport >= 20000 add @${prefix}_l4_4 { ip saddr . ip daddr . meta l4proto . th sport }${then}`,
    `\t\tmeta nfproto ipv6 meta l4proto { tcp, udp } th sport >= 20000 add @${prefix}_l4_6 { ip6 saddr . ip6 daddr . meta l4proto . th sport }${then}`,
    `\t\ticmp type destination-unreachable add @${prefix}_icmp_4 { ip saddr . ip daddr }${then}`,
    `\t\ticmpv6 type destination-unreachable add @${prefix}_icmp_6 { ip6 saddr . ip6 daddr }${then}`,
    `\t\tmeta nfproto ipv4 meta l4proto gre add @${prefix}_gre_4 { ip saddr . ip daddr }${then}`,
    `\t\tmeta nfproto ipv6 meta l4proto gre add @${prefix}_gre_6 { ip6 saddr . ip6 daddr }${then}`,
  ];
}

function chain(name: string, hook: string, priority: number, rules: string[]): string[] {
  return [`\tchain ${name} {`, `\t\ttype filter hook ${hook} priority ${priority}; policy accept;`, ...rules, '\t}'];
}

/** What each namespace counts. Probes that reach a device or the router are dropped there unanswered. */
function probeTable(role: Role): string {
  const dropProbes = '\t\tmeta l4proto { tcp, udp } th sport >= 20000 drop\n\t\tmeta l4proto gre drop';
  const lines =
    role === 'r'
      ? [
          ...['in', 'pre', 'fwd', 'inp', 'loc'].flatMap(countingSets),
          ...chain('entering', 'prerouting', -300, countingRules('in')),
          // `inp` sees every probe for the router itself, before a ruleset's input chain may drop it.
          ...chain('reaching_input', 'input', -300, countingRules('inp')),
          // Firezone's forward chain has priority 0: `pre` sees every forwarded probe, `fwd` the accepted ones.
          ...chain('before_firezone', 'forward', -10, countingRules('pre')),
          ...chain('after_firezone', 'forward', 10, countingRules('fwd')),
          ...chain('local', 'input', 0, [...countingRules('loc'), dropProbes]),
        ]
      : role === 't'
        ? [...countingSets('at'), ...chain('arriving', 'prerouting', -300, countingRules('at', 'drop'))]
        : [
            ...countingSets('at'),
            ...chain('arriving', 'prerouting', -300, countingRules('at')),
            ...chain('local', 'input', 0, [dropProbes]),
          ];
  return `table inet probe {\n${lines.join('\n')}\n}\n`;
}

function setNames(role: Role): string[] {
  const prefixes = role === 'r' ? ['in', 'pre', 'fwd', 'inp', 'loc'] : ['at'];
  return prefixes.flatMap((p) => [`${p}_l4_4`, `${p}_l4_6`, `${p}_icmp_4`, `${p}_icmp_6`, `${p}_gre_4`, `${p}_gre_6`]);
}

/** The probe keys in each set of a `nft -j list table inet probe`. */
function readSets(json: string): Map<string, Set<string>> {
  const sets = new Map<string, Set<string>>();
  for (const entry of JSON.parse(json).nftables as any[]) {
    const set = entry.set;
    if (!set) continue;
    const keys = new Set<string>();
    for (const element of (set.elem ?? []) as any[]) {
      const parts: (string | number)[] = element.concat ?? element.elem?.val?.concat;
      if (!parts) throw new Error(`unexpected element in set ${set.name}: ${JSON.stringify(element)}`);
      keys.add(
        parts.length === 2
          ? `${key(String(parts[0]))}|${key(String(parts[1]))}|${set.name.includes('_gre_') ? 'gre' : 'icmp'}`
          : `${key(String(parts[0]))}|${key(String(parts[1]))}|${parts[2]}|${parts[3]}`,
      );
    }
    sets.set(set.name, keys);
  }
  return sets;
}

function union(sets: Map<string, Set<string>>, prefix: string): Set<string> {
  const all = new Set<string>();
  for (const [name, keys] of sets) if (name.startsWith(`${prefix}_`)) for (const k of keys) all.add(k);
  return all;
}

const WAIT_MS = 10_000;
/** Probe keys the sets may hold before they are emptied (each listing grows with them). */
const RECORDED_MAX = 400;

export class Lab {
  readonly #agents = new Map<Role, Agent>();
  #created: string[] = [];
  #sport = 20_000;
  #triggerPort = 10_000;
  /** The keys of the probes sent since the probe sets were made or last emptied (the router's may be fewer). */
  readonly #recorded = new Set<string>();
  readonly #onExit = () => this.#removeNamespacesNow();

  private constructor(readonly names: Record<Role, string>) {}

  /** Makes the namespaces, links, addresses and probe tables, and starts the agents. */
  static async create(): Promise<Lab> {
    const id = `nfk${process.pid.toString(36)}${randomBytes(3).toString('hex')}`;
    const lab = new Lab({ r: `${id}-r`, a: `${id}-a`, b: `${id}-b`, t: `${id}-t` });
    process.once('exit', lab.#onExit);
    try {
      await lab.#setup();
      return lab;
    } catch (error) {
      await lab.close();
      throw error;
    }
  }

  async #setup(): Promise<void> {
    const host = hostNetns();
    await settled(
      ROLES.map(async (role) => {
        await run('ip', ['netns', 'add', this.names[role]]);
        this.#created.push(this.names[role]);
        if (statSync(`/run/netns/${this.names[role]}`).ino === host)
          throw new Error(`namespace ${this.names[role]} is the suite's own: refusing to go on`);
      }),
    );
    // The agents start (and load the probe tables) while the links are made.
    for (const role of ROLES) {
      const child = spawn('ip', ['netns', 'exec', this.names[role], process.execPath, AGENT], {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { ...process.env, NETFORM_LAB_HOST_NETNS: String(host) },
      });
      this.#agents.set(role, new Agent(role, child));
    }
    await settled([
      ...ROLES.map(async (role) => {
        await this.#agent(role).ready;
        await this.#agent(role).nft(['-f', '-'], probeTable(role));
      }),
      this.#links(),
    ]);
  }

  /** The links, addresses, routes and settings of the namespaces. */
  async #links(): Promise<void> {
    const { r, a, b, t } = this.names;
    const sysctl = (role: Role, settings: string[], optional: string[] = []) =>
      run('ip', [
        'netns',
        'exec',
        this.names[role],
        'sh',
        '-ec',
        [
          ...settings.map((s) => `echo ${s.split('=')[1]} > /proc/sys/${s.split('=')[0]}`),
          ...optional.map(
            (s) => `[ ! -w /proc/sys/${s.split('=')[0]} ] || echo ${s.split('=')[1]} > /proc/sys/${s.split('=')[0]}`,
          ),
        ].join('\n'),
      ]);
    // No DAD delays, no router advertisements, no redirects (a device told to reach another one
    // directly would bypass the router), no reverse-path filter.
    const common = [
      'net/ipv6/conf/all/accept_dad=0',
      'net/ipv6/conf/default/accept_dad=0',
      'net/ipv6/conf/all/accept_ra=0',
      'net/ipv6/conf/default/accept_ra=0',
      'net/ipv6/conf/all/accept_redirects=0',
      'net/ipv6/conf/default/accept_redirects=0',
      'net/ipv4/conf/all/accept_redirects=0',
      'net/ipv4/conf/default/accept_redirects=0',
      'net/ipv4/conf/all/send_redirects=0',
      'net/ipv4/conf/default/send_redirects=0',
      'net/ipv4/conf/all/rp_filter=0',
      'net/ipv4/conf/default/rp_filter=0',
    ];
    await Promise.all([
      // The router routes between its bridge ports: with br_netfilter loaded, bridged frames must
      // not run the IP hooks.
      sysctl(
        'r',
        [...common, 'net/ipv4/ip_forward=1', 'net/ipv6/conf/all/forwarding=1'],
        ['net/bridge/bridge-nf-call-iptables=0', 'net/bridge/bridge-nf-call-ip6tables=0'],
      ),
      // Devices answer every trigger with an ICMP error: no rate limits.
      ...(['a', 'b'] as const).map((side) =>
        sysctl(
          side,
          [...common, 'net/ipv4/icmp_ratelimit=0', 'net/ipv6/icmp/ratelimit=0'],
          // Per namespace on recent kernels only.
          ['net/ipv4/icmp_msgs_per_sec=100000', 'net/ipv4/icmp_msgs_burst=100000'],
        ),
      ),
      sysctl('t', [...common, 'net/ipv4/ip_nonlocal_bind=1', 'net/ipv6/ip_nonlocal_bind=1']),
    ]);
    await run(
      'ip',
      ['-n', r, '-batch', '-'],
      [
        'link set lo up',
        'link add name wg-firezone type bridge mcast_snooping 0',
        `link add ra type veth peer name eth0 netns ${a}`,
        `link add rb type veth peer name eth0 netns ${b}`,
        `link add rt type veth peer name eth0 netns ${t}`,
        'link set ra master wg-firezone',
        'link set rb master wg-firezone',
        'link set ra up',
        'link set rb up',
        'link set rt up',
        'link set wg-firezone up',
        'addr add 10.3.2.1/24 dev wg-firezone',
        'addr add fd00::3:2:1/120 dev wg-firezone nodad',
        'addr add fe80::1/64 dev rt nodad',
        'route add default via 169.254.0.2 dev rt onlink',
        'route add default via fe80::2 dev rt',
        '',
      ].join('\n'),
    );
    const side = (name: 'a' | 'b') => {
      const addresses = Array.from({ length: POOL }, (_, i) => [
        `addr add ${deviceAddress(name, i, 4)}/32 dev eth0`,
        `addr add ${deviceAddress(name, i, 6)}/128 dev eth0 nodad`,
      ]).flat();
      return run(
        'ip',
        ['-n', this.names[name], '-batch', '-'],
        [
          'link set lo up',
          'link set eth0 up',
          ...addresses,
          'route add 10.3.2.1 dev eth0',
          'route add default via 10.3.2.1 dev eth0',
          'route add fd00::3:2:1 dev eth0',
          'route add default via fd00::3:2:1 dev eth0',
          '',
        ].join('\n'),
      );
    };
    await settled([
      side('a'),
      side('b'),
      // The destination owns every address (so it can send the ICMP triggers from any of them),
      // except the tunnel networks, which it reaches through the router.
      run(
        'ip',
        ['-n', t, '-batch', '-'],
        [
          'link set lo up',
          'link set eth0 up',
          'addr add 169.254.0.2/32 dev eth0',
          'addr add fe80::2/64 dev eth0 nodad',
          'route add 10.3.2.0/24 via 10.3.2.1 dev eth0 onlink',
          'route add fd00::3:2:0/120 via fe80::1 dev eth0',
          'route add local 0.0.0.0/0 dev lo table local',
          'route add local ::/0 dev lo table local',
          '',
        ].join('\n'),
      ),
      ...(
        [
          ['-4', '10.3.2.0/24'],
          ['-6', 'fd00::3:2:0/120'],
        ] as const
      ).map(([family, tunnel]) =>
        run(
          'ip',
          [family, '-n', t, '-batch', '-'],
          [`rule add pref 100 to ${tunnel} lookup main`, 'rule del pref 0', 'rule add pref 200 lookup local', ''].join(
            '\n',
          ),
        ),
      ),
    ]);
  }

  #agent(role: Role): Agent {
    const agent = this.#agents.get(role);
    if (!agent) throw new Error(`no agent in namespace ${role}`);
    return agent;
  }

  /** Runs nft in the router's namespace (never in the suite's own). */
  routerNft(args: string[], stdin?: string): Promise<string> {
    return this.#agent('r').nft(args, stdin);
  }

  /**
   * Loads a ruleset into the router with `nft -f -`; the same transaction empties the router's
   * probe sets, so that its listings (read again and again while packets go through) stay small.
   */
  async load(ruleset: string): Promise<void> {
    const flush = setNames('r').map((set) => `flush set inet probe ${set}`);
    await this.routerNft(['-f', '-'], `${ruleset}\n${flush.join('\n')}\n`);
  }

  /** Empties the probe sets of every namespace. */
  async #flush(): Promise<void> {
    this.#recorded.clear();
    await Promise.all(
      ROLES.map((role) =>
        this.#agent(role).nfti(
          setNames(role)
            .map((set) => `flush set inet probe ${set}`)
            .join('; '),
        ),
      ),
    );
  }

  /**
   * Sends the probes and says for each whether it arrived at its destination: the router for its
   * own addresses, the device side holding a device address, the destination namespace otherwise.
   */
  async probe(probes: readonly (Probe | GreProbe)[]): Promise<boolean[]> {
    const entries = probes.map((probe) => {
      const source = sideOf(probe.src);
      if (!source) throw new Error(`probe source ${probe.src} is not a device address of the lab`);
      const family = probe.src.includes(':') ? 6 : 4;
      if ((probe.dst.includes(':') ? 6 : 4) !== family)
        throw new Error(`probe ${JSON.stringify(probe)} mixes families`);
      const landing: Role = SERVER_ADDRESSES.some((s) => key(s) === key(probe.dst)) ? 'r' : (sideOf(probe.dst) ?? 't');
      if (landing === source) throw new Error(`probe ${JSON.stringify(probe)} stays on side ${source}`);
      if (probe.proto === 'gre')
        return { probe, source, landing, sport: 0, key: `${key(probe.src)}|${key(probe.dst)}|gre` };
      if (probe.proto !== 'icmp') {
        if (this.#sport > 65_000) this.#sport = 20_000;
        const sport = this.#sport++;
        return { probe, source, landing, sport, key: `${key(probe.src)}|${key(probe.dst)}|${probe.proto}|${sport}` };
      }
      return { probe, source, landing, sport: 0, key: `${key(probe.src)}|${key(probe.dst)}|icmp` };
    });
    const pairKeys = entries.filter((e) => e.probe.proto === 'icmp' || e.probe.proto === 'gre').map((e) => e.key);
    if (new Set(pairKeys).size !== pairKeys.length)
      throw new Error('two ICMP (or two GRE) probes with the same source and destination');

    // The sets hold no key of these probes: what they hold from earlier ones cannot be taken for
    // these. They are emptied when a key would come again (an ICMP or GRE pair, a source port once
    // the ports wrap) or when they grow past RECORDED_MAX keys.
    if (entries.some((e) => this.#recorded.has(e.key)) || this.#recorded.size + entries.length > RECORDED_MAX)
      await this.#flush();
    for (const e of entries) this.#recorded.add(e.key);
    const sends: Promise<unknown>[] = [];
    for (const side of ['a', 'b'] as const) {
      const mine = entries.filter((e) => e.source === side && e.probe.proto !== 'icmp');
      sends.push(
        this.#agent(side).call('send', {
          probes: mine.map((e) => ({
            kind: e.probe.proto,
            src: e.probe.src,
            dst: e.probe.dst,
            port: e.probe.port,
            sport: e.sport,
          })),
        }),
      );
    }
    for (const from of ['r', 't'] as const) {
      const mine = entries.filter((e) => e.probe.proto === 'icmp' && (e.landing === 'r') === (from === 'r'));
      if (mine.length === 0) continue;
      sends.push(
        this.#agent(from).call('trigger', {
          triggers: mine.map((e) => {
            if (this.#triggerPort > 19_999) this.#triggerPort = 10_000;
            return { src: e.probe.dst, dst: e.probe.src, sport: this.#triggerPort++ };
          }),
        }),
      );
    }
    await Promise.all(sends);

    // Every probe through the router: entered it, and reached its forward hook or its input.
    const router = () => this.#agent('r').probeSets();
    const started = Date.now();
    let sets = await router();
    const through = (s: Map<string, Set<string>>) => {
      const entered = union(s, 'in');
      const reached = new Set([...union(s, 'pre'), ...union(s, 'inp'), ...union(s, 'loc')]);
      return entries.filter((e) => !entered.has(e.key) || !reached.has(e.key));
    };
    while (through(sets).length > 0) {
      if (Date.now() - started > WAIT_MS)
        throw new Error(
          `probes never went through the router: ${through(sets)
            .map((e) => JSON.stringify(e.probe))
            .join(', ')}`,
        );
      sets = await router();
    }
    // Once more: the forward hook's later chains ran in the same pass as the earlier ones. The
    // destinations are read meanwhile: a probe that passed the router and is not among what they
    // show yet is read for again below.
    const arrived = new Map<Role, Set<string>>();
    const read = async (role: Role) => {
      const keys = union(await this.#agent(role).probeSets(), 'at');
      arrived.set(role, keys);
    };
    const landings = (['a', 'b', 't'] as const).filter((role) => entries.some((e) => e.landing === role));
    for (const role of ['a', 'b', 't'] as const) arrived.set(role, new Set());
    [sets] = await Promise.all([router(), ...landings.map(read)]);
    const passed = union(sets, 'fwd');
    arrived.set('r', union(sets, 'loc'));
    const missing = () =>
      entries.filter((e) => e.landing !== 'r' && passed.has(e.key) && !arrived.get(e.landing)!.has(e.key));
    while (missing().length > 0) {
      if (Date.now() - started > WAIT_MS)
        throw new Error(
          `probes passed the router but never arrived: ${missing()
            .map((e) => JSON.stringify(e.probe))
            .join(', ')}`,
        );
      await Promise.all([...new Set(missing().map((e) => e.landing))].map(read));
    }
    return entries.map((e) => {
      const there = arrived.get(e.landing)!.has(e.key);
      if (e.landing !== 'r' && there && !passed.has(e.key))
        throw new Error(`probe ${JSON.stringify(e.probe)} arrived without passing the router's forward hook`);
      return there;
    });
  }

  /** Stops the agents and deletes the namespaces (with their links). */
  async close(): Promise<void> {
    process.removeListener('exit', this.#onExit);
    await Promise.all(
      [...this.#agents.values()].map(
        (agent) =>
          new Promise<void>((resolve) => {
            if (agent.child.exitCode !== null || agent.child.signalCode !== null) return resolve();
            agent.child.once('close', () => resolve());
            agent.child.stdin.end();
            setTimeout(() => agent.child.kill('SIGKILL'), 2000).unref();
          }),
      ),
    );
    this.#agents.clear();
    for (const name of this.#created.splice(0)) await run('ip', ['netns', 'del', name]).catch(() => {});
  }

  #removeNamespacesNow(): void {
    for (const agent of this.#agents.values()) if (agent.child.pid) agent.child.kill('SIGKILL');
    for (const name of this.#created.splice(0)) spawnSync('ip', ['netns', 'del', name]);
  }
}
