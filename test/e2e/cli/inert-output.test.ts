/**
 * Output is inert (W3.3, F6 and F12): hostile names made straight through the API reach plan,
 * drift, the webhook, export and show only escaped for where they are written. No raw ESC, BEL
 * or bidi override; no line netform did not mean starting with `::`; in markdown, links and images
 * only inside code spans or fences. JSON still carries every value exactly.
 *
 * In-process (run(argv, io)): what is checked is the text netform writes. The same hostile names
 * reach every command as a process of the built CLI in the safety net (e2e/cli/safety-net.test.ts),
 * drift --every with a webhook included.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { startInProcess, type RunningInProcess } from '../../helpers/run-in-process.js';
import { startTestServer, TEST_ADMIN_EMAIL, type TestServer } from '../../helpers/server.js';
import { expectNoLinkOutsideCode, HOSTILE_MARKDOWN } from '../../helpers/inert.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/drift.js';

const MARKDOWN = HOSTILE_MARKDOWN;
/** Device names (and descriptions) a user can give its own devices on a real server. */
const HOSTILE_NAMES = [
  'erase\u001b[2J\u001b[1A\u001b[2K',
  'clip\u001b]52;c;ZWNobyBwd25lZAo=\u0007\u001b]0;title\u0007',
  'laptop\n::error::pwned',
  `md${MARKDOWN}`,
  'bidi\u202Eexe.txt',
];
const MARKDOWN_EMAIL = `${MARKDOWN}@example.com`;
/** A desired-state file name made by a pull request: a backtick, a line break and a workflow command. */
const HOSTILE_FILE = 'x`\n::error::file.yaml';

let server: TestServer;
let dir: string;
let desired: string;
let env: Record<string, string>;
let hook: WebhookReceiver;
let drift: RunningInProcess | undefined;

/** Fails on any raw control, bidi override, or line read as a workflow command. */
function expectInert(text: string, where: string): void {
  expect(text, where).not.toMatch(/[\u001b\u0007\u202e\u009b]/);
  for (const line of text.split(/\r\n|\r|\n|\u2028|\u2029/)) {
    expect(line.trimStart().startsWith('::'), `${where}: ${JSON.stringify(line)}`).toBe(false);
  }
}

/** Outside code spans and fences, no link or image of the hostile values is left. */
function expectMarkdownInert(markdown: string, where: string): void {
  expectInert(markdown, where);
  const fence = expectNoLinkOutsideCode(markdown, where);
  expect(fence, `${where}: a fence left open`).toBeNull();
}

function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) strings(v, out);
  return out;
}

beforeAll(async () => {
  [server, dir, hook] = await Promise.all([
    startTestServer(),
    mkdtemp(join(tmpdir(), 'netform-inert-')),
    startWebhookReceiver(),
  ]);
  env = { NETFORM_URL: server.url, NETFORM_TOKEN: server.token, NETFORM_TOKEN_USER: TEST_ADMIN_EMAIL };
  const mallory = await server.api('POST', '/v0/users', { user: { email: 'mallory@example.com' } });
  expect(mallory.status).toBe(201);
  for (const name of HOSTILE_NAMES) {
    const device = await server.api('POST', '/v0/devices', {
      device: {
        user_id: mallory.body.data.id,
        name,
        description: `about ${name}`,
        public_key: randomBytes(32).toString('base64'),
      },
    });
    expect(device.status, JSON.stringify(device.body)).toBe(201);
  }
  // F12: a user whose email is markdown, with its own accept rule, under a global drop.
  const marked = await server.api('POST', '/v0/users', { user: { email: MARKDOWN_EMAIL } });
  expect(marked.status, JSON.stringify(marked.body)).toBe(201);
  const rule = await server.api('POST', '/v0/rules', {
    rule: { user_id: marked.body.data.id, destination: '10.50.0.0/16', action: 'accept' },
  });
  expect(rule.status).toBe(201);

  desired = join(dir, 'desired');
  await mkdir(desired);
  await writeFile(
    join(desired, 'netform.yaml'),
    [
      'version: 1',
      'settings: { prune: false }',
      'users:',
      `  - { email: ${TEST_ADMIN_EMAIL}, role: admin }`,
      '  - email: mallory@example.com',
      '    devices:',
      `      - { name: new-one, public_key: "${randomBytes(32).toString('base64')}" }`,
      'rules:',
      '  - { action: drop, destination: 10.50.0.0/16 }',
      '',
    ].join('\n'),
  );
  await writeFile(join(desired, HOSTILE_FILE), 'version: 1\n');
});

afterAll(async () => {
  drift?.stop();
  await drift?.done;
  await Promise.all([server.stop(), hook.close(), rm(dir, { recursive: true, force: true })]);
});

