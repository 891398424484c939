/**
 * `apply -f PATH --reviewed PLANFILE` with changes that send a secret: a user whose password comes
 * from an environment variable or a file, a device with a preshared key, and their rules. The
 * secrets made now are compared with the reviewed ones by reference and HMAC (under the key of the
 * run, the API token or NETFORM_PLAN_KEY): equal values are written; a value changed since review
 * withholds its change and what depends on it, named by its reference, never by its value (exit 5).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import {
  describeResult,
  netform,
  serverState,
  useServerAndWorkspace,
  wgKey,
  type Workspace,
} from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
useServerAndWorkspace((started) => ({ server, ws } = started));

const secret = (what: string) => `${what}-${randomBytes(9).toString('hex')}`;

/** A team of DOMAIN: kim (password from KIM_PASSWORD, a laptop with a preshared key file, a rule) and mo (password file, a rule). */
function team(domain: string, laptopKey: string): string {
  return `version: 1
settings:
  manage: { users: ["*@${domain}"], rules: [] }
users:
  - email: kim@${domain}
    password: { env: KIM_PASSWORD }
    devices:
      - { name: laptop, public_key: "${laptopKey}", preshared_key: { file: secrets/kim-laptop.psk } }
    rules:
      - { action: accept, destination: 10.10.7.0/24, port_type: tcp, port_range: "3000-3999" }
  - email: mo@${domain}
    password: { file: secrets/mo.password }
    rules:
      - { action: accept, destination: 10.10.8.0/24, port_type: udp, port_range: "53" }
`;
}

interface Secrets {
  kimPassword: string;
  moPassword: string;
  psk: string;
}

/** The team's files in their own folder, the secrets written as a secret manager would. */
function writeTeam(domain: string, laptopKey: string, values: Secrets): string {
  const file = ws.write(`${domain}/netform.yaml`, team(domain, laptopKey));
  writeSecrets(domain, values);
  return file;
}

function writeSecrets(domain: string, values: Secrets): void {
  ws.write(`${domain}/secrets/kim-laptop.psk`, `${values.psk}\n`);
  ws.write(`${domain}/secrets/mo.password`, `${values.moPassword}\n`);
}

async function objectsOf(domain: string) {
  const { users, devices, rules } = await serverState(server);
  const ours = users.filter((u) => (u.email as string).endsWith(`@${domain}`));
  const ids = new Map(ours.map((u) => [u.id as string, u.email as string]));
  return {
    users: ours.map((u) => u.email as string).sort(),
    devices: devices
      .filter((d) => ids.has(d.user_id))
      .map((d) => ({ owner: ids.get(d.user_id), name: d.name, public_key: d.public_key, psk: d.preshared_key })),
    rules: rules
      .filter((r) => ids.has(r.user_id))
      .map((r) => `${ids.get(r.user_id)} ${r.action} ${r.destination} ${r.port_type}:${r.port_range}`)
      .sort(),
  };
}

/** The two ways plan and apply share a key: the API token, or NETFORM_PLAN_KEY set for both. */
const KEYS = [
  { name: 'the API token', env: {} as Record<string, string> },
  { name: 'NETFORM_PLAN_KEY', env: { NETFORM_PLAN_KEY: randomBytes(32).toString('base64') } },
];

