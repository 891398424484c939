/**
 * Scheduled drift against a real server, every second: clean runs, a change made by hand
 * detected at the next run, the webhook told of each change of status, a merged change of the
 * files picked up without a restart, and a clean stop. In this process on a clock the test moves
 * (no test waits for a tick), but for one smoke test: the built CLI as a process on the real
 * clock, a real tick, then SIGTERM and a clean exit.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { startDrift, startWebhookReceiver, type DriftProcess, type WebhookReceiver } from '../../helpers/drift.js';
import { startScheduledDrift, type ScheduledDrift } from '../../helpers/drift-in-process.js';
import { runInProcess } from '../../helpers/run-in-process.js';

const EVERY_SECOND = '*/1 * * * * *';

let server: TestServer;
let dir: string;
let hook: WebhookReceiver;
let drift: ScheduledDrift | undefined;
let child: DriftProcess | undefined;

/** What the repository declares; mtu is managed because it is written. */
function desiredYaml(publicKey: string, mtu: number): string {
  return [
    'version: 1',
    'users:',
    // The server's admin is declared: an admin in no file keeps every run `drift` (W3.5).
    '  - { email: admin@example.com, role: admin }',
    '  - email: alice@example.com',
    '    devices:',
    '      - name: laptop',
    `        public_key: "${publicKey}"`,
    `        mtu: ${mtu}`,
    '    rules:',
    '      - { action: accept, destination: 10.1.0.0/16, port_type: tcp, port_range: "443" }',
    'rules:',
    '  - { action: drop, destination: 10.9.0.0/16 }',
    '',
  ].join('\n');
}

beforeEach(async () => {
  [server, dir, hook] = await Promise.all([
    startTestServer(),
    mkdtemp(join(tmpdir(), 'netform-drift-')),
    startWebhookReceiver(),
  ]);
});

afterEach(async () => {
  drift?.stop();
  await drift?.done;
  drift = undefined;
  child?.kill();
  child = undefined;
  await Promise.all([server.stop(), hook.close(), rm(dir, { recursive: true, force: true })]);
});

