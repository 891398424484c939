/**
 * The periodic access review (`netform review`): what a quarterly access review or an audit asks
 * for, as data. A pure function of the live state, the optional desired state (rule locations,
 * tests, evaluator settings), whether the server records telemetry, and `now`. No I/O, no clock.
 *
 * What users reach is exact: where each of a user's own rules decides, then where each global
 * rule decides for everyone (address blocks × protocols × port ranges, src/review/decisions.ts),
 * and whether any packet is left to the default accept of 0.7.36.
 */
import type { ReviewExpiries } from './expiries.js';
import type { AccessBlock } from '../access/changes.js';
import {
  accessModelOfLive,
  accessSettingsOf,
  compileRule,
  defaultAccessSettings,
  describeRule,
  findShadowedRulesOfModel,
  runAccessTests,
  STAGES,
  type AccessModel,
  type AccessRule,
  type CompiledRule,
  type TestResult,
} from '../access/index.js';
import { ruleKey, userKey } from '../model/keys.js';
import type { IpFamily } from '../model/net.js';
import type { DesiredState, LiveState, SourceLocation } from '../model/state.js';
import type { PortType, Role, RuleAction } from '../model/types.js';
import { decisionMap, inEvaluationOrder, type DecisionMap, type RuleDecisions } from './decisions.js';

export const DEFAULT_STALE_DAYS = 90;
const DAY_MS = 86_400_000;

/**
 * Whether the server records tunnel handshakes and web sign-ins. A real Firezone server does
 * (its WireGuard interface and its portal write them); netform's bundled server has neither, so
 * its `latest_handshake` and `last_signed_in_at` are null whatever happened.
 */
export interface TelemetrySupport {
  handshakes: boolean;
  signIns: boolean;
}

/**
 * How a review tells "never" from "unknown": a field is recorded when any row has ever had a
 * value in it (so something writes it), and otherwise when the server is not netform's own (a real
 * Firezone server writes both; all null there means never). `ownServer`: the server is netform's
 * bundled one (`--embedded`, or a URL whose /v0/openapi.json is netform's document).
 */
export function telemetrySupport(live: LiveState, ownServer: boolean): TelemetrySupport {
  return {
    handshakes: !ownServer || live.devices.some((d) => d.latest_handshake !== null),
    signIns: !ownServer || live.users.some((u) => u.last_signed_in_at !== null),
  };
}

export interface ReviewInput {
  live: LiveState;
  /** The desired state (`-f`): rule locations, access tests, settings.port_rules and server_addresses. */
  desired?: DesiredState;
  telemetry: TelemetrySupport;
  now: Date;
  /** Devices with no handshake in this many days are listed (default 90). */
  staleDays?: number;
  /** The server's URL, for the header (never a token). */
  server?: string;
  /**
   * The model the access tests run on instead of the live server's: the state after apply
   * (`review --after-apply`, src/access/after-apply.ts: the repository's users).
   */
  testsAfterApply?: AccessModel;
}

export interface ReviewRule {
  /** The rule's server id. */
  id: string;
  /** Owner's email, or null for a global rule. */
  user: string | null;
  action: RuleAction;
  destination: string;
  port_type: PortType | null;
  port_range: string | null;
  /** `file:line` of its declaration, with `-f`. */
  at?: string;
}

export interface ReachEntry {
  verdict: RuleAction;
  rule: ReviewRule;
  /** Exactly the packets this rule decides (it is their first match). */
  blocks: AccessBlock[];
}

export interface ReviewDevice {
  name: string;
  ipv4: string | null;
  ipv6: string | null;
  inserted_at: string;
  latest_handshake: string | null;
  /** The handshake as read: its timestamp, `never`, or `unknown` (the server records none). */
  handshake: string;
  /** No handshake within the stale period (a device younger than it, never connected, is not stale). */
  stale: boolean;
}

export interface ReviewUser {
  email: string;
  role: Role;
  inserted_at: string;
  disabled_at: string | null;
  last_signed_in_at: string | null;
  /** The sign-in as read: its timestamp, `never`, or `unknown` (the server records none). */
  signed_in: string;
  devices: ReviewDevice[];
  /** Why the user's devices reach nothing (disabled, no device), or null. */
  no_tunnel: string | null;
  /** The address families some device of the user has an address in: it reaches nothing in the others. */
  address_families: ('ipv4' | 'ipv6')[];
  /** Devices without an address of a family the user's other devices have. */
  partial_devices: string[];
  /** Where the user's own rules decide (they are evaluated before the global rules). */
  own_rules: ReachEntry[];
}

export type FindingKind =
  'stale_device' | 'never_signed_in' | 'no_devices' | 'shadowed_rule' | 'accept_rule_grants_nothing';

