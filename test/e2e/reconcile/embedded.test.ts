/**
 * `--embedded`: the bundled server runs in-process on a local SQLite file with an admin token of
 * its own, so the README's first steps work on a fresh machine with no server at all.
 */
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { describeResult, workspace, type Workspace } from '../../helpers/workspace.js';

const EXAMPLE = fileURLToPath(new URL('../../../examples/basic', import.meta.url));
const NO_SERVER = {
  NETFORM_URL: undefined,
  NETFORM_TOKEN: undefined,
  NETFORM_TOKEN_USER: undefined,
  ALICE_PASSWORD: undefined,
};
let ws: Workspace;

beforeAll(() => {
  ws = workspace();
});
afterAll(() => ws?.cleanup());

describe('--embedded', () => {
  it('applies the basic example on a fresh folder, keeps its token to its owner, and converges', async () => {
    const applied = await runCli(['apply', '--embedded', '-f', EXAMPLE, '--yes'], { cwd: ws.dir, env: NO_SERVER });
    expect(applied.code, describeResult(applied)).toBe(0);
    expect(applied.stdout).toMatch(/Apply: \d+ done, 0 failed, 0 not attempted\./);
    expect(statSync(ws.path('.netform/embedded.db')).isFile()).toBe(true);
    expect(statSync(ws.path('.netform/embedded.db.token')).mode & 0o777).toBe(0o600);

    const planned = await runCli(['plan', '--embedded', '-f', EXAMPLE], { cwd: ws.dir, env: NO_SERVER });
    expect(planned.code, describeResult(planned)).toBe(0);
    expect(planned.stdout).toContain(`netform plan for embedded:${ws.path('.netform/embedded.db')}`);
  });

  it('takes another database path', async () => {
    const planned = await runCli(['plan', '--embedded', 'other/state.db', '-f', EXAMPLE], {
      cwd: ws.dir,
      env: NO_SERVER,
    });
    expect(planned.code, describeResult(planned)).toBe(2);
    expect(statSync(ws.path('other/state.db.token')).mode & 0o777).toBe(0o600);
  });

  it('export -> plan is clean with --embedded, the configuration: the export wrote included', async () => {
    const db = 'roundtrip/e.db';
    const desired = ws.write(
      'roundtrip/desired.yaml',
      'version: 1\nconfiguration:\n  default_client_mtu: 1380\nusers:\n  - email: carol@embedded.test\n',
    );
    const run = (args: string[]) => runCli(args, { cwd: ws.dir, env: NO_SERVER });
    const applied = await run(['apply', '--embedded', db, '-f', desired, '--yes']);
    expect(applied.code, describeResult(applied)).toBe(0);
    const exported = await run(['export', '--embedded', db, '-o', 'roundtrip/out']);
    expect(exported.code, describeResult(exported)).toBe(0);
    expect(readFileSync(ws.path('roundtrip/out/netform.yaml'), 'utf8')).toMatch(
      /^configuration:\n(?: {2}.*\n)*? {2}default_client_mtu: 1380$/m,
    );
    const planned = await run(['plan', '--embedded', db, '-f', 'roundtrip/out']);
    expect(planned.code, describeResult(planned)).toBe(0);
    expect(planned.stdout).toContain('No changes: the server matches the desired state.');

    // The configuration is compared too: an edit of it is planned.
    ws.write(
      'roundtrip/out/netform.yaml',
      readFileSync(ws.path('roundtrip/out/netform.yaml'), 'utf8').replace('1380', '1400'),
    );
    const edited = await run(['plan', '--embedded', db, '-f', 'roundtrip/out']);
    expect(edited.code, describeResult(edited)).toBe(2);
    expect(edited.stdout).toContain('default_client_mtu: 1380 -> 1400');
  });

  it("netform's own admin is in no scope: a file without manage plans clean after apply, and is not exported", async () => {
    const db = 'own/e.db';
    const desired = ws.write('own/desired.yaml', 'version: 2\nusers:\n  - email: dora@embedded.test\n');
    const run = (args: string[]) => runCli(args, { cwd: ws.dir, env: NO_SERVER });
    const applied = await run(['apply', '--embedded', db, '-f', desired, '--yes']);
    expect(applied.code, describeResult(applied)).toBe(0);
    const planned = await run(['plan', '--embedded', db, '-f', desired]);
    expect(planned.code, describeResult(planned)).toBe(0);
    expect(planned.stdout).not.toContain('netform-admin@embedded.local');
    const exported = await run(['export', '--embedded', db]);
    expect(exported.code, describeResult(exported)).toBe(0);
    expect(exported.stdout).toContain('dora@embedded.test');
    expect(exported.stdout).not.toContain('netform-admin@embedded.local');
  });

  it('refuses --url together with --embedded', async () => {
    const both = await runCli(['plan', '--embedded', '--url', 'http://127.0.0.1:1', '-f', EXAMPLE], {
      cwd: ws.dir,
      env: NO_SERVER,
    });
    expect(both.code).toBe(1);
    expect(both.stderr).toBe('error: --url and --embedded exclude each other: choose one\n');
  });
});
