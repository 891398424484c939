/**
 * The built CLI as a process answers as run(argv, io) does in the test process, for the commands
 * whose other tests run in-process and that the safety-net table does not drive: `review`,
 * `reach`, `who-can-reach`, `server defaults`. Same exit code, same stdout (but for the time a
 * report was made), same stderr.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runCliProcess, type CliResult } from '../../helpers/cli.js';
import { reviewFixture, type ReviewFixture } from '../../helpers/review-scenario.js';
import { wgKey, workspace, type Workspace } from '../../helpers/workspace.js';

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
    const [asProcess, inProcess] = await Promise.all([runCliProcess(args(), options), runCli(args(), options)]);
    expect(inProcess.code, inProcess.stderr).toBe(code);
    expect(timeless(asProcess)).toEqual(timeless(inProcess));
  });
});