export interface Finding {
  kind: FindingKind;
  /** A user's email, `email/device`, or a rule's description. */
  subject: string;
  /** The user (email) and device (name) it is about, when it is about one. */
  user?: string;
  device?: string;
  evidence: string;
  /** The date the evidence rests on (a handshake, a creation), or null. */
  date: string | null;
  rule?: ReviewRule;
}

export interface ReviewReport {
  generated_at: string;
  server: string | null;
  stale_days: number;
  telemetry: { handshakes: 'recorded' | 'not recorded'; sign_ins: 'recorded' | 'not recorded' };
  settings: { port_rules: boolean; server_addresses: string[] };
  counts: { users: number; admins: number; devices: number; rules: number };
  /** What every user reaches where none of its own rules matches. */
  everyone: {
    rules: ReachEntry[];
    /** Families in which some packet matches no global rule: 0.7.36 accepts it (its chain policy). */
    default_accept: ('ipv4' | 'ipv6')[];
  };
  /** Admins first, then by email. */
  users: ReviewUser[];
  findings: Record<FindingKind, Finding[]>;
  /** The desired state's access tests, run against the live server (with `-f`). */
  tests?: {
    /** The state they ran on: the server as it is, or as apply would leave it (`--after-apply`). */
    evaluated: 'live' | 'after-apply';
    passed: number;
    failed: number;
    /** Each test's result as data: its line of text is the view's (views/access.ts testLine). */
    results: { name: string; at?: string; pass: boolean; result: TestResult }[];
  };
  /** With `-f`: expired grants still on the server, and grants expiring soon (src/review/expiries.ts). */
  expiries?: ReviewExpiries;
}

const familyName = (family: IpFamily) => (family === 4 ? 'ipv4' : 'ipv6');

function parseTime(text: string | null): number | null {
  if (text === null) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}

function daysBetween(later: number, earlier: number): number {
  return Math.floor((later - earlier) / DAY_MS);
}

function at(source: SourceLocation | undefined): string | undefined {
  return source ? `${source.file}:${source.line}` : undefined;
}

/** The declared location of each rule, by natural key (first declaration of a key wins). */
function declaredLocations(desired: DesiredState): Map<string, SourceLocation> {
  const found = new Map<string, SourceLocation>();
  const add = (ownerEmail: string | null, rule: DesiredState['rules'][number]) => {
    if (!rule.source) return;
    const key = ruleKey({ ownerEmail, ...rule });
    if (!found.has(key)) found.set(key, rule.source);
  };
  for (const user of desired.users) for (const rule of user.rules) add(user.email, rule);
  for (const rule of desired.rules) add(null, rule);
  return found;
}

