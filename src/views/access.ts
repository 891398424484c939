/**
 * Access in words: the access changes of a plan (text and markdown; json carries `plan.access` as
 * it is), the results of access tests and the decisions `netform explain` shows.
 */
import type { AccessBlock, AccessChanges } from '../access/changes.js';
import type { Decision, Match } from '../access/evaluate.js';
import type { ReachPiece } from '../access/partition.js';
import type { Diagnostic } from '../model/diagnostic.js';
import { ruleLocation } from '../model/rule.js';
import { describeMatch, describeRule } from './model-rule.js';
import type { SourceDecision, SourceDecisions } from '../access/notation.js';
import type { TestResult } from '../access/tests.js';
import type { EvaluatedState } from '../access/after-apply.js';
import { cidrRange } from '../model/net.js';
import type { Change, Plan } from '../plan/types.js';
import { githubAnnotation } from './diagnostics.js';
import { inertLine, inertText, jsonDocument, markdownCode, markdownText } from './escape.js';

function hasAccessChanges(access: AccessChanges | undefined): access is AccessChanges {
  return access !== undefined && (access.users.length > 0 || access.everyone !== undefined);
}

export function accessText(access: AccessChanges | undefined, title = 'Access changes'): string[] {
  if (!hasAccessChanges(access)) return [];
  return [`${inertText(title)}:`, ...accessChangeLines(access, inertText).map((line) => `  ${line}`), ''];
}

/**
 * The markdown section, within `maxChars`: whole lines while they fit, then one line saying how
 * many are not shown (the text and json plans hold them all).
 */
export function accessMarkdown(
  access: AccessChanges | undefined,
  maxChars = Infinity,
  title = 'Access changes',
  worded?: string[],
): string[] {
  if (!hasAccessChanges(access)) return [];
  const open = [`<details open><summary>${markdownText(title)}</summary>`, ''];
  const close = ['', '</details>', ''];
  // Every email in a code span sized to it; the rest of a line is netform's own text (addresses, protocols, ports).
  // Lines worded elsewhere (drift's) are one code span each.
  const lines = (worded ? worded.map(markdownCode) : accessChangeLines(access, markdownCode)).map(
    (line) => `- ${line}`,
  );
  let budget = maxChars - [...open, ...close].join('\n').length - 200;
  const shown: string[] = [];
  for (const line of lines) {
    if (line.length + 1 > budget) break;
    shown.push(line);
    budget -= line.length + 1;
  }
  const left = lines.length - shown.length;
  const more =
    left > 0
      ? [`- **… ${left} more line(s) of access changes are not shown** (the text and json plans list them)`]
      : [];
  return [...open, ...shown, ...more, ...close];
}

/** `10.2.0.0/16 tcp 22`, `10.9.0.0/16 (all protocols)`, `10.1.2.3/32 other protocols (ICMP, …)`. */
export function blockText(block: AccessBlock): string {
  const where =
    block.addresses.length > 3
      ? `${block.addresses.slice(0, 3).join(', ')} (+${block.addresses.length - 3} blocks)`
      : block.addresses.join(', ');
  if (block.protocol === 'all') return `${where} (all protocols)`;
  if (block.protocol === 'other') return `${where} other protocols (icmp, …)`;
  return `${where} ${block.protocol} ${block.ports}`;
}

/**
 * Lines of text for the changes: `alice@example.com: now reachable 10.2.0.0/16 tcp 22`. `quote`
 * shows each user's email for where the line goes (made inert for text, a code span in markdown).
 */
