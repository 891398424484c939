/**
 * The words and documents of `netform check` (text, json, github, sarif): each new or forbidden
 * grant as `who → what`, with the rule responsible and where it is declared. Pure.
 */
import type { BlastRadius, DeltaRegion, DeltaRule, DeviceDelta } from '../access/delta.js';
import type { AccessDeltaDocument } from '../access/delta-sets.js';
import { describeRule } from './model-rule.js';
import { githubData, githubProperty, inertLine, inertMessage, inertText, jsonDocument } from './escape.js';
import { sarifOutput, type SarifFinding, type SarifRuleId } from './sarif.js';
import { wordedDelta } from './ops-compared.js';

export const CHECK_FORMATS = ['text', 'json', 'github', 'sarif'] as const;
export type CheckFormat = (typeof CHECK_FORMATS)[number];
export type CheckName = 'no-new-access' | 'no-access-to';

/** A user's devices that gain the same: one object per delta entry, shared by its grants. */
export interface Grantee {
  user: string;
  devices: string[];
}

/**
 * One grant: who reaches what, and the rule responsible (with its file and line when declared).
 * Several users' devices reach the same region (the delta states it once: every new device of a
 * user without own rules reaches the same): one grant names them all, in the order of the delta.
 */
export interface Grant {
  who: Grantee[];
  region: DeltaRegion;
  /** Devices with no tunnel in the family before (a new device or user, or one enabled again). */
  newTunnel: boolean;
}

export function grantsOf(entries: readonly DeviceDelta[]): Grant[] {
  const grants: Grant[] = [];
  const byRegion = new Map<DeltaRegion, Grant[]>();
  for (const e of entries) {
    const who: Grantee = { user: e.user, devices: e.devices };
    for (const region of e.gained) {
      const newTunnel = e.tunnel[region.family] === 'new';
      let same = byRegion.get(region);
      if (!same) byRegion.set(region, (same = []));
      let grant = same.find((g) => g.newTunnel === newTunnel);
      if (!grant) {
        same.push((grant = { who: [], region, newTunnel }));
        grants.push(grant);
      }
      grant.who.push(who);
    }
  }
  return grants;
}

/** Who a line names in full; `--format json` names every one. */
const WHO_SHOWN = 5;

/** `alice@example.com (laptop, phone)`, `… and 12 more users' devices`. */
function whoText(grant: Grant): string {
  const named = grant.who.slice(0, WHO_SHOWN).map((w) => `${w.user} (${w.devices.join(', ')})`);
  const more = grant.who.length - named.length;
  return `${named.join(', ')}${more > 0 ? ` and ${more} more user${more === 1 ? '' : 's'}' devices (--format json names them)` : ''}`;
}

/** `tcp 5432 to 10.20.0.0/16`, `every protocol and port to 0.0.0.0/0 except 10.0.0.0/8`. */
export function whatText(region: DeltaRegion): string {
  const { except } = region;
  const where = except ? `${except.block} except ${except.holes.join(', ')}` : region.addresses.join(', ');
  if (region.protocol === 'all') return `every protocol and port to ${where}`;
  if (region.protocol === 'other') return `protocols without ports (icmp, …) to ${where}`;
  return `${region.protocol} ${region.ports} to ${where}`;
}

function ruleText(rule: DeltaRule): string {
  const where =
    rule.file !== undefined ? ` at ${rule.file}:${rule.line}` : rule.id !== undefined ? ` (id ${rule.id})` : '';
  return `${describeRule({ ...rule, owner: rule.user })}${where}`;
}

/** Which rule is responsible: the one that accepts now, else the drop that no longer applies. */
export function responsibleText(grant: Grant, check: CheckName): string {
  const { before, after } = grant.region;
  const fresh = grant.newTunnel ? 'a new tunnel; ' : '';
  if (after) return `${fresh}by ${ruleText(after)}`;
  if (check === 'no-new-access' && before)
    return `${fresh}no rule matches now (the chain policy accepts): ${ruleText(before)} decided it before`;
  return `${fresh}no rule matches (the chain policy accepts)`;
}

/** Where a grant is fixed: the accepting rule's line, else the removed drop's. */
function locationOf(grant: Grant): { file?: string; line?: number } {
  const rule = grant.region.after ?? grant.region.before;
  return rule?.file !== undefined ? { file: rule.file, line: rule.line } : {};
}

export function grantLine(grant: Grant, check: CheckName): string {
  return `${whoText(grant)} → ${whatText(grant.region)} (${responsibleText(grant, check)})`;
}

export interface CheckReport {
  check: CheckName;
  /** What was evaluated: `the files at main → the files now`, `10.20.0.0/16:5432/tcp against the server now`. */
  subject: string;
  grants: Grant[];
  /** For no-new-access: the users and devices affected, the address × port pairs, the admins. */
  blastRadius?: BlastRadius;
  /** For no-new-access: the whole delta as documents carry it (region sets), made for JSON only. */
  delta?: () => AccessDeltaDocument;
  except?: string[];
}

