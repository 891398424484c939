/**
 * `drift --webhook-format slack|markdown`: the JSON body a real loopback receiver gets, for a report
 * holding `_`, `*`, `<`, `&` and line breaks: a user on the server in no file named with `_` and
 * `*`, then a failed check whose files, in a folder named with all four, have two errors. slack (the default): real line breaks, `&<>` as entities, no backslash
 * escapes; markdown: real line breaks, CommonMark escapes, no entities. The schedule runs in this
 * process on a clock the test moves; the built CLI posts to a webhook in the safety net's
 * drift --every row (e2e/cli/safety-net.test.ts).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookReceiver } from '../../helpers/drift.js';
import { startScheduledDrift } from '../../helpers/drift-in-process.js';
import { runInProcess } from '../../helpers/run-in-process.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';

let server: TestServer;
let dir: string;
const FOLDER = 't_*<&';
const FILE = `${FOLDER}/team.yaml`;

const VALID = `version: 2
settings:
  prune: true
  manage: { users: ["*@corp.test"], rules: [] }
users:
  - { email: bob@corp.test }
`;
/** Two errors: the failed check's message has three lines. */
const BROKEN = VALID.replace(
  '{ email: bob@corp.test }',
  '{ email: bob@corp.test, role: superuser }\n  - { email: carol@corp.test, role: wizard }',
);

beforeAll(async () => {
  [server, dir] = await Promise.all([startTestServer(), mkdtemp(join(tmpdir(), 'netform-webhook-format-'))]);
  await mkdir(join(dir, FOLDER));
  // On the server, in no file: its name holds `_` and `*`.
  const res = await server.api('POST', '/v0/users', { user: { email: 'o_neil*x@corp.test' } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
});

afterAll(async () => {
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

/**
 * The `text` of the two reports the webhook gets from a scheduled drift started with `flags`: the
 * drift it finds first, then the failed check once the files are broken.
 */
async function webhookTextsWith(flags: string[]): Promise<{ drift: string; failed: string }> {
  await writeFile(join(dir, FILE), VALID);
  const hook = await startWebhookReceiver();
  const drift = startScheduledDrift(
    ['-f', join(dir, FILE), '--every', '*/1 * * * * *', '--run-at-start', '--webhook', hook.url, ...flags],
    { NETFORM_URL: server.url, NETFORM_TOKEN: server.token },
  );
  try {
    await hook.waitForCount(1);
    await writeFile(join(dir, FILE), BROKEN);
    await drift.runOnce();
    expect(hook.received).toHaveLength(2);
    const [first, second] = hook.received.map((r) => ({
      status: r.report.status,
      text: (JSON.parse(r.text) as { text: string }).text,
    }));
    expect([first!.status, second!.status]).toEqual(['drift', 'failed']);
    return { drift: first!.text, failed: second!.text };
  } finally {
    drift.stop();
    await drift.done;
    await hook.close();
  }
}

describe('drift --webhook-format', () => {
  it('slack by default: real line breaks, entities, no backslash escapes, names in code spans', async () => {
    const { drift, failed } = await webhookTextsWith([]);
    expect(drift).toContain('`user o_neil*x@corp.test` is on the server but in no file');
    // Paths are shown from the working folder.
    expect(failed).toContain(
      `the desired state has errors:\n  ${relative(process.cwd(), dir)}/t_*&lt;&amp;/team.yaml:6:`,
    );
    expect(failed.split('\n')).toHaveLength(3);
    for (const text of [drift, failed]) expect(text).not.toMatch(/\\[_*<&]|\\u000a|[<>]|&(?!amp;|lt;|gt;)/);
    expect((await webhookTextsWith(['--webhook-format', 'slack'])).failed).toBe(failed);
  });

  it('markdown: real line breaks, CommonMark escapes, no entities, names in code spans', async () => {
    const { drift, failed } = await webhookTextsWith(['--webhook-format', 'markdown']);
    expect(drift).toContain('`user o_neil*x@corp.test` is on the server but in no file');
    expect(failed).toMatch(/the desired state has errors:\n {2}\S*\/t\\_\\\*\\<\\&\/team\.yaml:6:/);
    expect(failed.split('\n')).toHaveLength(3);
    for (const text of [drift, failed]) expect(text).not.toMatch(/&amp;|&lt;|&gt;|\\u000a/);
  });

  it('refuses a format it does not know, and the flag without --webhook', async () => {
    const env = { NETFORM_URL: server.url, NETFORM_TOKEN: server.token };
    const unknown = await runInProcess(
      [
        'drift',
        '-f',
        join(dir, FILE),
        '--every',
        '* * * * *',
        '--webhook',
        'http://127.0.0.1/x',
        '--webhook-format',
        'html',
      ],
      { env },
    );
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('--webhook-format: "html" is not one of slack, markdown');
    const alone = await runInProcess(
      ['drift', '-f', join(dir, FILE), '--every', '* * * * *', '--webhook-format', 'slack'],
      {
        env,
      },
    );
    expect(alone.stderr).toContain('--webhook-format needs --webhook URL');
  });
});