export function accessChangeLines(changes: AccessChanges, quote: (user: string) => string = (user) => user): string[] {
  const lines: string[] = [];
  const add = (who: string, c: { reachable: AccessBlock[]; blocked: AccessBlock[] }) => {
    for (const b of c.reachable) lines.push(`${who}: now reachable ${blockText(b)}`);
    for (const b of c.blocked) lines.push(`${who}: now blocked ${blockText(b)}`);
  };
  if (changes.everyone) {
    const { except } = changes.everyone;
    add(
      except.length === 0 ? 'all users' : `all users (except where own rules of ${except.map(quote).join(', ')} apply)`,
      changes.everyone,
    );
  }
  for (const u of changes.users) add(changes.everyone ? `${quote(u.user)} (within its own rules)` : quote(u.user), u);
  if (changes.omitted) {
    lines.push(
      `… and ${changes.omitted.users} more users (whose own rules may change their access differently), ${changes.omitted.blocks} more blocks not shown`,
    );
  }
  return lines;
}

/**
 * `drop by drop 10.9.0.0/16 (global) at a.yaml:30, global portless-drop`, `no tunnel (no device)`,
 * or the verdict and the reason without a rule.
 */
export function describeDecision(decision: Decision): string {
  if (decision.decidedBy) return `${decision.verdict} by ${describeMatch(decision.decidedBy)}`;
  if (decision.parts && decision.parts.length > 1) return `${decision.verdict}: ${partsText(decision.parts)}`;
  if (decision.verdict === 'no tunnel') return `no tunnel (${decision.reason})`;
  return `${decision.verdict}: ${decision.reason}`;
}

/** `alice@example.com/laptop`, `alice@example.com/*` (any device), or the user alone (no device). */
export function sourceName(source: SourceDecision): string {
  return `${source.user}${source.device ? `/${source.device}` : ''}`;
}

/** Most users named in a note about users without a device (json lists them all). */
const NAMES_IN_A_NOTE = 10;

/** `note: 2 users without a device are not sources of "*": a@x, b@x`, or nothing. */
export function withoutDeviceNote(users: readonly string[] | undefined): string | undefined {
  if (!users || users.length === 0) return undefined;
  const shown = users.slice(0, NAMES_IN_A_NOTE).join(', ');
  const more = users.length > NAMES_IN_A_NOTE ? ` and ${users.length - NAMES_IN_A_NOTE} more` : '';
  const count = users.length === 1 ? '1 user without a device is' : `${users.length} users without a device are`;
  return `note: ${count} not a source of "*" (no tunnel to test from): ${shown}${more}`;
}

/** `desired/a.yaml:12: ` before a test's line, when the test is declared in a file. */
export function testLocation(result: TestResult): string {
  const source = result.test.source;
  return source ? `${source.file}:${source.line}: ` : '';
}

/** One line per test: `PASS name: from -> to: verdict by rule at file:line` (the failing source for a failure). */
export function testLine(result: TestResult): string {
  const { test } = result;
  const head = `${result.pass ? 'PASS' : 'FAIL'} ${test.name}: ${test.from} -> ${test.to}, expected ${test.expect}`;
  if (result.error) return `${head}: ${result.error}`;
  const shown = result.shown;
  if (!shown) return `${head}: no source to evaluate`;
  const who = result.decisions.length > 1 || test.from.trim().startsWith('*') ? ` (from ${sourceName(shown)})` : '';
  return `${head}, got ${describeDecision(shown.decision)}${who}`;
}

/**
 * The failing tests as `validate` errors (a failing test fails it), but those with no source to test from: each at
 * its test's `name:` line, with the expectation, the outcome and the deciding rule.
 */
export function failedTestDiagnostics(results: readonly TestResult[]): Diagnostic[] {
  return (
    results
      .map((result, i) => ({ result, i }))
      // A `from: "*"` with no declared device is a warning of validate (noSourceWarnings), not an error.
      .filter(({ result }) => !result.pass && !result.noSource)
      .map(({ result, i }) => {
        const source = result.test.source;
        const path = source?.path ?? `tests[${i}]`;
        const message = `access test fails: ${testLine(result).replace(/^FAIL /, '')}`;
        return source
          ? { file: source.file, line: source.line, column: source.column, path, message }
          : { path, message };
      })
  );
}

