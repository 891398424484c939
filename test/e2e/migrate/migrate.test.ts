/**
 * `netform migrate firezone-1x` end to end (in-process CLI, real files, a real server for --url):
 * the examples' company compiled to main.tf.json that passes the provider-schema fixture and the
 * portal's changeset rules, byte-identical on a second run and equal to its golden; a one-port
 * change is a one-resource in-place update; `--url` on a server equals `-f` on its export (and
 * `-f --url`, the state after apply, too); report.json lists each distinct difference once and
 * loses nothing against the full listing; bad input is refused naming the flag, writing nothing.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkResources, type ResourceBody } from '../../../src/migrate/check.js';
import { runCli } from '../../helpers/cli.js';
import { parseReport, reportV1Text, resolvedUsers } from '../../helpers/migrate-report.js';
import { startSeededServer, type SeededServer } from '../../helpers/export-seed.js';
import { validateTerraformJson } from '../../helpers/provider-schema.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BASIC = join(ROOT, 'examples/basic');
const GOLDEN = join(ROOT, 'test/fixtures/migrate/basic.main.tf.json');
const HEADER =
  '1.x behaviour computed from upstream source at df8139e82dd537f4bc99af32f7f94033b809ef3e and provider 17060f2a92b872a2c4cb1cc21f47cdaa94f9932b; not verified against a running 1.x portal or client';

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'netform-migrate-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function migrate(args: string[], out: string, env: Record<string, string> = {}) {
  const result = await runCli(['migrate', 'firezone-1x', ...args, '-o', out], { cwd: work, env });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  const read = (name: string) => readFileSync(join(out, name), 'utf8');
  return { result, tf: read('main.tf.json'), md: read('report.md'), json: read('report.json') };
}

type Doc = { resource: Record<string, Record<string, Record<string, unknown>>> };

describe('netform migrate firezone-1x -f', () => {
  it("compiles the examples' company: valid for the provider and the portal, the honest header, the same bytes twice, the golden", async () => {
    const first = await migrate(['-f', BASIC], join(work, 'a'));
    // NETFORM_URL in the environment (a dead address) does not make -f read a server.
    const second = await migrate(['-f', BASIC], join(work, 'b'), {
      NETFORM_URL: 'http://127.0.0.1:9',
      NETFORM_TOKEN: 'x',
    });
    expect(second.tf).toBe(first.tf);
    expect(second.md).toBe(first.md);
    expect(second.json).toBe(first.json);
    const doc = JSON.parse(first.tf) as Doc;
    expect(validateTerraformJson(doc)).toEqual([]);
    expect(checkResources(doc.resource.firezone_resource as Record<string, ResourceBody>)).toEqual([]);
    expect(first.md).toContain(`**${HEADER}.**`);
    expect(first.md).toContain('-parallelism=1');
    expect(JSON.parse(first.json)).toMatchObject({ header: HEADER, state: 'files', parallelism: 1 });
    expect(first.result.stdout).toMatch(/^wrote main\.tf\.json, report\.md and report\.json to /);
    if (process.env.NETFORM_UPDATE_GOLDENS === '1') writeFileSync(GOLDEN, first.tf);
    expect(first.tf).toBe(readFileSync(GOLDEN, 'utf8'));
  });

  it('a one-port change of a rule is a one-resource in-place update: same addresses, one body differs', async () => {
    const changed = join(work, 'changed');
    cpSync(BASIC, changed, { recursive: true });
    const file = join(changed, 'netform.yaml');
    const text = readFileSync(file, 'utf8');
    const edited = text.replace(
      'destination: 10.10.0.0/16, port_type: tcp, port_range: "22"',
      'destination: 10.10.0.0/16, port_type: tcp, port_range: "2222"',
    );
    expect(edited).not.toBe(text);
    writeFileSync(file, edited);
    const before = JSON.parse((await migrate(['-f', BASIC], join(work, 'c'))).tf) as Doc;
    const after = JSON.parse((await migrate(['-f', changed], join(work, 'd'))).tf) as Doc;
    const addresses = (d: Doc) =>
      Object.entries(d.resource).flatMap(([type, bodies]) => Object.keys(bodies).map((n) => `${type}.${n}`));
    expect(addresses(after)).toEqual(addresses(before));
    const differing = addresses(before).filter((a) => {
      const [type, name] = a.split('.') as [string, string];
      return JSON.stringify(before.resource[type]![name]) !== JSON.stringify(after.resource[type]![name]);
    });
    expect(differing).toEqual(['firezone_resource.r_10_10_0_0_16']);
    expect(after.resource.firezone_resource!.r_10_10_0_0_16).toMatchObject({
      name: '10.10.0.0/16 tcp:1-2221,2223-65535 udp icmp',
      filters: [{ protocol: 'tcp', ports: ['1 - 2221', '2223 - 65535'] }, { protocol: 'udp' }, { protocol: 'icmp' }],
    });
  });

  it('report.json lists each difference once and each user its indices; nothing is lost against the full listing', async () => {
    // Forty users: the first thirty with the global rules only (the same differences), ten with a
    // drop of their own in the reserved 100.64.0.0/10 (a RESERVED difference each, the rest shared).
    const dir = join(work, 'shared-fleet');
    mkdirSync(dir);
    const lines = ['version: 1', 'users:'];
    for (let i = 0; i < 40; i++) {
      lines.push(`  - email: user${i}@example.com`, '    role: unprivileged', '    devices:');
      lines.push(`      - { name: laptop, public_key: "${Buffer.alloc(32, i + 1).toString('base64')}" }`);
      if (i >= 30) lines.push('    rules:', `      - { action: drop, destination: 100.64.${i}.0/24 }`);
    }
    lines.push('rules:', '  - { action: accept, destination: 10.20.0.0/16, port_type: tcp, port_range: "443" }');
    writeFileSync(join(dir, 'netform.yaml'), `${lines.join('\n')}\n`);
    const { json, md } = await migrate(['-f', dir], join(work, 'shared-out'));
    const report = parseReport(json);
    const texts = report.differences.map((e) => JSON.stringify(e));
    expect(new Set(texts).size).toBe(texts.length);
    const users = resolvedUsers(report);
    expect(users).toHaveLength(40);
    const used = new Set(report.users.flatMap((u) => [...u.lost, ...u.gained, ...u.old_clients]));
    expect(used.size).toBe(report.differences.length);
    // The thirty alike share one list of indices; each of the ten has a RESERVED difference of its own.
    const alike = report.users.filter((u) => /^user([0-9]|[12][0-9])@/.test(u.email));
    expect(alike).toHaveLength(30);
    for (const u of alike) expect(u.lost).toEqual(alike[0]!.lost);
    expect(alike[0]!.lost.length).toBeGreaterThan(0);
    const own = report.users.filter((u) => /^user3[0-9]@/.test(u.email));
    expect(new Set(own.map((u) => JSON.stringify(u.lost))).size).toBe(10);
    // Every code used has its sentence; one user a line.
    const codes = [
      ...report.account,
      ...report.differences,
      ...report.users.flatMap((u) => [...u.notes, ...u.devices.flatMap((d) => d.notes)]),
    ].map((x) => x.code);
    for (const code of codes) expect(report.causes[code], code).toMatch(/\w/);
    expect(json.split('\n').filter((l) => l.startsWith('    {"email":'))).toHaveLength(40);
    // The full listing (version 1's, each difference under each user with its cause) is several times larger.
    const full = reportV1Text(json);
    expect(full.length).toBeGreaterThan(3 * json.length);
    for (const u of users) for (const e of u.lost) expect(full).toContain(JSON.stringify(e.example));
    // report.md groups the thirty in one section, and writes every difference's packet.
    expect(md).toContain(`### ${alike.map((u) => u.email).join(', ')} (narrower)`);
    for (const e of report.differences) expect(md).toContain(`e.g. \`${e.example}\``);
  });

  it('refuses bad input naming what is wrong, and writes nothing', async () => {
    const out = join(work, 'refused');
    const cases: [string[], RegExp][] = [
      [['migrate', 'firezone-2x', '-f', BASIC, '-o', out], /TARGET "firezone-2x"/],
      [['migrate', 'firezone-1x', '-o', out], /give -f DIR/],
      [['migrate', 'firezone-1x', '-f', BASIC, '--within', '10.0.0.0/33', '-o', out], /--within: "10\.0\.0\.0\/33"/],
      [['migrate', 'firezone-1x', '-f', BASIC, '--prefer', 'wide', '-o', out], /--prefer/],
      [['migrate', 'firezone-1x', '-f', join(work, 'missing'), '-o', out], /missing/],
      // The 1.x API's group ids are UUIDs (openapi.json, docs/firezone-1x.md §7).
      [
        ['migrate', 'firezone-1x', '-f', BASIC, '--everyone-group', 'everyone', '-o', out],
        /--everyone-group: "everyone" is not a group id \(a UUID/,
      ],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args, { cwd: work, env: { NETFORM_URL: undefined as unknown as string } });
      expect(result.code, args.join(' ')).not.toBe(0);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
    expect(existsSync(out)).toBe(false);
  });
});

describe('netform migrate firezone-1x --url', () => {
  let seeded: SeededServer;
  beforeAll(async () => {
    seeded = await startSeededServer();
  });
  afterAll(async () => {
    await seeded?.close();
  });

  it('on a server equals -f on its export, and -f --url (the state after apply) equals both', async () => {
    const exported = await runCli(['export', '-o', join(seeded.dir, 'fleet')], { env: seeded.env, cwd: seeded.dir });
    expect(exported.code).toBe(0);
    const fleet = join(seeded.dir, 'fleet');
    const live = await migrate([], join(work, 'live'), seeded.env);
    const files = await migrate(['-f', fleet], join(work, 'files'), seeded.env);
    const after = await migrate(['-f', fleet, '--url', seeded.server.url], join(work, 'after'), seeded.env);
    seeded.expectNoSecrets(live.tf + live.md + live.json + after.md + after.json);
    expect(live.tf).toBe(files.tf);
    expect(after.tf).toBe(files.tf);
    const comparable = (text: string) => {
      const report = JSON.parse(text) as { state: string; users: { devices: { lastHandshake?: unknown }[] }[] };
      report.state = '';
      for (const u of report.users) for (const d of u.devices) delete d.lastHandshake;
      return report;
    };
    expect(JSON.parse(live.json).state).toBe('live');
    expect(JSON.parse(after.json).state).toBe('after-apply');
    expect(comparable(live.json)).toEqual(comparable(files.json));
    expect(comparable(after.json)).toEqual(comparable(files.json));
    // Only the server knows when a device was last active: the checklist says how it is ordered.
    expect(live.md).toContain('Active devices first (latest handshake, as the server reported it when read)');
    expect(files.md).toContain('No handshake is known: the files hold none, so devices are listed by user and name');
    expect(after.md).toContain('with -f and --url the devices are read from the files, which hold none');
    expect(files.md).not.toContain('Active devices first');
  });
});
