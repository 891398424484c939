/**
 * The words of `netform migrate firezone-1x`: `report.md`, `report.json` and the lines on the
 * terminal. Each code's cause is one sentence here; report.json carries the code and the sentence.
 */
import type { MigrateCode, DiffEntry, Note } from '../migrate/types.js';
import type { MigrateResult } from '../ops/migrate.js';
import { jsonRowsDocument, markdownCode, markdownText } from './escape.js';
import { differenceTable } from './migrate-table.js';

export interface ReportFacts {
  upstreamCommit: string;
  providerCommit: string;
  changelogCommit: string;
  /** Per platform, the first client with firezone#12684. */
  clients: readonly { platform: string; version: string; date: string }[];
}

/** The header sentence of report.md and of the README's "Leaving 0.7". */
export function honestyLine(facts: ReportFacts): string {
  return `1.x behaviour computed from upstream source at ${facts.upstreamCommit} and provider ${facts.providerCommit}; not verified against a running 1.x portal or client`;
}

export const CAUSES: Record<MigrateCode, string> = {
  FULL_TUNNEL:
    'outside the migrated scope (the private IPv4 ranges, every rule destination and --within): in 1.x only the Internet Resource reaches it, which has no filters or carve-outs, is a paid feature and cannot be made through the API',
  RESERVED:
    'a 1.x Resource may neither contain nor lie in 0.0.0.0/32, ::/128, loopback, 100.64.0.0/10 or fd00:2021:1111::/48 (resource.ex)',
  SERVER_LOCAL: "the 0.7 server's own address, which 0.7.36 never filters; it has no 1.x counterpart",
  DEVICE_TO_DEVICE: '0.7 tunnel addresses of devices: 1.x clients do not reach each other',
  PORT_ZERO: 'port 0: a 1.x filter names ports 1-65535, and port 0 only comes with every port of its protocol',
  PROTOCOL_LOST:
    'protocols other than TCP, UDP and ICMP (GRE, ESP, …): a 1.x filter refuses them, and this block needs a filter',
  PREFER_WIDER: '--prefer wider: the smallest 1.x filter around the 0.7 reach lets more through',
  EVERYONE_GROUP: "--everyone-group: the global rules' reach is granted to every user, over their own drops",
  ROUTING:
    'clients without firezone#12684 route to the most specific Resource only, whose filter refuses what an overlapping one allows',
  NOT_EXPRESSED: 'not expressed by the emitted objects (a netform defect: please report it)',
  DROP_COMPLEMENT: '1.x has no drop rule: the reach around this drop is written as Resources that leave it out',
  DISABLED_USER: 'disabled in 0.7: emitted as a disabled actor with no group',
  GRANT_EXPIRES: 'this grant ends in 0.7 (expires:); 1.x policies have no end, so it becomes permanent',
  NAME_COLLISION: 'two objects would have the same Terraform address or name; one was made unique',
  RE_ENROL:
    'devices do not carry over: the user signs in with a 1.x client; key, tunnel address, DNS, MTU and endpoint are not kept',
  ALLOWED_IPS:
    "this device's allowed_ips routing does not carry over: 1.x clients route exactly the authorised Resources",
  FUTURE_USERS:
    'global rules reach every future 0.7 user; 1.x native groups cover only their members (give --everyone-group ID to grant them to Everyone)',
  PAID_TIER: 'a paid 1.x feature is needed for part of the reach',
};

function seconds(s: number): string {
  if (s < 60) return `${s} s`;
  const minutes = Math.round(s / 60);
  return minutes < 120 ? `${minutes} min` : `${(s / 3600).toFixed(1)} h`;
}

/**
 * report.json (version 2): the same facts as report.md, for machines; stable for the same input.
 * Each code's sentence is in `causes` once, each distinct difference in `differences` once, and a
 * user's `lost`, `gained` and `old_clients` are indices into it; one member a line at the top, one
 * difference and one user a line below (docs/firezone-1x.md, "report.json").
 */
export function reportJson(result: MigrateResult): string {
  const { facts } = result;
  const m = result.migration;
  const table = differenceTable(m);
  const top: Record<string, unknown> = {
    version: 2,
    header: honestyLine(facts),
    upstream: {
      commit: facts.upstreamCommit,
      provider_commit: facts.providerCommit,
      changelog_commit: facts.changelogCommit,
    },
    state: result.state,
    options: {
      prefer: m.options.prefer,
      assume_filter_routing: m.options.assumeFilterRouting,
      everyone_group: m.options.everyoneGroup ?? null,
      scope: m.scope,
    },
    clients: m.options.assumeFilterRouting ? facts.clients : null,
    objects: result.counts,
    expected_seconds: result.seconds,
    parallelism: 1,
    causes: CAUSES,
    account: m.account,
  };
  const users = m.users.map((u, i) => ({
    email: u.email,
    verdict: u.verdict,
    group: u.group ?? null,
    lost: table.users[i]!.lost,
    gained: table.users[i]!.gained,
    old_clients: table.users[i]!.oldClients,
    notes: u.notes,
    devices: u.devices,
  }));
  return jsonRowsDocument({ ...top, differences: table.entries, users }, ['differences', 'users']);
}