describe('netform drift --every', () => {
  it('reports clean runs, detects a hand change at the next run, tells the webhook, follows merged files, and stops on SIGTERM', async () => {
    const publicKey = randomBytes(32).toString('base64');
    const alice = await server.api('POST', '/v0/users', { user: { email: 'alice@example.com' } });
    expect(alice.status).toBe(201);
    const device = await server.api('POST', '/v0/devices', {
      device: { user_id: alice.body.data.id, name: 'laptop', public_key: publicKey, use_default_mtu: false, mtu: 1380 },
    });
    expect(device.status).toBe(201);
    expect(
      (
        await server.api('POST', '/v0/rules', {
          rule: {
            user_id: alice.body.data.id,
            action: 'accept',
            destination: '10.1.0.0/16',
            port_type: 'tcp',
            port_range: '443',
          },
        })
      ).status,
    ).toBe(201);
    expect(
      (await server.api('POST', '/v0/rules', { rule: { action: 'drop', destination: '10.9.0.0/16' } })).status,
    ).toBe(201);
    const desired = join(dir, 'netform.yaml');
    await writeFile(desired, desiredYaml(publicKey, 1380));
    const reportFile = join(dir, 'drift-report.json');

    drift = startScheduledDrift(
      ['-f', desired, '--every', EVERY_SECOND, '--report', reportFile, '--webhook', hook.url],
      { NETFORM_URL: server.url, NETFORM_TOKEN: server.token },
    );

    // Clean runs, one per second of the schedule's clock.
    const first = await drift.runOnce();
    const second = await drift.runOnce();
    expect(drift.reports).toEqual([first, second]);
    expect(first).toMatchObject({
      format: 'netform.drift',
      format_version: 1,
      status: 'clean',
      server: server.url,
      changes: [],
      skipped_ticks: 0,
    });
    expect(second).toMatchObject({ status: 'clean', skipped_ticks: 0 });
    expect(Date.parse(second.time) - Date.parse(first.time)).toBe(1000);
    expect(typeof first.duration_ms).toBe('number');
    expect(JSON.parse(await readFile(reportFile, 'utf8')).status).toBe('clean');

    // A change made by hand, straight through the API, shows in the next run.
    const changedAt = drift.reports.length;
    const patched = await server.api('PATCH', `/v0/devices/${device.body.data.id}`, { device: { mtu: 1400 } });
    expect(patched.status).toBe(200);
    const drifted = await drift.runOnce();
    expect(drift.reports).toHaveLength(changedAt + 1);
    expect(drifted.status).toBe('drift');
    expect(drifted.counts.update).toBe(1);
    expect(drifted.changes).toHaveLength(1);
    expect(drifted.changes[0]).toMatchObject({ kind: 'device', action: 'update' });
    expect(drifted.changes[0]!.fields).toContainEqual(
      expect.objectContaining({ field: 'mtu', before: 1400, after: 1380 }),
    );
    expect(JSON.parse(await readFile(reportFile, 'utf8')).status).toBe('drift');

    // The webhook heard of the first status and of the change, not of the repeats.
    expect(hook.received).toHaveLength(2);
    expect(hook.received.map((r) => r.report.status)).toEqual(['clean', 'drift']);
    expect(hook.received[1]!.report.changes[0]!.kind).toBe('device');
    for (const { headers, text } of hook.received) {
      expect(headers.authorization).toBeUndefined();
      expect(text).not.toContain(server.token);
    }

    // New drift while drift is open: the set of differences changed, so the webhook hears of it.
    expect((await server.api('PATCH', `/v0/devices/${device.body.data.id}`, { device: { mtu: 1420 } })).status).toBe(
      200,
    );
    await drift.runOnce();
    expect(hook.received).toHaveLength(3);
    expect(hook.received[2]!.report.status).toBe('drift');
    expect(hook.received[2]!.report.changes[0]!.fields).toContainEqual(
      expect.objectContaining({ field: 'mtu', before: 1420, after: 1380 }),
    );
    expect((hook.received[2]!.report as unknown as { text: string }).text).toBe(
      `netform drift on ${server.url}: 1 difference from the desired state: \`device alice@example.com/laptop\`: \`mtu\` is \`1420\` on the server, the files say \`1380\``,
    );

    // The team merges the change into the files: the next runs read them again and are clean.
    const mergedAt = drift.reports.length;
    await writeFile(desired, desiredYaml(publicKey, 1420));
    expect((await drift.runOnce()).status).toBe('clean');
    expect(drift.reports).toHaveLength(mergedAt + 1);
    expect(hook.received).toHaveLength(4);
    expect(hook.received[3]!.report.status).toBe('clean');
    expect((hook.received[3]!.report as unknown as { text: string }).text).toBe(
      `netform drift on ${server.url}: back to clean: the server matches the desired state`,
    );

    // A stop request (SIGTERM for the process): stops after the run in progress, exit 0, every stdout line a report.
    drift.stop('SIGTERM');
    const { code } = await drift.done;
    expect(code).toBe(0);
    expect(drift.stderr()).toMatch(/drift: SIGTERM: stopping/);
    expect(drift.stderr()).toMatch(new RegExp(`drift: stopped after ${drift.reports.length} run\\(s\\)`));
    const everything = JSON.stringify(drift.reports) + drift.stderr();
    expect(everything).not.toContain(server.token);
    expect(everything).not.toContain(device.body.data.preshared_key);
    expect(everything).not.toContain('s3cr3t');
  });

  it('refuses settings that can never work before scheduling anything', async () => {
    const desired = join(dir, 'netform.yaml');
    await writeFile(desired, 'version: 1\n');
    const env = { NETFORM_URL: server.url, NETFORM_TOKEN: server.token };
    const drift = (args: string[], runEnv: Record<string, string | undefined> = env) =>
      runInProcess(['drift', '-f', desired, ...args], { env: { NETFORM_URL: undefined, ...runEnv } });

    const badCron = await drift(['--every', '61 * * * *']);
    expect(badCron.code).toBe(1);
    expect(badCron.stderr).toMatch(/--every: "61 \* \* \* \*" is not a valid cron expression/);

    const noServer = await drift(['--every', EVERY_SECOND], { NETFORM_TOKEN: server.token });
    expect(noServer.code).toBe(1);
    expect(noServer.stderr).toMatch(/no server given/);

    await writeFile(desired, 'version: 1\nusers:\n  - email: not-an-email\n');
    const badFile = await drift(['--every', EVERY_SECOND]);
    expect(badFile.code).toBe(1);
    expect(badFile.stderr).toMatch(/netform\.yaml:3:\d+/);

    await writeFile(desired, 'version: 1\n');
    const badReport = await drift(['--every', EVERY_SECOND, '--report', join(dir, 'missing', 'report.json')]);
    expect(badReport.code).toBe(1);
    expect(badReport.stderr).toMatch(/--report: the folder .*missing does not exist/);

    for (const r of [badCron, noServer, badFile, badReport]) expect(r.stdout).toBe('');
  });

  it('as a process on the real clock: a real tick, then SIGTERM and a clean exit', async () => {
    const desired = join(dir, 'netform.yaml');
    await writeFile(desired, 'version: 1\nusers:\n  - { email: admin@example.com, role: admin }\n');
    const reportFile = join(dir, 'drift-report.json');
    child = startDrift(['-f', desired, '--every', EVERY_SECOND, '--report', reportFile], {
      NETFORM_URL: server.url,
      NETFORM_TOKEN: server.token,
    });
    const report = await child.waitForReport(() => true);
    expect(report).toMatchObject({ format: 'netform.drift', status: 'clean', server: server.url, skipped_ticks: 0 });
    await expect.poll(async () => JSON.parse(await readFile(reportFile, 'utf8')).status).toBe('clean');

    child.child.kill('SIGTERM');
    const { code } = await child.exited;
    expect(code).toBe(0);
    expect(child.stderr()).toMatch(/drift: SIGTERM: stopping/);
    expect(child.stderr()).toMatch(new RegExp(`drift: stopped after ${child.reports.length} run\\(s\\)`));
    expect(JSON.stringify(child.reports) + child.stderr()).not.toContain(server.token);
  });
});
