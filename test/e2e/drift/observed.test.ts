/**
 * W3.5 "drift describes what it sees", against a real server process: a user added by hand, a
 * field changed by hand and a declared rule missing on the server are said as what was seen (in
 * text, markdown, JSON `observed` and the webhook's `text`), and the plan that would undo it
 * follows under "To undo it, apply would:".
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { startWebhookReceiver } from '../../helpers/drift.js';
import { startScheduledDrift } from '../../helpers/drift-in-process.js';

let server: TestServer;
let dir: string;
let desired: string;
let env: Record<string, string>;
let presharedKey: string;

const MALLORY =
  'user mallory@example.com is on the server but in no file (added outside netform, or removed from the files and not yet applied)';
const MTU = 'device bob@example.com/phone: mtu is 1420 on the server, the files say 1380';
const RULE = /rule drop 10\.9\.0\.0\/16 \\?\(global\\?\) is in the files but not on the server/;

beforeAll(async () => {
  [server, dir] = await Promise.all([startTestServer(), mkdtemp(join(tmpdir(), 'netform-drift-observed-'))]);
  env = { NETFORM_URL: server.url, NETFORM_TOKEN: server.token };
  const publicKey = randomBytes(32).toString('base64');
  const bob = await server.api('POST', '/v0/users', { user: { email: 'bob@example.com' } });
  const device = await server.api('POST', '/v0/devices', {
    device: { user_id: bob.body.data.id, name: 'phone', public_key: publicKey, use_default_mtu: false, mtu: 1380 },
  });
  expect(device.status).toBe(201);
  presharedKey = device.body.data.preshared_key;
  desired = join(dir, 'netform.yaml');
  await writeFile(
    desired,
    [
      'version: 1',
      'settings: { prune: true }',
      'users:',
      '  - { email: admin@example.com, role: admin }',
      '  - email: bob@example.com',
      '    devices:',
      `      - { name: phone, public_key: "${publicKey}", mtu: 1380 }`,
      'rules:',
      '  - { action: drop, destination: 10.9.0.0/16 }',
      '',
    ].join('\n'),
  );
  // By hand, outside netform: a user added, a field changed (the declared rule was never applied).
  expect((await server.api('POST', '/v0/users', { user: { email: 'mallory@example.com' } })).status).toBe(201);
  expect((await server.api('PATCH', `/v0/devices/${device.body.data.id}`, { device: { mtu: 1420 } })).status).toBe(200);
});

afterAll(async () => {
  await Promise.all([server.stop(), rm(dir, { recursive: true, force: true })]);
});

describe('netform drift says what it sees', () => {
  it('in text: what differs first, then the plan that would undo it', async () => {
    const text = await runCli(['drift', '-f', desired], { env });
    expect(text.code).toBe(2);
    expect(text.stdout).toMatch(/^netform drift on http:\/\/127\.0\.0\.1:\d+/);
    expect(text.stdout).not.toContain('netform plan');
    const [seen, undo] = text.stdout.split('To undo it, apply would:\n');
    expect(undo).toBeDefined();
    expect(seen).toContain(`What differs:\n`);
    expect(seen).toContain(`  ${MALLORY}\n`);
    expect(seen).toContain(`  ${MTU}\n`);
    expect(seen).toMatch(RULE);
    // The actions are the plan's, below: apply would delete mallory, update the device, create the rule.
    expect(seen).not.toMatch(/^\s*[-+~] /m);
    expect(undo).toMatch(/^ {2}- user mallory@example\.com/m);
    expect(undo).toMatch(/^ {2}\+ rule drop 10\.9\.0\.0\/16/m);
    expect(undo).toMatch(/mtu: 1420 -> 1380/);
    expect(undo!.trimEnd().split('\n').at(-1)).toMatch(/^Plan: 1 to create, 1 to update, 0 to replace, 1 to delete/);
  });

  it('says an undeclared object apply keeps (prune off) is on the server but in no file', async () => {
    const pruneOff = join(dir, 'prune-off.yaml');
    await writeFile(pruneOff, (await readFile(desired, 'utf8')).replace('settings: { prune: true }\n', ''));
    const text = await runCli(['drift', '-f', pruneOff], { env });
    expect(text.code).toBe(2);
    expect(text.stdout).toContain(`  ${MALLORY}; apply keeps it (prune is off: it, its devices and its rules stay)\n`);
    expect(text.stdout).not.toMatch(/^ {2}- user mallory/m);
  });

  it('in markdown: its own marker and heading, what differs, then the plan', async () => {
    const markdown = await runCli(['drift', '-f', desired, '--format', 'markdown'], { env });
    expect(markdown.code).toBe(2);
    const lines = markdown.stdout.split('\n');
    expect(lines.slice(0, 2)).toEqual(['<!-- netform-drift -->', '### netform drift']);
    expect(markdown.stdout).not.toContain('netform-plan');
    expect(markdown.stdout).not.toContain('### netform plan');
    // Labels and values from the server or the files stand in code spans, as in the plan's markdown.
    const mallory = `- \`user mallory@example.com\` ${MALLORY.slice('user mallory@example.com '.length)}`;
    expect(lines).toContain(mallory);
    expect(lines).toContain('- `device bob@example.com/phone`: `mtu` is `1420` on the server, the files say `1380`');
    expect(markdown.stdout).toMatch(/`rule drop 10\.9\.0\.0\/16 \(global\)` is in the files but not on the server/);
    const undoAt = lines.indexOf('**To undo it, apply would:**');
    expect(undoAt).toBeGreaterThan(lines.indexOf(mallory));
    expect(lines.slice(undoAt).join('\n')).toMatch(/\*\*Plan: 1 to create, 1 to update, 0 to replace, 1 to delete/);
  });

  it('in JSON: every change says what was observed; undeclared and not_checked are listed', async () => {
    const json = await runCli(['drift', '-f', desired, '--format', 'json'], { env });
    expect(json.code).toBe(2);
    const plan = JSON.parse(json.stdout);
    expect(plan).toMatchObject({ format: 'netform.plan', summary: { create: 1, update: 1, delete: 1 } });
    const observed = Object.fromEntries(
      plan.changes.map((c: { id: string; observed: string }) => [c.id.replace(/:.*/, ''), c.observed]),
    );
    expect(observed).toEqual({ user: 'live_only', device: 'differs', rule: 'declared_only' });
    const device = plan.changes.find((c: { kind: string }) => c.kind === 'device');
    expect(device.fields).toContainEqual(expect.objectContaining({ field: 'mtu', before: 1420, after: 1380 }));
    expect(plan.undeclared).toContainEqual(expect.objectContaining({ key: 'mallory@example.com', fate: 'delete' }));
    expect(plan.not_checked).toEqual([]);
    for (const r of [json.stdout, json.stderr]) {
      expect(r).not.toContain(server.token);
      expect(r).not.toContain(presharedKey);
    }
  });

  it("in the webhook's text, and `observed` in the scheduled report", async () => {
    const hook = await startWebhookReceiver();
    // In this process on a clock the test moves: --run-at-start is the only run.
    const drift = startScheduledDrift(
      ['-f', desired, '--every', '*/1 * * * * *', '--run-at-start', '--webhook', hook.url],
      env,
    );
    try {
      await hook.waitForCount(1);
      const { text, report } = hook.received[0]!;
      const said = (JSON.parse(text) as { text: string }).text;
      expect(said).toMatch(/^netform drift on http:\/\/127\.0\.0\.1:\d+: 3 differences from the desired state: /);
      // What happened, not what apply would do ("delete user mallory").
      // Names and values in code spans (--webhook-format slack, the default).
      expect(said).toContain('`user mallory@example.com` is on the server but in no file (added outside netform');
      expect(said).toContain('`device bob@example.com/phone`: `mtu` is `1420` on the server, the files say `1380`');
      expect(said).toContain('`rule drop 10.9.0.0/16 (global)` is in the files but not on the server');
      expect(said).not.toMatch(/\b(delete|create|update) (user|rule|device) /);
      expect(said).not.toContain(server.token);
      expect(report.status).toBe('drift');
      expect(report.changes.map((c) => [c.kind, c.observed]).sort()).toEqual([
        ['device', 'differs'],
        ['rule', 'declared_only'],
        ['user', 'live_only'],
      ]);
      expect(report.undeclared).toContainEqual(expect.objectContaining({ key: 'mallory@example.com' }));
      expect(report.not_checked).toEqual([]);
      drift.stop('SIGTERM');
      expect((await drift.done).code).toBe(0);
    } finally {
      drift.stop();
      await drift.done;
      await hook.close();
    }
  });
});