function testJson(result: TestResult): Record<string, unknown> {
  const { test } = result;
  return {
    name: test.name,
    from: test.from,
    to: test.to,
    expect: test.expect,
    pass: result.pass,
    ...(test.source ? { file: test.source.file, line: test.source.line } : {}),
    ...(result.error ? { error: result.error } : {}),
    ...(result.withoutDevice ? { without_device: result.withoutDevice } : {}),
    results: result.decisions.map((d) => ({
      user: d.user,
      ...(d.device ? { device: d.device } : {}),
      ...decisionJson(d.decision),
    })),
  };
}

/** A deciding rule in JSON (explain, tests, reach): its fields, scope, stage and where it is declared. */
export function matchJson(match: Match): Record<string, unknown> {
  const { rule } = match;
  const where = ruleLocation(rule);
  return {
    action: rule.action,
    destination: rule.destination,
    port_type: rule.port_type,
    port_range: rule.port_range,
    user: rule.owner,
    scope: match.scope,
    stage: match.stage,
    ...(where ? { at: where } : {}),
  };
}

function decisionJson(decision: Decision): Record<string, unknown> {
  return {
    verdict: decision.verdict,
    reason: decision.reason,
    ...(decision.decidedBy ? { rule: matchJson(decision.decidedBy) } : {}),
    ...(decision.alsoMatched.length > 0 ? { also_matched: decision.alsoMatched.map(matchJson) } : {}),
    ...(decision.parts ? { parts: decision.parts.map(pieceJson) } : {}),
  };
}

/** `10.0.0.0/16, 10.2.0.0/15 tcp 22`, `0.0.0.0/0 except 10.1.0.0/16 (all protocols)`: every address block, exactly. */
function fullBlockText(block: AccessBlock): string {
  const where = block.except
    ? `${block.except.block} except ${block.except.holes.join(', ')}`
    : block.addresses.join(', ');
  if (block.protocol === 'all') return `${where} (all protocols)`;
  if (block.protocol === 'other') return `${where} other protocols (icmp, …)`;
  return `${where} ${block.protocol} ${block.ports}`;
}

function matchText(match: Match): string {
  const where = ruleLocation(match.rule);
  return `${describeRule(match.rule)}${where ? ` at ${where}` : ''}, ${match.scope} ${match.stage}`;
}

/** `10.1.2.3/32 tcp 22 by accept 10.1.0.0/16 tcp 22 (alice@example.com) at a.yaml:8, user port-accept`. */
export function pieceText(piece: ReachPiece): string {
  const what = piece.blocks.map(fullBlockText).join('; ');
  if (piece.by === 'rule') return `${what} by ${matchText(piece.match!)}`;
  if (piece.by === 'server') return `${what}: the server's own address (never filtered)`;
  return `${what} by default (no rule matches)`;
}

/** A part of a destination in JSON (reach, who-can-reach, explain, tests): its verdict, what decides it, its blocks. */
export function pieceJson(piece: ReachPiece): Record<string, unknown> {
  return {
    verdict: piece.verdict,
    by: piece.by,
    ...(piece.match ? { rule: matchJson(piece.match) } : {}),
    blocks: piece.blocks,
  };
}

/** Most parts of a decision listed on a test's line (explain and --format json list them all). */
const PARTS_ON_A_LINE = 3;

/** `accepted 10.1.2.3/32 tcp 1-65534 by accept …; dropped 10.1.2.3/32 tcp 0, 65535; … by drop …`. */
function partsText(parts: readonly ReachPiece[]): string {
  const shown = parts
    .slice(0, PARTS_ON_A_LINE)
    .map((p) => `${p.verdict === 'accept' ? 'accepted' : 'dropped'} ${pieceText(p)}`);
  const left = parts.length - shown.length;
  return `${shown.join('; ')}${left > 0 ? `; … and ${left} more part${left === 1 ? '' : 's'} (explain lists them)` : ''}`;
}

