/**
 * The access review written out: markdown (for people and an artifact), JSON (the report data as
 * it is), CSV (one table for a spreadsheet). Every value from the server or the files is made
 * inert for where it goes (src/views/escape.ts); CSV cells are quoted (RFC 4180) and guarded
 * against formula injection (OWASP: a cell starting with = + - @, a tab or a carriage return gets
 * a leading apostrophe).
 */
import type { ReviewExpiry } from '../review/expiries.js';
import type { AccessBlock } from '../access/changes.js';
import type { Finding, FindingKind, ReachEntry, ReviewReport, ReviewRule } from '../review/index.js';
import { againstText, testLine } from './access.js';
import { inertText, jsonDocument, markdownCode, markdownText } from './escape.js';

/** `file:line`, else `id …`. */
function locationText(rule: ReviewRule): string {
  return rule.at ?? `id ${rule.id}`;
}

/** Plain text (letters, digits, address and email punctuation; no backtick, control or edge space) needs no escaping. */
const PLAIN = /^[\w.:/@,()*'+-](?:[\w .:/@,()*'+-]*[\w.:/@,()*'+-])?$/;

/** markdownCode, quicker for the plain values most of a review is made of (same output). */
function code(value: string): string {
  return PLAIN.test(value) ? `\`${value}\`` : markdownCode(value);
}

export type ReviewFormat = 'markdown' | 'json' | 'csv';
export const REVIEW_FORMATS: readonly ReviewFormat[] = ['markdown', 'json', 'csv'];

export function formatReview(report: ReviewReport, format: ReviewFormat): string {
  if (format === 'json') return jsonDocument(reportJson(report));
  if (format === 'csv') return reviewCsv(report);
  return reviewMarkdown(report);
}

/** The report as it is, each access test's result as its line of text. */
function reportJson(report: ReviewReport): unknown {
  if (!report.tests) return report;
  const results = report.tests.results.map(({ result, ...r }) => ({ ...r, line: testLine(result) }));
  return { ...report, tests: { ...report.tests, results } };
}

/** `10.0.0.0/8 tcp 22, 80-90`, `10.0.0.0/8 all protocols`, `10.0.0.0/8 other protocols (icmp, …)`: every block, none left out. */
export function blockWords(block: AccessBlock): { addresses: string; protocol: string; ports: string } {
  return {
    addresses: block.addresses.join(' '),
    protocol:
      block.protocol === 'all'
        ? 'all protocols'
        : block.protocol === 'other'
          ? 'other protocols (icmp, …)'
          : block.protocol,
    ports: block.ports ?? '',
  };
}

function ruleWords(rule: ReviewRule): string {
  const ports = rule.port_type === null ? '' : ` ${rule.port_type} ${rule.port_range ?? ''}`;
  return `${rule.action} ${rule.destination}${ports} (${rule.user ?? 'global'})`;
}

const TITLES: Record<FindingKind, (report: ReviewReport) => string> = {
  stale_device: (r) => `Devices with no handshake in ${r.stale_days} days`,
  never_signed_in: () => 'Users never signed in',
  no_devices: () => 'Users with no devices',
  shadowed_rule: () => 'Shadowed rules (they never decide anything)',
  accept_rule_grants_nothing: () => 'Accept rules that grant nothing',
};

const UNKNOWN_HANDSHAKES =
  'unknown (this server records no handshakes: netform’s bundled server has no WireGuard interface, so `latest_handshake` is always null there)';
const UNKNOWN_SIGN_INS =
  'unknown (this server records no sign-ins: netform’s bundled server has no sign-in portal, so `last_signed_in_at` is always null there)';

function entryLine(entry: ReachEntry): string[] {
  const where = code(locationText(entry.rule));
  return entry.blocks.map((block) => {
    const w = blockWords(block);
    const ports = w.ports ? ` ${code(w.ports)}` : '';
    return `${entry.verdict.toUpperCase()} ${code(w.addresses)} ${w.protocol}${ports}: rule ${code(ruleWords(entry.rule))} at ${where}`;
  });
}

function reviewMarkdown(report: ReviewReport): string {
  const out: string[] = ['# Access review', ''];
  const c = report.counts;
  out.push(
    `Generated ${code(report.generated_at)}${report.server ? ` from ${code(report.server)}` : ''}: ` +
      `${c.users} users (${c.admins} admins), ${c.devices} devices, ${c.rules} rules.`,
    '',
    `- Handshakes: ${report.telemetry.handshakes === 'recorded' ? `recorded; a device is stale after ${report.stale_days} days without one (a device younger than that, never connected, is not)` : UNKNOWN_HANDSHAKES}`,
    `- Sign-ins: ${report.telemetry.sign_ins === 'recorded' ? 'recorded' : UNKNOWN_SIGN_INS}`,
    `- Evaluated as a Firezone 0.7.36 server decides: a user's own rules first, then the global rules; port rules ${report.settings.port_rules ? 'filtered' : 'ignored (settings.port_rules is false)'}; the server addresses ${report.settings.server_addresses.map(code).join(', ')} are never filtered.`,
    '',
    '## Findings',
    '',
  );
  for (const kind of Object.keys(TITLES) as FindingKind[]) {
    const list = report.findings[kind];
    out.push(`### ${TITLES[kind](report)} (${list.length})`, '');
    if (kind === 'stale_device' && report.telemetry.handshakes !== 'recorded') out.push(UNKNOWN_HANDSHAKES, '');
    else if (kind === 'never_signed_in' && report.telemetry.sign_ins !== 'recorded') out.push(UNKNOWN_SIGN_INS, '');
    else if (list.length === 0) out.push('None.', '');
    else {
      for (const f of list) out.push(findingLine(f));
      out.push('');
    }
  }
  out.push(...expiriesMarkdown(report));
  if (report.tests) {
    const t = report.tests;
    const against = t.evaluated === 'after-apply' ? againstText('after-apply') : againstText('live');
    out.push(`### Access tests against ${against}: ${t.passed} passed, ${t.failed} failed`, '');
    for (const r of t.results) out.push(`- ${r.at ? `${code(r.at)}: ` : ''}${code(testLine(r.result))}`);
    out.push('');
  }
  out.push(
    '## Users',
    '',
    'Admins first. Each user reaches what its own rules accept, then, where none of its own rules matches, what the global rules accept for everyone (see "Everyone" below).',
    '',
  );
  for (const user of report.users) {
    out.push(`### ${code(user.email)}: ${user.role}`, '');
    out.push(
      `- Created ${code(user.inserted_at)}; signed in: ${code(user.signed_in)}${user.disabled_at ? `; disabled since ${code(user.disabled_at)}` : ''}`,
    );
    if (user.devices.length === 0) out.push('- Devices: none');
    else {
      out.push(`- Devices (${user.devices.length}):`);
      for (const d of user.devices) {
        const addresses =
          [d.ipv4, d.ipv6]
            .filter((a): a is string => a !== null)
            .map(code)
            .join(', ') || 'no address';
        out.push(`  - ${code(d.name)}: ${addresses}; last handshake ${code(d.handshake)}${d.stale ? ' (stale)' : ''}`);
      }
    }
    if (user.no_tunnel) out.push(`- Reaches nothing now: ${markdownText(user.no_tunnel)}`);
    else {
      const families = user.address_families.map((f) => (f === 'ipv4' ? 'IPv4' : 'IPv6'));
      const only =
        families.length === 1
          ? `; ${families[0]} only: no device has an ${families[0] === 'IPv4' ? 'IPv6' : 'IPv4'} address`
          : '';
      const partial = user.partial_devices.length ? `; ${user.partial_devices.map(markdownText).join(', ')}` : '';
      out.push(`- Reaches (from its devices' ${families.join(' and ')} addresses${only}${partial}):`);
    }
    const lead = user.no_tunnel ? '  - with a device, it would reach: ' : '  - ';
    if (user.own_rules.length === 0) out.push(`${lead}no own rule, so what the global rules give everyone`);
    else {
      out.push(`${lead}by its own rules, evaluated first:`);
      for (const entry of user.own_rules) for (const line of entryLine(entry)) out.push(`    - ${line}`);
      out.push('  - elsewhere: what the global rules give everyone');
    }
    out.push('');
  }
  out.push('## Everyone: the global rules', '');
  if (report.everyone.rules.length === 0) out.push('- No global rule.');
  for (const entry of report.everyone.rules) for (const line of entryLine(entry)) out.push(`- ${line}`);
  const def = report.everyone.default_accept;
  out.push(
    def.length > 0
      ? `- ACCEPT every other ${def.map((f) => (f === 'ipv4' ? 'IPv4' : 'IPv6')).join(' and ')} packet: no rule matches it, and 0.7.36 accepts by default (a global drop of \`0.0.0.0/0\` and \`::/0\` makes deny-by-default)`
      : '- No packet is left to the default: global rules match every packet.',
  );
  out.push('');
  return `${out.join('\n')}`;
}

/** `device alice@example.com/laptop: expired 2026-12-31 (3 days ago) but still on the server`. */
function expiryWords(e: ReviewExpiry): string {
  if (e.expired) {
    const ago = -e.days;
    return `${e.label}: expired ${e.expires} (${ago === 0 ? 'today' : `${ago} day${ago === 1 ? '' : 's'} ago`}) but still on the server`;
  }
  return `${e.label}: expires ${e.expires} (${e.days === 0 ? 'within a day' : `in ${e.days} day${e.days === 1 ? '' : 's'}`})`;
}

/** The review's expiries section (with -f): expired grants still on the server, then those expiring soon. */
function expiriesMarkdown(report: ReviewReport): string[] {
  const x = report.expiries;
  if (!x) return [];
  const out = [`### Expired but still on the server (${x.expired.length})`, ''];
  if (x.expired.length === 0) out.push('None.', '');
  else out.push(...x.expired.map((e) => `- ${e.at ? `${code(e.at)}: ` : ''}${markdownText(expiryWords(e))}`), '');
  out.push(`### Expiring within ${x.expiring_days} days (${x.expiring.length})`, '');
  if (x.expiring.length === 0) out.push('None.', '');
  else out.push(...x.expiring.map((e) => `- ${e.at ? `${code(e.at)}: ` : ''}${markdownText(expiryWords(e))}`), '');
  return out;
}

function findingLine(f: Finding): string {
  const where = f.rule ? ` at ${code(locationText(f.rule))}` : '';
  const date = f.date && !f.evidence.includes(f.date) ? ` (${code(f.date)})` : '';
  return `- ${code(f.subject)}${where}: ${markdownText(f.evidence)}${date}`;
}

/** A cell that needs no guard, escape or doubled quote (most of them). */
const PLAIN_CELL = /^[\w.:/,()*' ](?:[\w .:/@,()*'+-]*)$/;

