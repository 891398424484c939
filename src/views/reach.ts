/**
 * The words of `netform reach` and `netform who-can-reach`: text lines (every value that came
 * from a file or a server made inert) and json documents. Pure functions of their results.
 */
import type { Reach, ReachPiece, WhoCanReach, WhoCategory, WhoEntry } from '../access/index.js';
import { inertText } from '../model/inert.js';
import { againstText, pieceJson, pieceText } from './access.js';
import { jsonDocument } from './escape.js';
import type { EvaluatedState } from '../access/after-apply.js';

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/** Most parts listed per source in text (all with --all; json lists all). */
const PIECES_SHOWN = 20;

function pieceLines(pieces: readonly ReachPiece[], indent: string, all: boolean, label = ''): string[] {
  const shown = all ? pieces : pieces.slice(0, PIECES_SHOWN);
  const lines = shown.map((p) => `${indent}${label}${pieceText(p)}`);
  if (shown.length < pieces.length)
    lines.push(
      `${indent}… and ${plural(pieces.length - shown.length, 'more part')} (--all or --format json lists them)`,
    );
  return lines;
}

function entryLines(entry: WhoEntry, indent: string, all: boolean): string[] {
  const names =
    entry.users.length < entry.userCount
      ? `${entry.users.join(', ')} and ${(entry.userCount - entry.users.length).toLocaleString('en-US')} more`
      : entry.users.join(', ');
  const who = entry.everyoneElse
    ? `${plural(entry.userCount, 'user')} without own rules there (${names}), ${plural(entry.devices, 'device')}`
    : `${names} (${plural(entry.devices, 'device')})`;
  // Where a user reaches only part of the target: what is accepted, and what a drop stops.
  const split = (pieces: readonly ReachPiece[], at: string): string[] => [
    ...pieceLines(pieces, at, all, 'accepted: '),
    ...pieceLines(entry.dropped, at, all, 'stopped by a drop: '),
  ];
  if (entry.within) {
    const blocks =
      entry.within.length > 5 ? [...entry.within.slice(0, 5), `+${entry.within.length - 5} more`] : entry.within;
    const nothing = entry.pieces.length === 0 && entry.dropped.length === 0;
    return [
      `${indent}${who}${entry.verdict === 'partial' ? ', part of it' : ''}:`,
      `${indent}  within its own rules (${blocks.join(', ')}):${nothing ? ' nothing' : ''}`,
      ...(entry.dropped.length > 0
        ? split(entry.pieces, `${indent}    `)
        : pieceLines(entry.pieces, `${indent}    `, all)),
      `${indent}  elsewhere in it: as a user without own rules there`,
    ];
  }
  if (entry.dropped.length > 0) return [`${indent}${who}, part of it:`, ...split(entry.pieces, `${indent}  `)];
  if (entry.pieces.length === 0) return [`${indent}${who}: nothing`];
  if (entry.pieces.length === 1) return [`${indent}${who}: ${pieceText(entry.pieces[0]!)}`];
  return [`${indent}${who}:`, ...pieceLines(entry.pieces, `${indent}  `, all)];
}

function omittedLine(category: WhoCategory, what: string): string[] {
  return category.omitted > 0 ? [`  … and ${plural(category.omitted, 'more user')} ${what} (--all lists them)`] : [];
}

/**
 * The text of `who-can-reach`. `against` says what was evaluated: `the declared rules`, `the live
 * server`. `all` lifts the bounds (users per list, parts per user).
 */
function whoCanReachLines(result: WhoCanReach, against: string, all = false): string[] {
  const { target } = result;
  const family = target.region.family;
  const lines = [`who can reach ${target.text} (${target.what}), against ${against}:`];
  const head = (c: WhoCategory) => `${plural(c.users, 'user')} (${plural(c.devices, 'device')})`;
  const { accepted, byDefault, server, stopped, noTunnel } = result;
  const entries = (c: WhoCategory) => c.entries.flatMap((e) => entryLines(e, '  ', all));
  if (accepted.users === 0) lines.push('accepted by a rule: nobody');
  else
    lines.push(
      `accepted by a rule: ${head(accepted)}`,
      ...entries(accepted),
      ...omittedLine(accepted, 'accepted by a rule'),
    );
  if (byDefault.users > 0) {
    lines.push(
      `by default: ${head(byDefault)} reach it only because no rule matches (0.7.36 accepts by default); ` +
        `a global drop (${family === 4 ? '0.0.0.0/0' : '::/0'}) makes deny-by-default` +
        (byDefault.entries.length === 0 ? ' (--all lists them)' : ''),
      ...entries(byDefault),
    );
  }
  if (server.users > 0)
    lines.push(
      `only the server's own address in it (never filtered): ${head(server)}`,
      ...entries(server),
      ...omittedLine(server, 'reaching only the server'),
    );
  if (stopped.users > 0)
    lines.push(
      `stopped by a drop: ${head(stopped)}`,
      ...entries(stopped),
      ...omittedLine(stopped, 'stopped by a drop'),
    );
  const categories = [accepted, byDefault, server, stopped];
  const partial = categories.some((c) => c.entries.some((e) => e.within));
  const everyoneShown = categories.some((c) => c.entries.some((e) => e.everyoneElse));
  if (partial && !everyoneShown)
    lines.push('a user without own rules there meets:', ...pieceLines(result.everyoneElse, '  ', all));
  if (noTunnel.count > 0) {
    lines.push(`no tunnel: ${plural(noTunnel.count, 'source')}`);
    for (const s of noTunnel.entries)
      lines.push(`  ${s.user}${s.device !== undefined ? `/${s.device}` : ''}: ${s.reason}`);
    if (noTunnel.omitted > 0)
      lines.push(`  … and ${plural(noTunnel.omitted, 'more source')} without a tunnel (--all lists them)`);
  }
  return lines.map(inertText);
}