/** The few lines of `netform explain` for one source. */
function explainLines(who: string, decision: Decision): string[] {
  // A source without a tunnel says why on its line (`NO TUNNEL (no device)`), not a bare verdict.
  if (decision.verdict === 'no tunnel') return [`${who}: NO TUNNEL (${decision.reason})`];
  const lines = [`${who}: ${decision.verdict.toUpperCase()}`];
  if (decision.decidedBy) lines.push(`  decided by ${describeMatch(decision.decidedBy)}`);
  else if (decision.parts && decision.parts.length > 1) {
    for (const part of decision.parts)
      lines.push(`  ${part.verdict === 'accept' ? 'accepted' : 'dropped'}: ${pieceText(part)}`);
  } else lines.push(`  ${decision.reason}`);
  for (const later of decision.alsoMatched) lines.push(`  also matches, evaluated later: ${describeMatch(later)}`);
  return lines;
}

/** What each state is, in a header: `the declared rules`, `the live server`, `the server as it will be after apply`. */
export const STATE_SUBJECT: Record<EvaluatedState, string> = {
  files: 'the declared rules',
  live: 'the live server',
  'after-apply': 'the server as it will be after apply',
};

/** Each state's name (docs/rule-semantics.md §9): `files only`, `live now`, `after apply`. */
export const STATE_NAME: Record<EvaluatedState, string> = {
  files: 'files only',
  live: 'live now',
  'after-apply': 'after apply',
};

/** `the declared rules (files only)`: the state an answer was evaluated on, named. */
export function againstText(state: EvaluatedState): string {
  return `${STATE_SUBJECT[state]} (${STATE_NAME[state]})`;
}

/** `netform test`: a line per test (an annotation for a failure with `github`), then the count. */
export function testResultsText(results: TestResult[], options: { github: boolean; state: EvaluatedState }): string {
  let out = '';
  for (const result of results) {
    const source = result.test.source;
    if (options.github && !result.pass) {
      out += `${githubAnnotation({ message: testLine(result), file: source?.file, line: source?.line, column: source?.column })}\n`;
    } else {
      out += `${inertLine(`${source ? `${source.file}:${source.line}: ` : ''}${testLine(result)}`)}\n`;
    }
    const note = withoutDeviceNote(result.withoutDevice);
    if (note) out += `  ${inertText(note)}\n`;
  }
  const failed = results.filter((r) => !r.pass).length;
  const against = `${STATE_SUBJECT[options.state]}: ${STATE_NAME[options.state]}`;
  return (
    out +
    (results.length === 0
      ? 'no tests: add a tests: list to the desired state\n'
      : `${results.length - failed} passed, ${failed} failed (against ${against})\n`)
  );
}

/** `netform test --format json`. */
export function testResultsJson(results: TestResult[]): string {
  const failed = results.filter((r) => !r.pass).length;
  return jsonDocument({ passed: results.length - failed, failed, tests: results.map(testJson) });
}

/** `netform explain --format json`: every source's decision, and the state evaluated (`declared`, `live`, `after-apply`). */
export function explainJson(
  fromText: string,
  toText: string,
  sources: SourceDecisions,
  state: EvaluatedState = 'files',
): string {
  const results = sources.decisions.map((d) => ({
    user: d.user,
    ...(d.device ? { device: d.device } : {}),
    ...decisionJson(d.decision),
  }));
  const against = state === 'files' ? 'declared' : state;
  const without = sources.withoutDevice.length > 0 ? { without_device: sources.withoutDevice } : {};
  return jsonDocument({ from: fromText, to: toText, against, results, ...without });
}

/** `netform explain`: sources with the same decision are shown once, under the state evaluated. */
export function explainText(
  fromText: string,
  toText: string,
  sources: SourceDecisions,
  state: EvaluatedState = 'files',
): string {
  const groups = new Map<string, { who: string[]; decision: Decision }>();
  for (const d of sources.decisions) {
    const key = JSON.stringify(decisionJson(d.decision));
    const who = `${d.user}${d.device ? `/${d.device}` : ''}`;
    const group = groups.get(key);
    if (group) group.who.push(who);
    else groups.set(key, { who: [who], decision: d.decision });
  }
  const lines: string[] = [`${fromText} -> ${toText}, against ${againstText(state)}`];
  for (const { who, decision } of groups.values()) {
    const shown = who.length > 3 ? `${who.slice(0, 3).join(', ')} and ${who.length - 3} more` : who.join(', ');
    for (const item of explainLines(shown, decision)) lines.push(item);
  }
  const note = withoutDeviceNote(sources.withoutDevice);
  if (note) lines.push(note);
  return `${lines.map(inertText).join('\n')}\n`;
}

