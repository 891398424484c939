/**
 * The nftables ruleset a Firezone 0.7.36 server installs for a state (`netform nft`), in the
 * syntax of `nft list ruleset`, loadable with `nft -f`. Pure: no I/O.
 *
 * What 0.7.36's fz_wall builds (docs/rule-semantics.md §1–§4, §5.1), read from its
 * source at that tag: one table `inet firezone`; a base chain `forward` (filter hook, priority 0,
 * policy accept); per user a regular chain `user<ID>`, two source sets of its devices' tunnel
 * addresses and one jump rule per family at the head of `forward`; per scope (global, each user)
 * the destination sets `ip_drop`, `ip_accept`, `ip6_drop`, `ip6_accept` and, when the kernel
 * supports port rules, the same with `_layer4` (address . protocol . port), each with one filter
 * rule. Every rule is inserted at the head of its chain, so a chain lists them in the reverse of
 * the order they were added. The `postrouting` NAT chain is left out.
 *
 * Text follows nft 1.0.6's listing: interval sets list their elements in address order (two IPv4
 * ones a line, one IPv6 a line); the `_layer4` sets list theirs in the order they were added, which
 * on a server depends on its rules' history (here: address order, then protocol and port).
 */
import { createHash } from 'node:crypto';
import { isUuid } from '../model/fields.js';
import { inertText } from '../model/inert.js';
import { userKey } from '../model/keys.js';
import { formatAddress, parseCidrOrAddress, parseIpAddress, type IpFamily } from '../model/net.js';
import { parsePortRange } from '../model/ports.js';
import type { DesiredState, LiveState } from '../model/state.js';
import { PORT_TYPES, RULE_ACTIONS, type PortType, type RuleAction } from '../model/types.js';

export const DEFAULT_WG_INTERFACE = 'wg-firezone';
export const TABLE = 'inet firezone';

/** A user as fz_wall sees it: an id (its chain and sets are named after it) and its devices' addresses. */
export interface NftUser {
  /** The user's id on the server (`--live`), or a UUID-shaped hash of the email (from files). */
  id: string;
  email: string;
  ipv4: string[];
  ipv6: string[];
  /** Comments on devices left out of the source sets, per family. */
  leftOut: { 4: string[]; 6: string[] };
}

export interface NftRule {
  /** The owner's NftUser id; null for a global rule. */
  user: string | null;
  action: RuleAction;
  destination: string;
  port_type: PortType | null;
  port_range: string | null;
}

export interface NftState {
  users: NftUser[];
  rules: NftRule[];
  /** The server's kernel supports port rules (`settings.port_rules`, default true). */
  portRules: boolean;
  /** The WireGuard interface's name (the server's `WIREGUARD_INTERFACE_NAME`). */
  wgInterface: string;
  /** Lines said in the header (where the state comes from, what is left out). */
  notes: string[];
}

/**
 * A problem with the interface name, or null. Linux's rules (dev_valid_name): 1 to 15 bytes, no
 * `/`, `:` or white space, not `.` or `..`. And what nft would read as more than a name: `*` (a
 * wildcard at the end of `iifname "…"`), `\\` and `"` (they end or escape the quoted string).
 * Control, invisible and separator characters are refused too: the name is printed.
 */
