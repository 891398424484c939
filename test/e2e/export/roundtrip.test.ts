/**
 * `netform export` of a server seeded with every kind of field, then `netform plan` on what it
 * printed: no changes (exit 0). Also with --no-addresses, and a hand change after the export shows.
 */
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runCli } from '../../helpers/cli.js';
import { SEEDED_EMAILS, startSeededServer, type SeededServer } from '../../helpers/export-seed.js';

let seeded: SeededServer;

beforeAll(async () => {
  seeded = await startSeededServer();
});

afterAll(async () => {
  await seeded.close();
});

async function exportToFile(name: string, args: string[] = []): Promise<{ file: string; text: string }> {
  const exported = await runCli(['export', ...args], { env: seeded.env, cwd: seeded.dir });
  expect(exported.code).toBe(0);
  seeded.expectNoSecrets(exported.stdout + exported.stderr);
  const file = join(seeded.dir, name);
  await writeFile(file, exported.stdout);
  return { file, text: exported.stdout };
}

describe('netform export round trip', () => {
  it('prints one document, in order, without secrets, that plans with no changes', async () => {
    const { file, text } = await exportToFile('export.yaml');
    expect(text.split('\n')[0]).toMatch(/^# yaml-language-server: \$schema=\S+netform\.schema\.json$/);
    const doc = parse(text);
    expect(doc.users.map((u: { email: string }) => u.email)).toEqual(SEEDED_EMAILS);
    const alice = doc.users[1];
    const workstation = alice.devices.find((d: { name: string }) => d.name === 'workstation');
    expect(workstation).toMatchObject({
      mtu: 1380,
      persistent_keepalive: 0,
      ipv4: '10.3.2.50',
      ipv6: 'fd00::3:2:50',
      endpoint: 'vpn.example.com:51821',
    });
    expect(workstation).not.toHaveProperty('preshared_key');
    expect(alice.devices.find((d: { name: string }) => d.name === 'laptop')).not.toHaveProperty('mtu');
    expect(alice).not.toHaveProperty('role');
    expect(doc.users[3]).toEqual({ email: "o'brien+vpn@example.com" });

    const plan = await runCli(['plan', '-f', file], { env: seeded.env });
    expect(plan.stderr).toBe('');
    expect(plan.stdout).toMatch(/No changes: the server matches the desired state\./);
    expect(plan.code).toBe(0);
    expect((await runCli(['drift', '-f', file], { env: seeded.env })).code).toBe(0);
  });

  it('leaves tunnel addresses out with --no-addresses, still with no changes', async () => {
    const { file, text } = await exportToFile('no-addresses.yaml', ['--no-addresses']);
    expect(text).not.toMatch(/^\s*ipv[46]:/m);
    expect((await runCli(['plan', '-f', file], { env: seeded.env })).code).toBe(0);
  });

  it('with --explicit-defaults (or without), still no changes, and a hand promotion then shows', async () => {
    const { file, text } = await exportToFile('explicit.yaml', ['--explicit-defaults']);
    expect(text).toMatch(/^\s+role: unprivileged$/m);
    expect(text).toMatch(/^\s+use_default_mtu: true$/m);
    expect((await runCli(['plan', '-f', file], { env: seeded.env })).code).toBe(0);

    const { server } = seeded;
    expect((await server.api('PATCH', '/v0/users/carol@example.com', { user: { role: 'admin' } })).status).toBe(200);
    try {
      const drift = await runCli(['drift', '-f', file, '--format', 'json'], { env: seeded.env });
      expect(drift.code).toBe(2);
      const changes = JSON.parse(drift.stdout).changes as {
        kind: string;
        fields: { field: string; before: unknown; after: unknown }[];
      }[];
      expect(changes).toHaveLength(1);
      expect(changes[0]!.fields).toEqual([
        expect.objectContaining({ field: 'role', before: 'admin', after: 'unprivileged' }),
      ]);
      // The default export, made while carol was unprivileged, leaves her role out, which means
      // unprivileged, managed: the same promotion is drift there too, and an ordinary change
      // (version 2), exactly as with --explicit-defaults.
      expect(
        (await server.api('PATCH', '/v0/users/carol@example.com', { user: { role: 'unprivileged' } })).status,
      ).toBe(200);
      const { file: lenient, text: lenientText } = await exportToFile('lenient.yaml');
      expect(lenientText).not.toMatch(/^\s+role: unprivileged$/m);
      expect((await server.api('PATCH', '/v0/users/carol@example.com', { user: { role: 'admin' } })).status).toBe(200);
      const lenientDrift = await runCli(['drift', '-f', lenient, '--format', 'json'], { env: seeded.env });
      expect(lenientDrift.code).toBe(2);
      const lenientChanges = JSON.parse(lenientDrift.stdout).changes as { id: string; now_managed?: string[] }[];
      expect(lenientChanges.map((c) => c.id)).toEqual(['user:carol@example.com']);
      expect(lenientChanges[0]!.now_managed).toBeUndefined();
      expect(lenientText).toMatch(/^version: 2$/m);
      expect(text).toMatch(/^version: 2$/m);
    } finally {
      await server.api('PATCH', '/v0/users/carol@example.com', { user: { role: 'unprivileged' } });
    }
  });

  it('writes values that are then managed: a hand change after the export shows in plan', async () => {
    const { file } = await exportToFile('pinned.yaml');
    const { server, ids } = seeded;
    expect((await server.api('PATCH', `/v0/devices/${ids.workstation}`, { device: { mtu: 1400 } })).status).toBe(200);
    expect(
      (await server.api('PATCH', `/v0/rules/${ids.aliceHttpsRule}`, { rule: { port_range: '8443' } })).status,
    ).toBe(200);
    try {
      const plan = await runCli(['plan', '-f', file, '--format', 'json'], { env: seeded.env });
      expect(plan.code).toBe(2);
      const changes = JSON.parse(plan.stdout).changes as { kind: string; fields: { field: string }[] }[];
      expect(changes.find((c) => c.kind === 'device')!.fields.map((f) => f.field)).toEqual(['mtu']);
      expect(changes.some((c) => c.kind === 'rule')).toBe(true);
    } finally {
      await server.api('PATCH', `/v0/devices/${ids.workstation}`, { device: { mtu: 1380 } });
      await server.api('PATCH', `/v0/rules/${ids.aliceHttpsRule}`, { rule: { port_range: '443' } });
    }
  });
});