/** The text of `reach`. */
function reachLines(result: Reach, against: string): string[] {
  const who = result.future
    ? `${result.user}/* (any future device of theirs)`
    : result.device !== undefined
      ? `${result.user}/${result.device}`
      : result.user;
  const lines = [`what ${who} reaches, against ${against}:`];
  if (result.noTunnel) {
    lines.push(`nothing: ${result.noTunnel}`);
    return lines.map(inertText);
  }
  for (const f of result.families) {
    const name = `IPv${f.family}`;
    if (f.devices.length === 0) {
      lines.push(`${name}: nothing (no device has an ${name} address: no ${name} tunnel)`);
      continue;
    }
    const from = result.future ? '' : ` from ${f.devices.join(', ')}`;
    const without = f.without.length > 0 ? ` (${f.without.join(', ')}: no ${name} address, no ${name} tunnel)` : '';
    lines.push(`${name}${from}${without}:`);
    const byRule = f.reached.filter((p) => p.by === 'rule');
    if (byRule.length > 0) {
      lines.push('  reached by a rule:');
      lines.push(...pieceLines(byRule, '    ', true));
    }
    for (const p of f.reached.filter((q) => q.by === 'server')) lines.push(`  reached always: ${pieceText(p)}`);
    if (f.blocked.length > 0) {
      lines.push('  blocked by a rule:');
      for (const p of f.blocked) lines.push(`    ${pieceText(p)}`);
    }
    lines.push(
      f.reached.length === 0 && f.blocked.length === 0
        ? `  everything: reached by default (no rule matches; 0.7.36 accepts by default)`
        : `  everything else: reached by default (no rule matches; 0.7.36 accepts by default)`,
    );
  }
  return lines.map(inertText);
}

function categoryJson(category: WhoCategory, pieces: string): Record<string, unknown> {
  return {
    users: category.users,
    devices: category.devices,
    omitted: category.omitted,
    entries: category.entries.map((e) => ({
      users: e.users,
      user_count: e.userCount,
      devices: e.devices,
      everyone_else: e.everyoneElse,
      verdict: e.verdict,
      ...(e.within ? { within: e.within } : {}),
      [pieces]: e.pieces.map(pieceJson),
      ...(e.dropped.length > 0 ? { stopped_by: e.dropped.map(pieceJson) } : {}),
    })),
  };
}

/** The `against` member of the JSON answers: `declared`, `live` or `after-apply`. */
function againstJson(state: EvaluatedState): string {
  return state === 'files' ? 'declared' : state;
}

function whoCanReachJson(result: WhoCanReach, against: string): Record<string, unknown> {
  return {
    to: result.target.text,
    family: result.target.region.family,
    what: result.target.what,
    against,
    everyone_else: result.everyoneElse.map(pieceJson),
    accepted: categoryJson(result.accepted, 'reaches'),
    by_default: categoryJson(result.byDefault, 'reaches'),
    server_only: categoryJson(result.server, 'reaches'),
    stopped: categoryJson(result.stopped, 'stopped_by'),
    no_tunnel: { count: result.noTunnel.count, omitted: result.noTunnel.omitted, sources: result.noTunnel.entries },
  };
}

function reachJson(result: Reach, against: string): Record<string, unknown> {
  return {
    user: result.user,
    ...(result.device !== undefined ? { device: result.device } : {}),
    ...(result.future ? { future_device: true } : {}),
    against,
    ...(result.noTunnel ? { no_tunnel: result.noTunnel } : {}),
    families: result.families.map((f) => ({
      family: f.family,
      devices: f.devices,
      without_address: f.without,
      reached: f.reached.map(pieceJson),
      blocked: f.blocked.map(pieceJson),
      otherwise: f.devices.length === 0 ? 'no tunnel' : 'accept by default',
    })),
  };
}

/** `netform who-can-reach`'s output: text lines, or (`json`) one document, ending in a newline. */
export function whoCanReachOutput(
  result: WhoCanReach,
  format: 'text' | 'json',
  state: EvaluatedState,
  all: boolean,
): string {
  if (format === 'json') return jsonDocument(whoCanReachJson(result, againstJson(state)));
  return `${whoCanReachLines(result, againstText(state), all).join('\n')}\n`;
}

/** `netform reach`'s output: text lines, or (`json`) one document, ending in a newline. */
export function reachOutput(result: Reach, format: 'text' | 'json', state: EvaluatedState): string {
  if (format === 'json') return jsonDocument(reachJson(result, againstJson(state)));
  return `${reachLines(result, againstText(state)).join('\n')}\n`;
}
