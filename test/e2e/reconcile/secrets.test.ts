/**
 * Secrets never appear in anything netform prints or writes: unique passwords, preshared keys
 * (declared and server-generated) and the token are planted, every command is run in every
 * format, and every byte of output and of the saved plans is searched for them.
 */
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CliResult } from '../../helpers/cli.js';
import type { TestServer } from '../../helpers/server.js';
import {
  describeResult,
  netform,
  serverState,
  wgKey,
  type Workspace,
  useServerAndWorkspace,
} from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
const PASSWORD_1 = `pw-one-${randomBytes(8).toString('hex')}`;
const PASSWORD_2 = `pw-two-${randomBytes(8).toString('hex')}`;
const PSK_1 = wgKey();
const PSK_2 = wgKey();

const yaml = `version: 1
users:
  - email: alice@corp.test
    password: { env: ALICE_PW }
    devices:
      - { name: laptop, public_key: "${wgKey()}", preshared_key: { file: psk/alice.psk } }
      - { name: phone, public_key: "${wgKey()}" }
`;

useServerAndWorkspace((started) => ({ server, ws } = started));

describe('secrets', () => {
  it('appear in no output, error or saved plan', async () => {
    const outputs: { what: string; text: string }[] = [];
    const keep = (what: string, r: CliResult) => {
      outputs.push({ what, text: r.stdout + r.stderr });
      return r;
    };
    const file = ws.write('netform.yaml', yaml);
    ws.write('psk/alice.psk', `${PSK_1}\n`);
    ws.write('token', server.token);
    const env = { ALICE_PW: PASSWORD_1 };

    for (const format of ['text', 'json', 'markdown']) {
      keep(
        `plan ${format}`,
        await netform(server, ['plan', '-f', file, '--format', format, '-o', ws.path(`plan-${format}.json`)], env),
      );
    }
    const created = keep(
      'apply',
      await netform(server, ['apply', '-f', file, '--yes', '--token-file', ws.path('token')], {
        ...env,
        NETFORM_TOKEN: undefined,
      }),
    );
    expect(created.code, describeResult(created)).toBe(0);
    const state = await serverState(server);
    const generatedPsk = state.devices.find((d: any) => d.name === 'phone').preshared_key as string;
    expect(state.devices.find((d: any) => d.name === 'laptop').preshared_key).toBe(PSK_1);

    ws.write('psk/alice.psk', PSK_2);
    const env2 = { ALICE_PW: PASSWORD_2 };
    // A saved plan's secret files are read within the folder apply runs in (the workspace: no git).
    const rotated = keep(
      'plan rotate',
      await netform(server, ['plan', '-f', file, '--rotate-passwords', '-o', ws.path('rotate.json')], env2, ws.dir),
    );
    expect(rotated.code, describeResult(rotated)).toBe(2);
    // The password is sent again (netform cannot tell whether it differs); the key did change.
    expect(rotated.stdout).toContain(
      '      password: (sensitive value sent again; the server cannot show whether it differs)\n',
    );
    expect(rotated.stdout).not.toContain('password: (sensitive value changed)');
    expect(rotated.stdout).toContain('      preshared_key: (sensitive value changed)\n');
    const rotatedMarkdown = keep(
      'plan rotate markdown',
      await netform(server, ['plan', '-f', file, '--rotate-passwords', '--format', 'markdown'], env2, ws.dir),
    );
    expect(rotatedMarkdown.stdout).toContain(
      'password: (sensitive value sent again; the server cannot show whether it differs)',
    );
    expect(rotatedMarkdown.stdout).not.toContain('password: (sensitive value changed)');
    const rotatedJson = keep(
      'plan rotate json',
      await netform(server, ['plan', '-f', file, '--rotate-passwords', '--format', 'json'], env2, ws.dir),
    );
    const passwordField = JSON.parse(rotatedJson.stdout)
      .changes.flatMap((c: { fields: { field: string }[] }) => c.fields)
      .find((f: { field: string }) => f.field === 'password');
    expect(passwordField).toMatchObject({ field: 'password', sensitive: true, resent: true });
    const applied = keep(
      'apply saved',
      await netform(server, ['apply', ws.path('rotate.json'), '--yes'], env2, ws.dir),
    );
    expect(applied.code, describeResult(applied)).toBe(0);
    expect((await serverState(server)).devices.find((d: any) => d.name === 'laptop').preshared_key).toBe(PSK_2);
    keep('stale', await netform(server, ['apply', ws.path('rotate.json'), '--yes'], env2, ws.dir));
    keep('plan json again', await netform(server, ['plan', '-f', file, '--format', 'json'], env2));

    const missing = keep(
      'missing secret',
      await netform(server, ['apply', '-f', file, '--yes', '--rotate-passwords'], { ALICE_PW: undefined }),
    );
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('ALICE_PW');
    keep('bad token', await netform(server, ['plan', '-f', file, '--token', `${server.token}x`], env2));

    for (const name of ['plan-text.json', 'plan-json.json', 'plan-markdown.json', 'rotate.json']) {
      outputs.push({ what: name, text: readFileSync(ws.path(name), 'utf8') });
    }
    const secrets = { PASSWORD_1, PASSWORD_2, PSK_1, PSK_2, generatedPsk, token: server.token };
    for (const { what, text } of outputs) {
      for (const [name, value] of Object.entries(secrets)) {
        expect(text.includes(value), `${name} found in ${what}`).toBe(false);
      }
    }
    expect(outputs.length).toBe(16);
  });
});
