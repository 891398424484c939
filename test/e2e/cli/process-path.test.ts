/**
 * The built CLI as a process answers as run(argv, io) does in the test process, for the commands
 * whose other tests run in-process and that the safety-net table does not drive: `review`,
 * `reach`, `who-can-reach`, `server defaults`. Same exit code, same stdout (but for the time a
 * report was made), same stderr. And the two apply paths whose other tests run in-process:
 * `apply --reviewed` (e2e/reconcile/reviewed.test.ts) and `apply --embedded`
 * (e2e/reconcile/embedded.test.ts), each once as a process.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runCliProcessNode, SHORT_LIVED_NODE, type CliResult } from '../../helpers/cli.js';
import { reviewFixture, type ReviewFixture } from '../../helpers/review-scenario.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import {
  create,
  describeResult,
  netform,
  netformProcess,
  wgKey,
  workspace,
  type Workspace,
} from '../../helpers/workspace.js';

let fixture: ReviewFixture;
let ws: Workspace;

beforeAll(async () => {
  [fixture, ws] = await Promise.all([reviewFixture(), workspace()]);
  ws.write(
    'netform.yaml',
    `version: 1
users:
  - email: alice@example.com
    devices:
      - { name: laptop, public_key: "${wgKey()}" }
    rules:
      - { action: accept, destination: 10.1.0.0/16, port_type: tcp, port_range: "22" }
  - email: carol@example.com
rules:
  - { action: drop, destination: 10.0.0.0/8 }
`,
  );
});

afterAll(async () => {
  await fixture?.stop();
  ws?.cleanup();
});

/** The result, but for the time a report says it was made (the two runs are not the same instant). */
const timeless = (r: CliResult) => ({
  code: r.code,
  stdout: r.stdout.replace(/"generated_at": "[^"]+"/g, '"generated_at": "…"'),
  stderr: r.stderr,
});

describe('a process of the built CLI answers as run(argv, io)', () => {
  const cases: Array<[string, () => string[], number]> = [
    ['review --format json', () => ['review', '--format', 'json'], 0],
    ['reach', () => ['reach', 'alice@example.com', '-f', ws.path('netform.yaml')], 0],
    ['who-can-reach', () => ['who-can-reach', '10.1.2.3:22/tcp', '-f', ws.path('netform.yaml')], 0],
    ['server defaults show', () => ['server', 'defaults', 'show', '--json', '--db', fixture.server.dbPath], 0],
    ['an unknown flag', () => ['reach', '--no-such-flag'], 1],
  ];
  it.each(cases)('%s', async (_name, args, code) => {
    const options = { env: fixture.env, cwd: ws.dir };
    const [asProcess, inProcess] = await Promise.all([
      runCliProcessNode(SHORT_LIVED_NODE, args(), options),
      runCli(args(), options),
    ]);
    expect(inProcess.code, inProcess.stderr).toBe(code);
    expect(timeless(asProcess)).toEqual(timeless(inProcess));
  });
});

describe('the apply paths as processes of the built CLI', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it(
    'apply --reviewed, with no terminal and no --yes: writes the reviewed change, withholds one made meanwhile (exit 5)',
    { timeout: 120_000 },
    async () => {
      ws.write(
        'reviewed/netform.yaml',
        'version: 1\nsettings:\n  prune: true\n  manage: { users: ["*@reviewed.test"], rules: [] }\nusers:\n  - email: kim@reviewed.test\n',
      );
      const plan = ws.path('reviewed/plan.json');
      const planned = await netform(server, ['plan', '-f', ws.path('reviewed'), '-o', plan]);
      expect(planned.code, describeResult(planned)).toBe(2);
      await create(server, 'users', { email: 'newhire@reviewed.test' });

      const merged = await netformProcess(server, ['apply', '-f', ws.path('reviewed'), '--reviewed', plan]);
      expect(merged.code, describeResult(merged)).toBe(5);
      expect(merged.stdout).toContain('created user kim@reviewed.test (');
      expect(merged.stdout).toContain('  - user newhire@reviewed.test  (declared in no file (prune))\n');
      expect(merged.stdout).toContain('Apply: 1 done, 0 failed, 0 not attempted.');
      expect(merged.stderr).toContain('Withheld 1 change that the reviewed plan does not show as it is now');
      expect(merged.stdout + merged.stderr).not.toContain(server.token);
    },
  );

  it(
    'apply --embedded on a fresh folder: the bundled server in the process, its token kept to its owner',
    { timeout: 120_000 },
    async () => {
      const example = fileURLToPath(new URL('../../../examples/basic', import.meta.url));
      const noServer = {
        NETFORM_URL: undefined,
        NETFORM_TOKEN: undefined,
        NETFORM_TOKEN_USER: undefined,
        ALICE_PASSWORD: undefined,
      };
      const folder = ws.path('embedded');
      ws.write('embedded/.keep', '');
      const applied = await runCliProcessNode(SHORT_LIVED_NODE, ['apply', '--embedded', '-f', example, '--yes'], {
        cwd: folder,
        env: noServer,
      });
      expect(applied.code, describeResult(applied)).toBe(0);
      expect(applied.stdout).toMatch(/Apply: \d+ done, 0 failed, 0 not attempted\./);
      expect(statSync(join(folder, '.netform/embedded.db.token')).mode & 0o777).toBe(0o600);
      const planned = await runCli(['plan', '--embedded', '-f', example], { cwd: folder, env: noServer });
      expect(planned.code, describeResult(planned)).toBe(0);
      expect(planned.stdout).toContain('No changes: the server matches the desired state.');
    },
  );
});