/** A live rule the plan removes: its owner key (`*` global), action and destination, and its words. */
interface RemovedRule {
  owner: string;
  action: string;
  range: { family: number; start: bigint; end: bigint } | null;
  words: string;
}

/** The live rules a plan deletes or replaces (cascades included), as drift names them. */
function removedRules(changes: readonly Change[]): RemovedRule[] {
  const out: RemovedRule[] = [];
  const add = (key: string, label: string, why: string) => {
    const [owner = '', action = '', destination = ''] = key.split('|');
    out.push({ owner, action, range: cidrRange(destination), words: label.replace(/\)$/, `, ${why})`) });
  };
  for (const change of changes) {
    if (change.kind === 'rule' && change.action === 'delete')
      add(change.key, change.label, 'on the server but in no file');
    if (change.kind === 'rule' && change.action === 'replace') add(change.key, change.label, 'differs from the files');
    for (const item of change.cascade ?? [])
      if (item.kind === 'rule') add(item.key, item.label, 'goes with its user, whom the files delete');
  }
  return out;
}

function meets(rule: RemovedRule, block: AccessBlock): boolean {
  const { range } = rule;
  if (!range) return false;
  return block.addresses.some((text) => {
    const b = cidrRange(text);
    return b !== null && b.family === range.family && b.start <= range.end && range.start <= b.end;
  });
}

/**
 * Drift's access section (it reports the exposure, then the fix): `10.9.0.0/16 (all protocols):
 * reachable now by all users because of rule accept 10.9.0.0/16 (global, on the server but in no
 * file); apply would block it`. `plan.access` compares the server now with the state after apply.
 */
export function driftAccessText(plan: Plan): string[] {
  const lines = driftAccessLines(plan);
  return lines.length === 0 ? [] : [`${DRIFT_ACCESS_TITLE}:`, ...lines.map((line) => `  ${inertText(line)}`), ''];
}

/** Drift's access lines, not escaped: each view escapes them for where they go. */
export function driftAccessLines(plan: Plan): string[] {
  const access = plan.access;
  if (!hasAccessChanges(access)) return [];
  const removed = removedRules(plan.changes);
  const lines: string[] = [];
  const add = (who: string, owner: string | null, c: { reachable: AccessBlock[]; blocked: AccessBlock[] }) => {
    const cause = (action: string, block: AccessBlock) => {
      const found = removed.filter(
        (r) => r.action === action && (r.owner === '*' || r.owner === owner) && meets(r, block),
      );
      return found.length > 0 ? ` because of ${found.map((r) => r.words).join(', ')}` : '';
    };
    for (const b of c.blocked)
      lines.push(`${blockText(b)}: reachable now by ${who}${cause('accept', b)}; apply would block it`);
    for (const b of c.reachable)
      lines.push(`${blockText(b)}: blocked now for ${who}${cause('drop', b)}; apply would open it`);
  };
  if (access.everyone) {
    const { except } = access.everyone;
    add(
      except.length === 0 ? 'all users' : `all users (except where own rules of ${except.join(', ')} apply)`,
      null,
      access.everyone,
    );
  }
  for (const u of access.users) add(access.everyone ? `${u.user} (within its own rules)` : u.user, u.user, u);
  if (access.omitted)
    lines.push(
      `… and ${access.omitted.users} more users (whose own rules may change their access differently), ${access.omitted.blocks} more blocks not shown`,
    );
  return lines;
}

/** The title of drift's access section: the server now, then what apply would do. */
export const DRIFT_ACCESS_TITLE = 'Access now, and what apply would do (the server now compared with after apply)';