describe('hostile names from the server and file names from a pull request', () => {
  it('plan: text and markdown are inert, json carries the exact values', async () => {
    const text = await runCli(['plan', '-f', desired], { env });
    expect(text.code, text.stderr).toBe(2);
    expectInert(text.stdout, 'plan text stdout');
    expectInert(text.stderr, 'plan text stderr');
    // The names are there, escaped, in the undeclared list.
    expect(text.stdout).toContain('mallory@example.com/laptop\\u000a::error::pwned');
    expect(text.stdout).toContain('bidi\\u202eexe.txt');
    expect(text.stdout).toContain('x`\\u000a::error::file.yaml');

    const md = await runCli(['plan', '-f', desired, '--format', 'markdown'], { env });
    expect(md.code, md.stderr).toBe(2);
    expectMarkdownInert(md.stdout, 'plan markdown');
    expectInert(md.stderr, 'plan markdown stderr');
    // F12: the access change names the markdown user, inside a code span.
    expect(md.stdout).toContain(`own rules of \`${MARKDOWN_EMAIL}\` apply`);
    expect(md.stdout).toContain('desired/x`\\u000a::error::file.yaml``');

    const json = await runCli(['plan', '-f', desired, '--format', 'json'], { env });
    expect(json.code, json.stderr).toBe(2);
    const values = strings(JSON.parse(json.stdout));
    for (const name of HOSTILE_NAMES)
      expect(
        values.some((v) => v.includes(name)),
        name,
      ).toBe(true);
    expect(values.some((v) => v.includes(MARKDOWN_EMAIL))).toBe(true);
  });

  it('drift once (text, markdown) and drift --every with a webhook: inert; the report keeps the values', async () => {
    const text = await runCli(['drift', '-f', desired], { env });
    expect(text.code, text.stderr).toBe(2);
    expectInert(text.stdout + text.stderr, 'drift text');
    const md = await runCli(['drift', '-f', desired, '--format', 'markdown'], { env });
    expect(md.code, md.stderr).toBe(2);
    expectMarkdownInert(md.stdout, 'drift markdown');

    drift = startInProcess(['drift', '-f', desired, '--every', '*/1 * * * * *', '--webhook', hook.url], { env });
    await hook.waitForCount(1);
    drift.stop('SIGTERM');
    const ended = await drift.done;
    const delivered = hook.received[0]!;
    const body = JSON.parse(delivered.text) as { text: string };
    expectInert(body.text, 'webhook text');
    expect(body.text).not.toContain('\n');
    // Slack (the default format) links and mentions only with < and > (`<url|text>`, `<!channel>`),
    // written as entities; it has no [text](url) links, and shows backslash escapes as they are.
    expect(body.text).not.toMatch(/[<>]/);
    // The JSON report itself still carries the exact label.
    expect(strings(delivered.report).some((v) => v.includes('new-one'))).toBe(true);
    expectInert(ended.stderr, 'drift --every stderr');
  });

  it('export and show: the exact values, inert', async () => {
    const exported = await runCli(['export'], { env });
    expect(exported.code, exported.stderr).toBe(0);
    expectInert(exported.stdout + exported.stderr, 'export');
    const show = await runCli(['show'], { env });
    expect(show.code, show.stderr).toBe(0);
    expectInert(show.stdout + show.stderr, 'show');
    // YAML escapes them: reading the export back gives the exact names.
    const { parse } = await import('yaml');
    const values = strings(parse(exported.stdout));
    for (const name of HOSTILE_NAMES) expect(values, name).toContain(name);
  });
  it('apply (last: it deletes the hostile objects): the progress lines and the summary are inert', async () => {
    const pruning = join(dir, 'pruning');
    await mkdir(pruning);
    await writeFile(
      join(pruning, 'netform.yaml'),
      [
        'version: 1',
        'settings: { prune: true }',
        'users:',
        `  - { email: ${TEST_ADMIN_EMAIL}, role: admin }`,
        '  - email: mallory@example.com',
        '',
      ].join('\n'),
    );
    const applied = await runCli(['apply', '-f', pruning, '--yes', '--allow-deletes', '100'], { env });
    expect(applied.code, applied.stderr).toBe(0);
    expectInert(applied.stdout, 'apply stdout');
    expectInert(applied.stderr, 'apply stderr');
    // Each deleted device is named, escaped, once: in the per-write lines (no terminal), not again in the summary.
    expect(applied.stdout).toMatch(/^deleted device mallory@example\.com\/laptop\\u000a::error::pwned \(/m);
    expect(applied.stdout).toMatch(/^deleted device mallory@example\.com\/bidi\\u202eexe\.txt \(/m);
    expect(applied.stdout).not.toMatch(/^done +- device/m);
  });
});