export function buildReview(input: ReviewInput): ReviewReport {
  const { live, desired, telemetry } = input;
  const nowMs = input.now.getTime();
  const staleDays = input.staleDays ?? DEFAULT_STALE_DAYS;
  const cutoff = nowMs - staleDays * DAY_MS;
  const settings = desired ? accessSettingsOf(desired) : defaultAccessSettings();
  const model = accessModelOfLive(live, settings);

  // Rule locations from the files, and each access rule's server row.
  const locations = desired ? declaredLocations(desired) : new Map<string, SourceLocation>();
  const emailOfId = new Map(live.users.map((u) => [u.id, u.email]));
  const reviewRuleOf = new Map<AccessRule, ReviewRule>();
  const rowOf = new Map<AccessRule, LiveState['rules'][number]>();
  model.rules.forEach((rule, i) => {
    const row = live.rules[i]!;
    rowOf.set(rule, row);
    const ownerEmail = row.user_id === null ? null : (emailOfId.get(row.user_id) ?? null);
    const source = locations.get(ruleKey({ ownerEmail, ...row }));
    if (source) rule.source = source;
    reviewRuleOf.set(rule, {
      id: row.id,
      user: ownerEmail ?? (row.user_id === null ? null : `#${row.user_id}`),
      action: row.action,
      destination: row.destination,
      port_type: row.port_type,
      port_range: row.port_range,
      ...(source ? { at: at(source) } : {}),
    });
  });
  const entry = (d: RuleDecisions): ReachEntry => ({
    verdict: d.rule.rule.action,
    rule: reviewRuleOf.get(d.rule.rule)!,
    blocks: d.blocks,
  });

  // The rules the evaluator keeps (port rules are ignored when port_rules is false), by scope.
  const byOwner = new Map<string | null, CompiledRule[]>();
  for (const rule of model.rules) {
    const compiled = compileRule(rule);
    if (!compiled || (compiled.portType !== null && !settings.portRules)) continue;
    let list = byOwner.get(rule.owner);
    if (!list) byOwner.set(rule.owner, (list = []));
    list.push(compiled);
  }
  const maps = new Map<string | null, DecisionMap>();
  for (const [owner, rules] of byOwner) maps.set(owner, decisionMap(rules));
  const everyoneMap = maps.get(null) ?? decisionMap([]);
  const defaultAccept = ([4, 6] as IpFamily[]).filter((f) => everyoneMap.unmatched[f]).map(familyName);

  const findings: Record<FindingKind, Finding[]> = {
    stale_device: [],
    never_signed_in: [],
    no_devices: [],
    shadowed_rule: [],
    accept_rule_grants_nothing: [],
  };

  const devicesOf = new Map<string, LiveState['devices']>();
  for (const device of live.devices) {
    let list = devicesOf.get(device.user_id);
    if (!list) devicesOf.set(device.user_id, (list = []));
    list.push(device);
  }

  const users: ReviewUser[] = [];
  // Admins first, then by email (in normal form, computed once per user).
  const ordered = live.users
    .map((user) => ({ user, rank: user.role === 'admin' ? 0 : 1, key: userKey(user.email) }))
    .sort((a, b) => a.rank - b.rank || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((x) => x.user);
  for (const user of ordered) {
    const key = userKey(user.email);
    // By name, so that the review reads the same whatever order the server lists devices in.
    const rows = [...(devicesOf.get(user.id) ?? [])].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const devices: ReviewDevice[] = rows.map((d) => {
      const seen = parseTime(d.latest_handshake);
      const created = parseTime(d.inserted_at);
      const stale = telemetry.handshakes && (seen !== null ? seen < cutoff : created !== null && created < cutoff);
      const handshake = d.latest_handshake ?? (telemetry.handshakes ? 'never' : 'unknown');
      if (stale) {
        findings.stale_device.push({
          kind: 'stale_device',
          subject: `${user.email}/${d.name}`,
          user: user.email,
          device: d.name,
          evidence:
            seen !== null
              ? `last handshake ${d.latest_handshake} (${daysBetween(nowMs, seen)} days ago)`
              : `no handshake ever; created ${d.inserted_at} (${created === null ? '?' : daysBetween(nowMs, created)} days ago)`,
          date: d.latest_handshake ?? d.inserted_at,
        });
      }
      return {
        name: d.name,
        ipv4: d.ipv4,
        ipv6: d.ipv6,
        inserted_at: d.inserted_at,
        latest_handshake: d.latest_handshake,
        handshake,
        stale,
      };
    });
    if (telemetry.signIns && user.last_signed_in_at === null) {
      findings.never_signed_in.push({
        kind: 'never_signed_in',
        subject: user.email,
        user: user.email,
        evidence: `last_signed_in_at is null; user created ${user.inserted_at}`,
        date: user.inserted_at,
      });
    }
    if (devices.length === 0) {
      findings.no_devices.push({
        kind: 'no_devices',
        subject: user.email,
        user: user.email,
        evidence: `no device; user created ${user.inserted_at}`,
        date: user.inserted_at,
      });
    }
    const families = ([4, 6] as IpFamily[]).filter((f) => rows.some((d) => (f === 4 ? d.ipv4 : d.ipv6)));
    const partial = rows
      .filter((d) => families.some((f) => !(f === 4 ? d.ipv4 : d.ipv6)))
      .map((d) => `${d.name} (no ${d.ipv4 ? 'IPv6' : 'IPv4'} address)`);
    const noTunnel = user.disabled_at
      ? `disabled since ${user.disabled_at}: its devices have no WireGuard peer`
      : rows.length === 0
        ? 'no device: no tunnel (its rules apply to a device it adds)'
        : families.length === 0
          ? 'no device has a tunnel address'
          : null;
    users.push({
      email: user.email,
      role: user.role,
      inserted_at: user.inserted_at,
      disabled_at: user.disabled_at,
      last_signed_in_at: user.last_signed_in_at,
      signed_in: user.last_signed_in_at ?? (telemetry.signIns ? 'never' : 'unknown'),
      devices,
      no_tunnel: noTunnel,
      address_families: families.map(familyName),
      partial_devices: partial,
      own_rules: (maps.get(key)?.deciding ?? []).map(entry),
    });
  }

  // Shadowed rules, and accept rules that grant nothing.
  const userByKey = new Map(live.users.map((u) => [userKey(u.email), u]));
  for (const { rule, by } of findShadowedRulesOfModel(model)) {
    const names = by
      .slice(0, 3)
      .map((e) => `${describeRule(e.rule)} at ${locationText(reviewRuleOf.get(e.rule)!)} (${STAGES[e.stage]})`);
    const more = by.length > 3 ? ` and ${by.length - 3} more` : '';
    const evidence =
      `never decides anything: ${names.join(', ')}${more} ${by.length === 1 ? 'matches' : 'match'} every packet it matches ` +
      `and ${by.length === 1 ? 'is' : 'are'} evaluated first (${STAGES[rule.stage]} comes after)`;
    const review = reviewRuleOf.get(rule.rule)!;
    findings.shadowed_rule.push({
      kind: 'shadowed_rule',
      subject: describeRule(rule.rule),
      evidence,
      date: rowOf.get(rule.rule)?.updated_at ?? null,
      rule: review,
    });
  }
  const enabledIds = new Set(live.users.filter((u) => !u.disabled_at).map((u) => u.id));
  const enabledDevices = live.devices.filter((d) => enabledIds.has(d.user_id));
  const anyFamily: Record<IpFamily, boolean> = {
    4: enabledDevices.some((d) => d.ipv4),
    6: enabledDevices.some((d) => d.ipv6),
  };
  // Accept rules that decide nothing: earlier rules of their scope (an earlier stage, or listed
  // before them in the same stage) match every packet they match.
  const idleEvidence = new Map<AccessRule, string>();
  for (const [owner, map] of maps) {
    const idleAccepts = map.idle.filter((r) => r.rule.action === 'accept');
    if (idleAccepts.length === 0) continue;
    const order = inEvaluationOrder(byOwner.get(owner) ?? []);
    for (const rule of idleAccepts) {
      const earlier = order.slice(0, order.indexOf(rule)).filter((e) => overlaps(e, rule));
      const names = earlier
        .slice(0, 3)
        .map((e) => `${describeRule(e.rule)} at ${locationText(reviewRuleOf.get(e.rule)!)}`);
      const more = earlier.length > 3 ? ` and ${earlier.length - 3} more` : '';
      idleEvidence.set(
        rule.rule,
        `decides no packet: ${names.join(', ')}${more} ${earlier.length === 1 ? 'matches' : 'match'} every packet it matches first`,
      );
    }
  }
  for (const rule of model.rules) {
    if (rule.action !== 'accept') continue;
    const compiled = compileRule(rule);
    if (!compiled || (compiled.portType !== null && !settings.portRules)) continue;
    const reasons: string[] = [];
    const family = compiled.family;
    const v = `IPv${family}`;
    if (rule.owner !== null) {
      const owner = userByKey.get(rule.owner);
      if (owner) {
        const own = devicesOf.get(owner.id) ?? [];
        if (owner.disabled_at) reasons.push(`its user ${owner.email} is disabled since ${owner.disabled_at}`);
        else if (own.length === 0) reasons.push(`its user ${owner.email} has no device`);
        else if (!own.some((d) => (family === 4 ? d.ipv4 : d.ipv6)))
          reasons.push(`no device of ${owner.email} has an ${v} address (${own.length} device(s))`);
      }
    } else if (!anyFamily[family]) reasons.push(`no device of an enabled user has an ${v} address`);
    const idle = idleEvidence.get(compiled.rule);
    if (idle) reasons.push(idle);
    if (reasons.length === 0) continue;
    findings.accept_rule_grants_nothing.push({
      kind: 'accept_rule_grants_nothing',
      subject: describeRule(rule),
      evidence: reasons.join('; '),
      date: rowOf.get(rule)?.updated_at ?? null,
      rule: reviewRuleOf.get(rule)!,
    });
  }

  const report: ReviewReport = {
    generated_at: input.now.toISOString(),
    server: input.server ?? null,
    stale_days: staleDays,
    telemetry: {
      handshakes: telemetry.handshakes ? 'recorded' : 'not recorded',
      sign_ins: telemetry.signIns ? 'recorded' : 'not recorded',
    },
    settings: { port_rules: settings.portRules, server_addresses: [...settings.serverAddresses] },
    counts: {
      users: live.users.length,
      admins: live.users.filter((u) => u.role === 'admin').length,
      devices: live.devices.length,
      rules: live.rules.length,
    },
    everyone: { rules: everyoneMap.deciding.map(entry), default_accept: defaultAccept },
    users,
    findings,
  };
  const tests = desired?.tests ?? [];
  if (tests.length > 0) {
    const results = runAccessTests(input.testsAfterApply ?? model, tests);
    const failed = results.filter((r) => !r.pass).length;
    report.tests = {
      evaluated: input.testsAfterApply ? 'after-apply' : 'live',
      passed: results.length - failed,
      failed,
      results: results.map((r) => ({
        name: r.test.name,
        ...(r.test.source ? { at: at(r.test.source) } : {}),
        pass: r.pass,
        result: r,
      })),
    };
  }
  return report;
}

/** Whether two rules of a scope match a packet in common. */
function overlaps(a: CompiledRule, b: CompiledRule): boolean {
  if (a.family !== b.family || a.end < b.start || b.end < a.start) return false;
  if (a.portType === null || b.portType === null) return true;
  return a.portType === b.portType && a.low <= b.high && b.low <= a.high;
}

/** `file:line`, else `id …`. */
function locationText(rule: ReviewRule): string {
  return rule.at ?? `id ${rule.id}`;
}