describe.each(KEYS)('apply --reviewed with secrets, sealed under $name', ({ name, env: keyEnv }) => {
  const tag = name === 'NETFORM_PLAN_KEY' ? 'k' : 't';

  it('writes the reviewed users, device and rules that send a secret (exit 0), with the values reviewed', async () => {
    const domain = `onboard-${tag}.test`;
    const laptopKey = wgKey();
    const values = { kimPassword: secret('kim-pw'), moPassword: secret('mo-pw'), psk: wgKey() };
    const file = writeTeam(domain, laptopKey, values);
    const env = { ...keyEnv, KIM_PASSWORD: values.kimPassword };
    const reviewed = ws.path(`${domain}-A.json`);
    const planned = await netform(server, ['plan', '-f', file, '-o', reviewed], env);
    expect(planned.code, describeResult(planned)).toBe(2);
    expect(planned.stdout).toContain('Plan: 5 to create, 0 to update, 0 to replace, 0 to delete.');

    const merged = await netform(server, ['apply', '-f', file, '--reviewed', reviewed], env);
    expect(merged.code, describeResult(merged)).toBe(0);
    expect(merged.stdout).not.toContain('withheld');
    expect(merged.stdout).toContain('Apply: 5 done, 0 failed, 0 not attempted.');
    for (const value of Object.values(values)) expect(merged.stdout + merged.stderr).not.toContain(value);

    const read = await objectsOf(domain);
    expect(read.users).toEqual([`kim@${domain}`, `mo@${domain}`]);
    expect(read.devices).toEqual([{ owner: `kim@${domain}`, name: 'laptop', public_key: laptopKey, psk: values.psk }]);
    expect(read.rules).toEqual([
      `kim@${domain} accept 10.10.7.0/24 tcp:3000 - 3999`,
      `mo@${domain} accept 10.10.8.0/24 udp:53`,
    ]);
    // The reviewed plan holds references and HMACs, never the values.
    const saved = readFileSync(reviewed, 'utf8');
    for (const value of Object.values(values)) expect(saved).not.toContain(value);
  });

  it('withholds a change whose secret changed since review, naming its reference, and what depends on it (exit 5)', async () => {
    const domain = `changed-${tag}.test`;
    const laptopKey = wgKey();
    const values = { kimPassword: secret('kim-pw'), moPassword: secret('mo-pw'), psk: wgKey() };
    const file = writeTeam(domain, laptopKey, values);
    const reviewed = ws.path(`${domain}-A.json`);
    const planEnv = { ...keyEnv, KIM_PASSWORD: values.kimPassword };
    expect((await netform(server, ['plan', '-f', file, '-o', reviewed], planEnv)).code).toBe(2);

    // Between review and merge: kim's password variable and mo's password file get other values.
    const later = { ...values, kimPassword: secret('kim-pw-new'), moPassword: secret('mo-pw-new') };
    writeSecrets(domain, later);
    const merged = await netform(server, ['apply', '-f', file, '--reviewed', reviewed], {
      ...keyEnv,
      KIM_PASSWORD: later.kimPassword,
    });
    expect(merged.code, describeResult(merged)).toBe(5);
    expect(merged.stdout).toContain(
      `  + user kim@${domain}\n      withheld: changed since review (the value of KIM_PASSWORD is not the reviewed one)\n`,
    );
    expect(merged.stdout).toContain(
      `  + user mo@${domain}\n      withheld: changed since review (the value of secrets/mo.password is not the reviewed one)\n`,
    );
    expect(merged.stdout).toContain(
      `  + device kim@${domain}/laptop\n      withheld: depends on a withheld change (needs user kim@${domain})\n`,
    );
    expect(merged.stdout).toContain(`withheld: depends on a withheld change (needs user mo@${domain})`);
    expect(merged.stderr).toContain('Withheld 5 changes that the reviewed plan does not show as they are now');
    for (const value of [...Object.values(values), later.kimPassword, later.moPassword])
      expect(merged.stdout + merged.stderr).not.toContain(value);
    expect(await objectsOf(domain)).toEqual({ users: [], devices: [], rules: [] });

    // Only the preshared key changed: the device alone (and nothing that needs it) is withheld.
    writeSecrets(domain, { ...values, psk: wgKey() });
    const pskOnly = await netform(server, ['apply', '-f', file, '--reviewed', reviewed], planEnv);
    expect(pskOnly.code, describeResult(pskOnly)).toBe(5);
    expect(pskOnly.stdout).toContain(
      `  + device kim@${domain}/laptop\n      withheld: changed since review (the value of secrets/kim-laptop.psk is not the reviewed one)\n`,
    );
    expect(pskOnly.stdout).toContain('Apply: 4 done, 0 failed, 0 not attempted.');
    const read = await objectsOf(domain);
    expect(read.users).toEqual([`kim@${domain}`, `mo@${domain}`]);
    expect(read.devices).toEqual([]);
  });
});