function blocksText(e: DiffEntry): string {
  const where = e.except
    ? `${e.except.block} except ${e.except.holes.join(', ')}`
    : e.addresses_total !== undefined
      ? `${e.addresses.join(', ')} and ${e.addresses_total - e.addresses.length} more blocks within ${e.within ?? ''}`
      : e.addresses.join(', ');
  const what =
    e.protocol === 'all'
      ? 'every protocol'
      : e.ports
        ? `${e.protocol} ${e.ports}`
        : e.protocol === 'other'
          ? 'other protocols'
          : e.protocol;
  return `${markdownCode(where)} × ${what}`;
}

function sentence(text: string): string {
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

/** A difference's line after its title: the same for every user who has it, written once. */
function diffTail(e: DiffEntry): string {
  return `(${e.code}): ${blocksText(e)}, e.g. ${markdownCode(e.example)}. ${sentence(CAUSES[e.code])}`;
}

/** A note's words after whom it is about: the same for every user who has it (a Group's drop notes), written once. */
function noteTail(n: Note): string {
  const pieces = n.pieces !== undefined ? ` (${n.pieces} resource${n.pieces === 1 ? '' : 's'} around it)` : '';
  return `(${n.code})${n.subject ? ` ${markdownCode(n.subject)}` : ''}${pieces}: ${CAUSES[n.code]}.`;
}

/** How the re-enrolment checklist is ordered: only the live server knows when a device was last active. */
const DEVICE_ORDER: Record<MigrateResult['state'], string> = {
  live: 'Active devices first (latest handshake, as the server reported it when read); devices that never connected last.',
  files:
    'No handshake is known: the files hold none, so devices are listed by user and name, not by activity. Run with --url (alone) to list the active devices first.',
  'after-apply':
    'No handshake is known: with -f and --url the devices are read from the files, which hold none, so devices are listed by user and name, not by activity. Run with --url (alone) to list the active devices first.',
};

/** report.md: for people deciding the cut-over. */
export function reportMarkdown(result: MigrateResult): string {
  const { facts } = result;
  const m = result.migration;
  const c = result.counts;
  const out: string[] = [];
  out.push('# Leaving Firezone 0.7: netform migrate firezone-1x', '');
  out.push(`**${honestyLine(facts)}.**`, '');
  const source = {
    files: 'the files (-f)',
    live: 'the live server (--url)',
    'after-apply': 'the state after apply (-f and --url)',
  }[result.state];
  out.push(`Compiled from ${source}. Nothing was written to any server.`);
  out.push(
    m.options.assumeFilterRouting
      ? `Resources may overlap (--assume-filter-routing): this report holds for clients with firezone#12684 only: ${facts.clients.map((x) => `${x.platform} ${x.version}`).join(', ')}; older clients lose what "Old clients" lists.`
      : 'Resources never overlap with different filters for any one user: this report holds for every 1.x client.',
  );
  out.push(
    m.options.prefer === 'wider'
      ? 'Where 1.x cannot express a reach exactly, the smallest reach around it was chosen (--prefer wider): users marked wider gain access.'
      : 'Where 1.x cannot express a reach exactly, the largest reach inside it was chosen: no user gains access.',
  );
  out.push(`Migrated scope: ${m.scope.map(markdownCode).join(', ')}.`, '');
  out.push('## Objects', '');
  out.push('| sites | actors | groups | memberships | resources | policies | total |', '|---|---|---|---|---|---|---|');
  out.push(
    `| ${c.sites} | ${c.actors} | ${c.groups} | ${c.memberships} | ${c.resources} | ${c.policies} | ${c.total} |`,
    '',
  );
  out.push(
    `Expected duration: creating them takes about ${seconds(result.seconds.apply)}, and every later \`terraform plan\` refreshes them in about ${seconds(result.seconds.refresh)}: the API allows a burst of 20 requests, then one a second (a token bucket of 200 refilled at 10 a second, 10 per request, reads included). Run Terraform with \`-parallelism=1\`.`,
    '',
  );
  out.push('## Order of operations', '');
  out.push(
    '1. Site and Gateway first: `terraform apply -parallelism=1 -target=firezone_site.site`, then deploy a Gateway in the Site that reaches the migrated networks, and wait until it is online.',
    '2. Actors, groups, memberships and resources: apply them with `-target=` (or the whole file with the `firezone_policy` entries left out); nobody gains access yet.',
    '3. Policies last, one group at a time (a policy `p_…__g_x` belongs to group `g_x`): apply them, have the members sign in with a 1.x client, compare `netform reach EMAIL` with this report, then disable their 0.7 devices.',
    '4. When every group is cut over, run `terraform plan -parallelism=1` (no changes expected) and switch 0.7 off.',
    '',
  );
  // Each user's name, each difference's and each shared note's words escaped once, however often they appear.
  const emails = m.users.map((u) => markdownText(u.email));
  const table = differenceTable(m);
  const tails: (string | undefined)[] = [];
  const tailOf = (index: number) => (tails[index] ??= diffTail(table.entries[index]!));
  const noteTails = new Map<Note, string>();
  const noteTailOf = (n: Note) => {
    let text = noteTails.get(n);
    if (text === undefined) noteTails.set(n, (text = noteTail(n)));
    return text;
  };
  out.push('## Users', '');
  out.push('| user | verdict | group | lost | gained | old clients |', '|---|---|---|---|---|---|');
  m.users.forEach((u, i) =>
    out.push(
      `| ${emails[i]!} | ${u.verdict} | ${u.group ? markdownCode(u.group) : '-'} | ${u.lost.length} | ${u.gained.length} | ${u.oldClients.length} |`,
    ),
  );
  out.push(
    '',
    '## Differences',
    '',
    'Each difference is address blocks × protocol × ports, with one packet of it.',
    '',
  );
  // Users with the same verdict and the same differences (by value, as the table numbers them) share a section.
  const bySignature = new Map<string, number[]>();
  m.users.forEach((u, i) => {
    const d = table.users[i]!;
    if (d.lost.length + d.gained.length + d.oldClients.length === 0) return;
    const key = `${u.verdict}|${d.lost.join(',')}|${d.gained.join(',')}|${d.oldClients.join(',')}`;
    const list = bySignature.get(key);
    if (list) list.push(i);
    else bySignature.set(key, [i]);
  });
  for (const members of bySignature.values()) {
    const first = members[0]!;
    const d = table.users[first]!;
    out.push(`### ${members.map((i) => emails[i]!).join(', ')} (${m.users[first]!.verdict})`, '');
    for (const [title, indices] of [
      ['lost', d.lost],
      ['gained', d.gained],
      ['old clients lose', d.oldClients],
    ] as const)
      for (const index of indices) out.push(`- ${title} ${tailOf(index)}`);
    out.push('');
  }
  out.push('## What 1.x cannot express', '');
  for (const n of m.account)
    out.push(`- account (${n.code})${n.subject ? ` ${markdownCode(n.subject)}` : ''}: ${CAUSES[n.code]}.`);
  m.users.forEach((u, i) => {
    for (const n of u.notes) out.push(`- ${emails[i]!} ${noteTailOf(n)}`);
  });
  out.push('', '## Devices to re-enrol', '', DEVICE_ORDER[result.state], '');
  const devices = m.users.flatMap((u, i) => u.devices.map((d) => ({ email: emails[i]!, d })));
  devices.sort((a, b) => {
    const ha = a.d.lastHandshake ?? '';
    const hb = b.d.lastHandshake ?? '';
    return ha !== hb ? (ha < hb ? 1 : -1) : 0;
  });
  for (const { email, d } of devices) {
    const seen = d.lastHandshake ? `, last handshake ${markdownCode(d.lastHandshake)}` : '';
    const extra = d.notes
      .filter((n) => n.code !== 'RE_ENROL')
      .map((n) => `; ${n.code}${n.subject ? ` ${markdownCode(n.subject)}` : ''}`);
    out.push(`- [ ] ${email} / ${markdownText(d.name)}${seen}: sign in with a 1.x client${extra.join('')}`);
  }
  return `${out.join('\n')}\n`;
}

/** What the terminal shows: the files written, the counts, the verdicts and the expected time. */
export function migrateSummary(result: MigrateResult, dir: string): string {
  const c = result.counts;
  const verdicts = { equal: 0, narrower: 0, wider: 0 };
  for (const u of result.migration.users) verdicts[u.verdict]++;
  return (
    `wrote main.tf.json, report.md and report.json to ${dir}\n` +
    `objects: ${c.total} (${c.actors} actors, ${c.groups} groups, ${c.memberships} memberships, ${c.resources} resources, ${c.policies} policies, ${c.sites} site)\n` +
    `users: ${verdicts.equal} equal, ${verdicts.narrower} narrower, ${verdicts.wider} wider\n` +
    `expected: about ${seconds(result.seconds.apply)} to create at the API's rate limit (terraform apply -parallelism=1)\n`
  );
}