function headline(report: CheckReport): string {
  const n = report.grants.length;
  if (report.check === 'no-new-access')
    return n === 0
      ? `check no-new-access: PASS: no user or device reaches anything it could not reach before (${report.subject})`
      : `check no-new-access: FAIL: ${n} new grant${n === 1 ? '' : 's'} (${report.subject})`;
  return n === 0
    ? `check no-access-to: PASS: nobody${report.except?.length ? ` outside ${report.except.join(', ')}` : ''} reaches ${report.subject}`
    : `check no-access-to: FAIL: ${n} grant${n === 1 ? '' : 's'} reach ${report.subject}`;
}

function textOutput(report: CheckReport, github: boolean): string {
  const lines = [inertMessage(headline(report))];
  for (const grant of report.grants) {
    const line = grantLine(grant, report.check);
    if (!github) lines.push(inertLine(`  ${line}`));
    else {
      const { file, line: at } = locationOf(grant);
      const props = file !== undefined ? ` file=${inertText(githubProperty(file))},line=${at}` : '';
      lines.push(`::error${props}::${inertText(githubData(line))}`);
    }
  }
  const radius = report.blastRadius;
  if (radius) {
    lines.push(
      `blast radius: ${radius.users_affected} user(s), ${radius.devices_affected} device(s) affected; gained ${radius.gained.address_ports} and lost ${radius.lost.address_ports} address × port pairs`,
    );
    if (radius.admins_gained.length > 0) lines.push(inertLine(`new admins: ${radius.admins_gained.join(', ')}`));
    if (radius.admins_lost.length > 0) lines.push(inertLine(`admins no more: ${radius.admins_lost.join(', ')}`));
  }
  return `${lines.join('\n')}\n`;
}

/** A grant in JSON: the first of those who gain it named, all of them as `who`, an index into `who_sets`. */
function grantJson(grant: Grant, check: CheckName, who: number): Record<string, unknown> {
  const { before, after, address_ports, ...block } = grant.region;
  const first = grant.who[0]!;
  return {
    user: first.user,
    devices: first.devices,
    who,
    ...block,
    address_ports,
    new_tunnel: grant.newTunnel,
    rule: after ?? (check === 'no-new-access' ? before : null),
    before,
    after,
    text: grantLine(grant, check),
  };
}

/**
 * The JSON document: every user's devices that gain something once (`grantees`), every distinct
 * list of them once (`who_sets`: indexes into `grantees`), and each grant the index of its list,
 * so that a region gained by a hundred new devices does not name them in each of its grants.
 */
function jsonOutput(report: CheckReport, result: string): string {
  const grantees: Grantee[] = [];
  const granteeIndex = new Map<Grantee, number>();
  const whoSets: number[][] = [];
  const whoSetIndex = new Map<string, number>();
  const grants = report.grants.map((grant) => {
    const set = grant.who.map((w) => {
      let at = granteeIndex.get(w);
      if (at === undefined) granteeIndex.set(w, (at = grantees.push({ user: w.user, devices: w.devices }) - 1));
      return at;
    });
    const key = set.join(',');
    let who = whoSetIndex.get(key);
    if (who === undefined) whoSetIndex.set(key, (who = whoSets.push(set) - 1));
    return grantJson(grant, report.check, who);
  });
  return jsonDocument({
    check: report.check,
    result,
    subject: report.subject,
    ...(report.except ? { except: report.except } : {}),
    grants,
    grantees,
    who_sets: whoSets,
    ...(report.delta ? { access_delta: wordedDelta(report.delta()) } : {}),
  });
}

const SARIF_RULE: Record<CheckName, SarifRuleId> = {
  'no-new-access': 'access-gate/new-access',
  'no-access-to': 'access-gate/forbidden-access',
};

/** The check's output and its result in the chosen format. */
export function checkOutput(report: CheckReport, format: CheckFormat, where: { root: string; cwd: string }): string {
  const result = report.grants.length === 0 ? 'pass' : 'fail';
  if (format === 'json') return jsonOutput(report, result);
  if (format === 'sarif') {
    const findings: SarifFinding[] = report.grants.map((grant) => ({
      ruleId: SARIF_RULE[report.check],
      level: 'error',
      message: grantLine(grant, report.check),
      ...locationOf(grant),
    }));
    return sarifOutput(findings, where);
  }
  return textOutput(report, format === 'github');
}

/** A check that could not be evaluated: `result: error` and why. */
export function checkErrorOutput(
  check: CheckName,
  message: string,
  format: CheckFormat,
  where: { root: string; cwd: string },
): string {
  const said = `check ${check} could not be evaluated: ${message}`;
  if (format === 'json') return jsonDocument({ check, result: 'error', error: message });
  if (format === 'sarif') return sarifOutput([{ ruleId: 'access-gate/error', level: 'error', message: said }], where);
  if (format === 'github') return `::error::${inertText(githubData(said))}\n`;
  return `${inertMessage(said)}\n`;
}