export function interfaceNameProblem(name: string): string | null {
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes < 1 || bytes > 15 || /[\s\p{C}\p{Z}]/u.test(name))
    return 'must be 1 to 15 bytes of printable characters without spaces';
  if (/[/:"\\*]/.test(name) || name === '.' || name === '..') return 'must not contain / : " \\ or *, nor be . or ..';
  return null;
}

/** A server value that cannot be written into a ruleset: the message names the object and the value. */
export class NftStateError extends Error {
  override readonly name = 'NftStateError';
}

/** A value from a server, quoted and made inert, for a message. */
function shown(value: unknown): string {
  return inertText(JSON.stringify(value) ?? String(value)).slice(0, 200);
}

/**
 * Checks every server value a ruleset renders, so that none becomes ruleset text: user ids are
 * UUIDs (set and chain names are made of them), device addresses are addresses of their family,
 * rules have an action and a port type from a closed set, a destination and a port range that
 * parse, and an owner that is a UUID. Throws NftStateError for the first value that is not.
 */
function checkLiveForRuleset(live: LiveState): void {
  const fail = (what: string, field: string, value: unknown, expected: string): never => {
    throw new NftStateError(
      `the server's ${what} has ${field} ${shown(value)}, not ${expected}: no ruleset is written from a state with such a value`,
    );
  };
  for (const user of live.users) if (!isUuid(user.id)) fail(`user ${shown(user.email)}`, 'the id', user.id, 'a UUID');
  for (const device of live.devices) {
    for (const family of [4, 6] as const) {
      const value = family === 4 ? device.ipv4 : device.ipv6;
      if (value === null || value === undefined || value === '') continue;
      if (parseIpAddress(String(value))?.family !== family)
        fail(`device ${shown(device.id)}`, `ipv${family}`, value, `an IPv${family} address`);
    }
  }
  for (const rule of live.rules) {
    const what = `rule ${shown(rule.id)}`;
    if (!(RULE_ACTIONS as readonly unknown[]).includes(rule.action))
      fail(what, 'action', rule.action, RULE_ACTIONS.join(' or '));
    if (rule.port_type !== null && !(PORT_TYPES as readonly unknown[]).includes(rule.port_type))
      fail(what, 'port_type', rule.port_type, `${PORT_TYPES.join(' or ')} (or none)`);
    if (typeof rule.destination !== 'string' || parseCidrOrAddress(rule.destination) === null)
      fail(what, 'destination', rule.destination, 'an IP address or CIDR block');
    if (rule.port_range !== null && !parsePortRange(rule.port_range).ok)
      fail(what, 'port_range', rule.port_range, 'a port range such as 80 or 80 - 443');
    if (rule.user_id !== null && !isUuid(rule.user_id)) fail(what, 'user_id', rule.user_id, 'a UUID (or none)');
  }
}

/** The id a user's chain is named after when it comes from files: a UUID-shaped hash of the email. */
export function fileUserId(email: string): string {
  const hex = createHash('sha256').update(userKey(email)).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/**
 * A live server's ruleset: every user (disabled ones too: the firewall keeps them, §5.2), every
 * device address, every rule; without port-rule support the rules with ports are left out (§5.1.2).
 */
export function nftStateOfLive(
  live: LiveState,
  options: { portRules?: boolean; wgInterface?: string; server?: string } = {},
): NftState {
  checkLiveForRuleset(live);
  const portRules = options.portRules ?? true;
  const users = new Map<string, NftUser>();
  for (const user of live.users)
    users.set(user.id, { id: user.id, email: user.email, ipv4: [], ipv6: [], leftOut: { 4: [], 6: [] } });
  for (const device of live.devices) {
    const user = users.get(device.user_id);
    if (!user) continue;
    if (device.ipv4) user.ipv4.push(device.ipv4);
    if (device.ipv6) user.ipv6.push(device.ipv6);
  }
  const rules: NftRule[] = [];
  let leftOut = 0;
  for (const rule of live.rules) {
    if (rule.port_type !== null && !portRules) {
      leftOut++;
      continue;
    }
    rules.push({
      user: rule.user_id,
      action: rule.action,
      destination: rule.destination,
      port_type: rule.port_type,
      port_range: rule.port_range,
    });
  }
  const notes = [`the users, devices and rules of ${options.server ?? 'the server'}`];
  if (leftOut > 0)
    notes.push(
      `settings.port_rules is false: ${leftOut} rule${leftOut === 1 ? '' : 's'} with ports left out (0.7.36 does not load them on such a kernel)`,
    );
  return {
    users: [...users.values()],
    rules,
    portRules,
    wgInterface: options.wgInterface ?? DEFAULT_WG_INTERFACE,
    notes,
  };
}

/**
 * The ruleset the declared state gives once applied: user chains named from a hash of the email
 * (the server's ids are not known), devices without a pinned address left out with a comment, and
 * rules with ports stored without them when `settings.port_rules` is false (§5.1.1).
 */
export function nftStateOfDesired(
  desired: DesiredState,
  options: { wgInterface?: string; files?: string } = {},
): NftState {
  const portRules = desired.settings.port_rules !== false;
  const users: NftUser[] = [];
  const rules: NftRule[] = [];
  let portless = 0;
  const add = (user: string | null, rule: DesiredState['rules'][number]) => {
    const stripped = !portRules && rule.port_type !== null;
    if (stripped) portless++;
    rules.push({
      user,
      action: rule.action,
      destination: rule.destination,
      port_type: stripped ? null : rule.port_type,
      port_range: stripped ? null : rule.port_range,
    });
  };
  for (const user of desired.users) {
    const id = fileUserId(user.email);
    const entry: NftUser = { id, email: user.email, ipv4: [], ipv6: [], leftOut: { 4: [], 6: [] } };
    for (const device of user.devices) {
      for (const family of [4, 6] as const) {
        const value = device.fields[family === 4 ? 'ipv4' : 'ipv6'];
        if (typeof value === 'string' && value !== '') (family === 4 ? entry.ipv4 : entry.ipv6).push(value);
        else
          entry.leftOut[family].push(
            `${user.email}/${device.name}: no pinned IPv${family} address (the server assigns one), left out`,
          );
      }
    }
    users.push(entry);
    for (const rule of user.rules) add(id, rule);
  }
  for (const rule of desired.rules) add(null, rule);
  const notes = [
    `the users, devices and rules declared in ${options.files ?? 'the desired state'}, once applied`,
    "user chains are named from a hash of the email (user ids are the server's); use --live for the exact ruleset",
  ];
  if (portless > 0)
    notes.push(
      `settings.port_rules is false: ${portless} rule${portless === 1 ? '' : 's'} with ports stored without them, as 0.7.36 does on such a kernel`,
    );
  return { users, rules, portRules, wgInterface: options.wgInterface ?? DEFAULT_WG_INTERFACE, notes };
}

// ---------------------------------------------------------------------------------------------
// Rendering

type Family = 'ip' | 'ip6';
const FAMILIES: readonly Family[] = ['ip', 'ip6'];
/** fz_wall's order of (family, action) pairs for the filter sets. */
const FILTER_ORDER: readonly [Family, RuleAction][] = [
  ['ip', 'drop'],
  ['ip', 'accept'],
  ['ip6', 'drop'],
  ['ip6', 'accept'],
];

/** An address as nft prints it (glibc's inet_ntop: `::ffff:1.2.3.4`, no `::` for one zero group). */
export function nftAddress(family: IpFamily, value: bigint): string {
  if (family === 4) return formatAddress(4, value);
  const words: number[] = [];
  for (let i = 7; i >= 0; i--) words.push(Number((value >> BigInt(i * 16)) & 0xffffn));
  // The longest run of zero words (the first of equal ones), compressed when at least two long.
  let best = { base: -1, len: 0 };
  let current = { base: -1, len: 0 };
  words.forEach((word, i) => {
    if (word === 0) {
      current = current.base === -1 ? { base: i, len: 1 } : { base: current.base, len: current.len + 1 };
      if (current.len > best.len) best = current;
    } else current = { base: -1, len: 0 };
  });
  if (best.len < 2) best = { base: -1, len: 0 };
  let text = '';
  for (let i = 0; i < 8; i++) {
    if (best.base !== -1 && i >= best.base && i < best.base + best.len) {
      if (i === best.base) text += ':';
      continue;
    }
    if (i !== 0) text += ':';
    if (i === 6 && best.base === 0 && (best.len === 6 || (best.len === 5 && words[5] === 0xffff))) {
      text += formatAddress(4, value & 0xffffffffn);
      return text;
    }
    text += words[i]!.toString(16);
  }
  if (best.base !== -1 && best.base + best.len === 8) text += ':';
  return text;
}

interface Block {
  family: IpFamily;
  start: bigint;
  end: bigint;
  text: string;
}

/** A destination as fz_wall writes it into a set: the block's network address, a host without prefix. */
function blockOf(destination: string): Block | null {
  const cidr = parseCidrOrAddress(destination);
  if (!cidr) return null;
  const bits = cidr.family === 4 ? 32 : 128;
  const address = nftAddress(cidr.family, cidr.start);
  return {
    family: cidr.family,
    start: cidr.start,
    end: cidr.end,
    text: cidr.prefix === bits ? address : `${address}/${cidr.prefix}`,
  };
}

interface Element {
  block: Block;
  /** Layer-4 elements only. */
  proto?: PortType;
  low?: number;
  high?: number;
  text: string;
  /** The comment said when the element is left out. */
  what: string;
}

function compareBigint(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareElements(a: Element, b: Element): number {
  return (
    compareBigint(a.block.start, b.block.start) ||
    compareBigint(b.block.end, a.block.end) ||
    (a.proto ?? '').localeCompare(b.proto ?? '') ||
    (a.low ?? 0) - (b.low ?? 0)
  );
}

function overlaps(a: Element, b: Element): boolean {
  if (a.block.start > b.block.end || b.block.start > a.block.end) return false;
  if (a.proto === undefined) return true;
  return a.proto === b.proto && a.low! <= b.high! && b.low! <= a.high!;
}

/**
 * The elements in the order nft lists them (interval sets by address; `_layer4` sets as added,
 * here the same order), without those that overlap an earlier one: the server's overlap rule
 * keeps such rules out (docs/rule-semantics.md §5.7) and nft refuses them, so they are said in a comment instead.
 */
function withoutOverlaps(contents: SetContents): SetContents {
  const sorted = [...contents.elements].sort(compareElements);
  const kept: Element[] = [];
  const comments = [...contents.comments];
  // Kept elements whose block may still meet a later one (sorted by start, so pruned by end).
  let active: Element[] = [];
  for (const element of sorted) {
    active = active.filter((e) => e.block.end >= element.block.start);
    const clash = active.find((e) => overlaps(e, element));
    if (clash) comments.push(`left out: ${element.what} overlaps ${clash.what} (the server refuses it)`);
    else {
      kept.push(element);
      active.push(element);
    }
  }
  return { elements: kept, comments };
}

/** One named set: its elements, and comments on what is left out of it. */
interface SetContents {
  elements: Element[];
  comments: string[];
}

function setName(user: string | null, family: Family, action: RuleAction, layer4: boolean): string {
  return `${user === null ? '' : `user${user}_`}${family}_${action}${layer4 ? '_layer4' : ''}`;
}

function setType(family: Family, layer4: boolean): string {
  const address = family === 'ip' ? 'ipv4_addr' : 'ipv6_addr';
  return layer4 ? `${address} . inet_proto . inet_service` : address;
}

/** `elements = { … }` as nft lists it: IPv4 addresses two a line, anything else one a line. */
function elementLines(texts: string[], pairs: boolean): string[] {
  if (texts.length === 0) return [];
  const lines: string[] = [];
  const perLine = pairs ? 2 : 1;
  for (let i = 0; i < texts.length; i += perLine) lines.push(texts.slice(i, i + perLine).join(', '));
  return lines.map((line, i) => {
    const head = i === 0 ? '\t\telements = { ' : '\t\t\t     ';
    const tail = i === lines.length - 1 ? ' }' : ',';
    return `${head}${line}${tail}`;
  });
}

function setBlock(name: string, type: string, contents: SetContents, pairs: boolean): string[] {
  return [
    `\tset ${name} {`,
    `\t\ttype ${type}`,
    '\t\tflags interval',
    ...contents.comments.map((c) => `\t\t# ${nftComment(c)}`),
    ...elementLines(
      contents.elements.map((e) => e.text),
      pairs,
    ),
    '\t}',
  ];
}

function filterRule(name: string, family: Family, action: RuleAction, layer4: boolean, wg: string): string {
  const match = layer4 ? `${family} daddr . meta l4proto . th dport` : `${family} daddr`;
  return `\t\t${match} @${name} iifname "${wg}" ${action}`;
}

/** The filter sets of one scope in fz_wall's order: portless first, then (with port rules) `_layer4`. */
function filterSpecs(portRules: boolean): { family: Family; action: RuleAction; layer4: boolean }[] {
  const layers = portRules ? [false, true] : [false];
  return layers.flatMap((layer4) => FILTER_ORDER.map(([family, action]) => ({ family, action, layer4 })));
}

/**
 * Text for a `#` comment: inert like every other output (each control, separator, bidi and
 * zero-width character as a `\\uXXXX` escape, src/model/inert.ts), so that no line break ends the
 * comment and no escape sequence reaches a terminal the ruleset is printed to.
 */
function nftComment(text: string): string {
  return inertText(text);
}

/** The ruleset as `nft -f` loads it: a header, the guard that replaces only `inet firezone`, the table. */
export function renderRuleset(state: NftState): string {
  const problem = interfaceNameProblem(state.wgInterface);
  if (problem) throw new Error(`the WireGuard interface name "${state.wgInterface}" ${problem}`);
  const wg = state.wgInterface;
  // Names and elements are made of ids, actions and port types: each from its closed set only
  // (nftStateOfLive names the object; this is the last guard for any other state).
  for (const user of state.users)
    if (!isUuid(user.id)) throw new NftStateError(`the user id ${shown(user.id)} is not a UUID`);
  for (const rule of state.rules)
    if (
      !(RULE_ACTIONS as readonly unknown[]).includes(rule.action) ||
      (rule.port_type !== null && !(PORT_TYPES as readonly unknown[]).includes(rule.port_type))
    )
      throw new NftStateError(
        `the rule ${shown(rule.action)} ${shown(rule.port_type)} has no such action or port type`,
      );
  const specs = filterSpecs(state.portRules);
  // Sets: by scope (null = global), then by name.
  const sets = new Map<string, SetContents>();
  const scopes: (string | null)[] = [
    null,
    ...[...state.users].sort((a, b) => compareText(a.id, b.id)).map((u) => u.id),
  ];
  for (const scope of scopes)
    for (const spec of specs)
      sets.set(setName(scope, spec.family, spec.action, spec.layer4), { elements: [], comments: [] });
  const userIds = new Set(state.users.map((u) => u.id));
  const notes = [...state.notes];
  for (const rule of state.rules) {
    const block = blockOf(rule.destination);
    const described = `${rule.action} ${rule.destination}${rule.port_type ? ` ${rule.port_type} ${rule.port_range ?? ''}` : ''}`;
    if (!block) {
      notes.push(`left out: ${described}: not an address or block`);
      continue;
    }
    if (rule.user !== null && !userIds.has(rule.user)) {
      notes.push(`left out: ${described}: its user ${rule.user} is not known`);
      continue;
    }
    const family: Family = block.family === 4 ? 'ip' : 'ip6';
    const layer4 = rule.port_type !== null;
    let element: Element;
    if (layer4) {
      const parsed = parsePortRange(rule.port_range);
      if (!parsed.ok) {
        notes.push(`left out: ${described}: its port range ${parsed.message}`);
        continue;
      }
      const { low, high } = parsed.range;
      const ports = low === high ? `${low}` : `${low}-${high}`;
      element = {
        block,
        proto: rule.port_type!,
        low,
        high,
        text: `${block.text} . ${rule.port_type} . ${ports}`,
        what: described,
      };
    } else element = { block, text: block.text, what: described };
    sets.get(setName(rule.user, family, rule.action, layer4))!.elements.push(element);
  }
  const users = [...state.users].sort((a, b) => compareText(a.id, b.id));
  const blocks: string[][] = [];
  const filterSets = (scope: string | null) =>
    specs.map((spec) => {
      const name = setName(scope, spec.family, spec.action, spec.layer4);
      const contents = withoutOverlaps(sets.get(name)!);
      return setBlock(name, setType(spec.family, spec.layer4), contents, spec.family === 'ip' && !spec.layer4);
    });
  blocks.push(...filterSets(null));
  for (const user of users) {
    for (const family of FAMILIES) {
      const fam: IpFamily = family === 'ip' ? 4 : 6;
      const addresses = (fam === 4 ? user.ipv4 : user.ipv6)
        .map((text) => parseIpAddress(text))
        .filter((a): a is NonNullable<typeof a> => a !== null && a.family === fam)
        .sort((a, b) => compareBigint(a.value, b.value));
      const unique = addresses.filter((a, i) => i === 0 || addresses[i - 1]!.value !== a.value);
      const comments = [...(family === 'ip' ? [user.email] : []), ...user.leftOut[fam]].map(nftComment);
      const block = setBlock(
        `user${user.id}_${family}_devices`,
        setType(family, false),
        {
          elements: unique.map((a) => ({
            block: { family: fam, start: a.value, end: a.value, text: nftAddress(fam, a.value) },
            text: nftAddress(fam, a.value),
            what: '',
          })),
          comments,
        },
        family === 'ip',
      );
      blocks.push(block);
    }
    blocks.push(...filterSets(user.id));
  }
  // forward: the jump rules (the last user added first, ip6 above ip), then the global filter rules.
  const forward = ['\tchain forward {', '\t\ttype filter hook forward priority filter; policy accept;'];
  for (const user of [...users].reverse())
    for (const family of [...FAMILIES].reverse())
      forward.push(`\t\t${family} saddr @user${user.id}_${family}_devices jump user${user.id}`);
  const filterRules = (scope: string | null) =>
    [...specs]
      .reverse()
      .map((spec) =>
        filterRule(setName(scope, spec.family, spec.action, spec.layer4), spec.family, spec.action, spec.layer4, wg),
      );
  forward.push(...filterRules(null), '\t}');
  blocks.push(forward);
  for (const user of users) blocks.push([`\tchain user${user.id} {`, ...filterRules(user.id), '\t}']);

  const header = [
    `# The nftables ruleset a Firezone 0.7.36 server installs (netform nft) for ${nftComment(notes[0] ?? 'this state')}.`,
    ...notes.slice(1).map((n) => `# ${nftComment(n)}.`),
    `# WireGuard interface: ${wg}. Not rendered: the postrouting (NAT) chain 0.7.36 also keeps in this table.`,
    '# `nft -f` replaces table inet firezone only (the next two lines make sure it exists, then delete it).',
  ];
  const body = blocks.map((b) => b.join('\n')).join('\n\n');
  return `${header.join('\n')}\ntable ${TABLE}\ndelete table ${TABLE}\ntable ${TABLE} {\n${body}\n}\n`;
}

/** Byte order, as Erlang sorts the user ids fz_wall receives. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