export const CSV_COLUMNS = [
  'section',
  'user',
  'role',
  'device',
  'verdict',
  'addresses',
  'protocol',
  'ports',
  'rule',
  'rule_at',
  'evidence',
  'date',
] as const;
type CsvRow = Partial<Record<(typeof CSV_COLUMNS)[number], string | null>>;

/**
 * One CSV cell: made inert, guarded against formula injection (a leading apostrophe before
 * = + - @, a tab or a carriage return, as OWASP recommends), and always double-quoted with inner
 * quotes doubled (RFC 4180).
 */
export function csvCell(value: string | null | undefined): string {
  if (!value) return '""';
  if (PLAIN_CELL.test(value)) return `"${value}"`;
  let text = value;
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  text = inertText(text);
  return `"${text.replace(/"/g, '""')}"`;
}

function reviewCsv(report: ReviewReport): string {
  const rows: CsvRow[] = [];
  rows.push({
    section: 'review',
    evidence:
      `generated ${report.generated_at}${report.server ? ` from ${report.server}` : ''}; stale after ${report.stale_days} days; ` +
      `handshakes ${report.telemetry.handshakes}; sign-ins ${report.telemetry.sign_ins}`,
    date: report.generated_at,
  });
  for (const user of report.users) {
    rows.push({
      section: 'user',
      user: user.email,
      role: user.role,
      evidence: `signed in: ${user.signed_in}; ${user.devices.length} device(s)${user.no_tunnel ? `; reaches nothing: ${user.no_tunnel}` : ''}${user.disabled_at ? `; disabled since ${user.disabled_at}` : ''}`,
      date: user.last_signed_in_at,
    });
    for (const d of user.devices) {
      rows.push({
        section: 'device',
        user: user.email,
        role: user.role,
        device: d.name,
        addresses: [d.ipv4, d.ipv6].filter((a) => a !== null).join(' '),
        evidence: `last handshake: ${d.handshake}${d.stale ? ' (stale)' : ''}`,
        date: d.latest_handshake,
      });
    }
    for (const entry of user.own_rules) reachRows(rows, entry, user.email, user.role);
  }
  for (const entry of report.everyone.rules) reachRows(rows, entry, '*', '');
  for (const family of report.everyone.default_accept) {
    rows.push({
      section: 'reach',
      user: '*',
      verdict: 'accept',
      addresses: `every other ${family} address`,
      protocol: 'all protocols',
      evidence: 'no rule matches: 0.7.36 accepts by default',
    });
  }
  for (const kind of Object.keys(report.findings) as FindingKind[]) {
    for (const f of report.findings[kind]) {
      rows.push({
        section: kind,
        user: f.user ?? (f.rule ? (f.rule.user ?? '*') : ''),
        device: f.device ?? '',
        rule: f.rule ? ruleWords(f.rule) : '',
        rule_at: f.rule ? locationText(f.rule) : '',
        evidence: f.evidence,
        date: f.date,
      });
    }
  }
  for (const [section, list] of [
    ['expired', report.expiries?.expired ?? []],
    ['expiring', report.expiries?.expiring ?? []],
  ] as const) {
    for (const e of list) rows.push({ section, evidence: expiryWords(e), rule_at: e.at ?? '', date: e.expires });
  }
  for (const t of report.tests?.results ?? []) {
    rows.push({
      section: 'test',
      verdict: t.pass ? 'pass' : 'fail',
      rule_at: t.at ?? '',
      evidence: testLine(t.result),
    });
  }
  const lines = [CSV_COLUMNS.join(',')];
  for (const row of rows) lines.push(CSV_COLUMNS.map((c) => csvCell(row[c])).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

function reachRows(rows: CsvRow[], entry: ReachEntry, user: string, role: string): void {
  for (const block of entry.blocks) {
    const w = blockWords(block);
    rows.push({
      section: 'reach',
      user,
      role,
      verdict: entry.verdict,
      addresses: w.addresses,
      protocol: w.protocol,
      ports: w.ports,
      rule: ruleWords(entry.rule),
      rule_at: locationText(entry.rule),
    });
  }
}
