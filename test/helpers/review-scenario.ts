/**
 * The end-to-end scenario of `netform review`, run on SQLite (test/e2e/review/review.test.ts) and on
 * PostgreSQL (test/integration/postgres/review.test.ts): a real `netform serve` process, objects
 * made through /v0, then `latest_handshake` and `last_signed_in_at` written straight into the
 * server's database, as a real Firezone server writes them (the API cannot set them), and the
 * built CLI run against it as users run it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { runCli } from './cli.js';
import { startTestServer, type TestServer } from './server.js';
import { openSql } from './store.js';

const key = () => randomBytes(32).toString('base64');
/** A timestamp `days` ago in the server's format (microseconds, Z). */
export const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString().replace('Z', '123Z');

async function created(server: TestServer, path: string, body: unknown): Promise<{ id: string }> {
  const answer = await server.api('POST', path, body);
  if (answer.status !== 201) throw new Error(`${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.data;
}

export interface ReviewFixture {
  server: TestServer;
  dir: string;
  env: Record<string, string>;
  ids: { aliceLaptop: string; alicePhone: string; carolDesk: string; alice: string };
  stop(): Promise<void>;
}

/**
 * alice (unprivileged) with a laptop and a phone and an own ssh rule; bob with no device; carol, an
 * admin, with a desk whose name would start a spreadsheet formula; a global drop and a global
 * IPv6 accept that no device can use (devices get addresses of both families: see ipv6 below).
 */
export async function reviewFixture(): Promise<ReviewFixture> {
  const server = await startTestServer();
  const alice = await created(server, '/v0/users', { user: { email: 'alice@example.com' } });
  await created(server, '/v0/users', { user: { email: 'bob@example.com' } });
  const carol = await created(server, '/v0/users', { user: { email: 'carol@example.com', role: 'admin' } });
  const device = (user_id: string, name: string) =>
    created(server, '/v0/devices', { device: { user_id, name, public_key: key() } });
  const aliceLaptop = await device(alice.id, 'laptop');
  const alicePhone = await device(alice.id, 'phone');
  const carolDesk = await device(carol.id, '=HYPERLINK("http://x")');
  const rule = (body: Record<string, unknown>) => created(server, '/v0/rules', { rule: body });
  await rule({ action: 'accept', destination: '10.20.0.0/16', port_type: 'tcp', port_range: '22', user_id: alice.id });
  await rule({ action: 'drop', destination: '10.20.0.0/16', user_id: alice.id });
  await rule({ action: 'drop', destination: '10.99.0.0/16' });
  // bob has no device: his accept grants nothing.
  const bob = (await server.api('GET', '/v0/users/bob@example.com')).body.data;
  await rule({ action: 'accept', destination: '10.50.0.0/16', user_id: bob.id });
  const dir = mkdtempSync(join(tmpdir(), 'netform-review-'));
  return {
    server,
    dir,
    env: { NETFORM_URL: server.url, NETFORM_TOKEN: server.token, NETFORM_TOKEN_USER: 'admin@example.com' },
    ids: { aliceLaptop: aliceLaptop.id, alicePhone: alicePhone.id, carolDesk: carolDesk.id, alice: alice.id },
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What a real Firezone server records: a handshake per connected device, a sign-in per user who signed in. */
export async function recordTelemetry(fixture: ReviewFixture): Promise<void> {
  const sql = await openSql(fixture.server.dbPath);
  try {
    await sql.run('UPDATE devices SET latest_handshake = ? WHERE id = ?', daysAgo(200), fixture.ids.aliceLaptop);
    // Never connected, and old enough to count: created 150 days ago.
    await sql.run('UPDATE devices SET inserted_at = ? WHERE id = ?', daysAgo(150), fixture.ids.alicePhone);
    await sql.run('UPDATE devices SET latest_handshake = ? WHERE id = ?', daysAgo(2), fixture.ids.carolDesk);
    await sql.run(
      "UPDATE users SET last_signed_in_at = ?, last_signed_in_method = 'password' WHERE id = ?",
      daysAgo(30),
      fixture.ids.alice,
    );
  } finally {
    await sql.close();
  }
}

/** The whole scenario: unknown telemetry first, then recorded; json, markdown, csv; with -f. */
export async function runReviewScenario(fixture: ReviewFixture, parseCsv: (text: string) => string[][]): Promise<void> {
  const { env, dir } = fixture;
  // netform's own server, nothing recorded: "unknown", and no finding rests on it.
  const before = await runCli(['review', '--format', 'json'], { env });
  expect(before.stderr).toBe('');
  expect(before.code).toBe(0);
  const unknown = JSON.parse(before.stdout);
  expect(unknown.telemetry).toEqual({ handshakes: 'not recorded', sign_ins: 'not recorded' });
  expect(unknown.findings.stale_device).toEqual([]);
  expect(unknown.findings.never_signed_in).toEqual([]);
  const beforeMd = await runCli(['review'], { env });
  expect(beforeMd.stdout).toContain('unknown (this server records no handshakes');

  await recordTelemetry(fixture);

  const after = await runCli(['review', '--format', 'json', '--stale-days', '90'], { env });
  expect(after.code).toBe(0);
  const report = JSON.parse(after.stdout);
  expect(report.telemetry).toEqual({ handshakes: 'recorded', sign_ins: 'recorded' });
  expect(report.users.map((u: { email: string; role: string }) => `${u.role} ${u.email}`)).toEqual([
    'admin admin@example.com',
    'admin carol@example.com',
    'unprivileged alice@example.com',
    'unprivileged bob@example.com',
  ]);
  const stale = report.findings.stale_device.map((f: { subject: string; evidence: string }) => [f.subject, f.evidence]);
  expect(stale).toEqual([
    ['alice@example.com/laptop', expect.stringMatching(/^last handshake \S+ \(200 days ago\)$/)],
    ['alice@example.com/phone', expect.stringMatching(/^no handshake ever; created \S+ \(150 days ago\)$/)],
  ]);
  expect(report.findings.never_signed_in.map((f: { subject: string }) => f.subject)).toEqual([
    'admin@example.com',
    'carol@example.com',
    'bob@example.com',
  ]);
  expect(report.findings.no_devices.map((f: { subject: string }) => f.subject)).toEqual([
    'admin@example.com',
    'bob@example.com',
  ]);
  expect(report.findings.accept_rule_grants_nothing.map((f: { subject: string }) => f.subject)).toEqual([
    'accept 10.50.0.0/16 (bob@example.com)',
  ]);
  const alice = report.users.find((u: { email: string }) => u.email === 'alice@example.com');
  expect(alice.signed_in).toMatch(/^\d{4}-/);
  expect(alice.own_rules.map((e: { verdict: string; blocks: unknown[] }) => [e.verdict, e.blocks])).toEqual([
    ['accept', [{ family: 4, addresses: ['10.20.0.0/16'], protocol: 'tcp', ports: '22' }]],
    [
      'drop',
      [
        { family: 4, addresses: ['10.20.0.0/16'], protocol: 'tcp', ports: '0-21, 23-65535' },
        { family: 4, addresses: ['10.20.0.0/16'], protocol: 'udp', ports: '0-65535' },
        { family: 4, addresses: ['10.20.0.0/16'], protocol: 'other' },
      ],
    ],
  ]);
  expect(report.users.find((u: { email: string }) => u.email === 'bob@example.com').signed_in).toBe('never');

  // Markdown: "never" where the server records, and the stale ones with their evidence.
  const md = await runCli(['review', '--stale-days', '90'], { env });
  expect(md.stdout).not.toContain('unknown (');
  expect(md.stdout).toContain('### Devices with no handshake in 90 days (2)');
  expect(md.stdout).toContain('`=HYPERLINK("http://x")`');

  // A shorter period finds carol's desk too (2 days): only with --stale-days 1.
  const short = JSON.parse((await runCli(['review', '--format', 'json', '--stale-days', '1'], { env })).stdout);
  expect(short.findings.stale_device).toHaveLength(3);

  // CSV parses back; every row has every column; no cell begins a formula.
  const csv = await runCli(['review', '--format', 'csv', '-o', join(dir, 'review.csv')], { env });
  expect(csv.code).toBe(0);
  expect(csv.stdout).toBe('');
  const { readFileSync } = await import('node:fs');
  const rows = parseCsv(readFileSync(join(dir, 'review.csv'), 'utf8'));
  const header = rows[0]!;
  for (const row of rows) {
    expect(row).toHaveLength(header.length);
    for (const cell of row) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
  }
  expect(rows.filter((r) => r[0] === 'stale_device')).toHaveLength(2);
  expect(rows.find((r) => r[0] === 'device' && r[3]!.includes('HYPERLINK'))![3]).toBe(`'=HYPERLINK("http://x")`);

  // With the files: each rule at its file:line, and the access tests run against the server.
  const file = join(dir, 'netform.yaml');
  writeFileSync(
    file,
    [
      'version: 1',
      'users:',
      '  - email: alice@example.com',
      '    rules:',
      '      - { action: accept, destination: 10.20.0.0/16, port_type: tcp, port_range: "22" }',
      '      - { action: drop, destination: 10.20.0.0/16 }',
      'rules:',
      '  - { action: drop, destination: 10.99.0.0/16 }',
      'tests:',
      '  - { name: alice ssh, from: alice@example.com, to: "10.20.1.1:22/tcp", expect: accept }',
      '  - { name: alice no web, from: alice@example.com, to: "10.20.1.1:443/tcp", expect: drop }',
      '',
    ].join('\n'),
  );
  // Locations are relative to where the command runs, as in validate and plan.
  const withFiles = await runCli(['review', '--format', 'json', '-f', 'netform.yaml'], { env, cwd: dir });
  expect(withFiles.stderr).toBe('');
  const located = JSON.parse(withFiles.stdout);
  const aliceRules = located.users.find((u: { email: string }) => u.email === 'alice@example.com').own_rules;
  expect(aliceRules.map((e: { rule: { at: string } }) => e.rule.at)).toEqual(['netform.yaml:5', 'netform.yaml:6']);
  expect(located.everyone.rules[0].rule.at).toBe('netform.yaml:8');
  expect(located.tests).toMatchObject({ passed: 2, failed: 0 });

  // Bad input: a clear error, exit 2 or 1, nothing on stdout.
  const bad = await runCli(['review', '--stale-days', 'soon'], { env });
  expect(bad.code).not.toBe(0);
  expect(bad.stdout).toBe('');
  expect(bad.stderr).toContain('--stale-days');
  expect(bad.stderr).not.toContain('    at ');
}
