/**
 * `netform validate` on the second attack's inputs (security review 2026-11b): a glob built to
 * make a backtracking matcher run for ever (G1), look-alike letters in emails (G6), and rule
 * fields with white space around them. Each is answered at once, with a located diagnostic where
 * the input is refused. Build first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { workspace, type Workspace } from '../../helpers/workspace.js';

let ws: Workspace;
beforeAll(() => {
  ws = workspace();
});
afterAll(() => ws.cleanup());

interface Located {
  path: string;
  line: number;
  column: number;
  message: string;
}

async function diagnostics(file: string): Promise<Located[]> {
  const result = await runCli(['validate', '-f', file, '--format', 'json'], { cwd: ws.dir, timeoutMs: 30_000 });
  expect(result.code, result.stderr).toBe(1);
  return (JSON.parse(result.stdout) as Located[]).map(({ path, line, column, message }) => ({
    path,
    line,
    column,
    message,
  }));
}

describe('validate on adversarial input', () => {
  it('the review reproduction: a 14-star glob and a 72-character email validate at once (G1)', async () => {
    ws.write(
      'redos.yaml',
      [
        'version: 1',
        'settings: { prune: false, manage: { users: ["*a*a*a*a*a*a*a*a*a*a*a*a*a*a*x"] } }',
        'users:',
        `  - email: ${'a'.repeat(60)}@example.com`,
        '',
      ].join('\n'),
    );
    const started = Date.now();
    // A backtracking matcher was still running after 60 s; the child is killed at 30 s.
    const result = await runCli(['validate', '-f', 'redos.yaml'], { cwd: ws.dir, timeoutMs: 30_000 });
    expect(result.code, result.stderr).toBe(1); // the email is outside the scope: a located error, at once
    expect(result.stdout + result.stderr).toContain('redos.yaml:4:');
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('a glob longer than 1024 characters is refused where it is written', async () => {
    ws.write(
      'long-glob.yaml',
      ['version: 1', `settings: { manage: { users: ["${'a'.repeat(1030)}@x"] } }`, 'users: []', ''].join('\n'),
    );
    expect(await diagnostics('long-glob.yaml')).toEqual([
      {
        path: 'settings.manage.users[0]',
        line: 2,
        column: 31,
        message: 'is 1032 characters long, more than the 1024 a glob may hold (an email glob)',
      },
    ]);
  });

  it('emails with the Angstrom sign, the Ohm sign or a Hangul filler are refused; Å and upper case are not (G6)', async () => {
    ws.write(
      'look-alikes.yaml',
      [
        'version: 1',
        'users:',
        '  - email: "\\u212Bngstrom@example.com"',
        '  - email: "\\u2126mega@example.com"',
        '  - email: "a\\u3164b@example.com"',
        '  - email: Grace.Hopper@Corp.Example',
        '  - email: "\\u00e5ngstrom@example.com"',
        '  - email: "\\u00c5sa@example.com"',
        '',
      ].join('\n'),
    );
    expect(await diagnostics('look-alikes.yaml')).toEqual([
      {
        path: 'users[0].email',
        line: 3,
        column: 12,
        message: expect.stringMatching(/^is invalid: it holds U\+212B, which Unicode writes as U\+00C5/),
      },
      {
        path: 'users[1].email',
        line: 4,
        column: 12,
        message: expect.stringMatching(/^is invalid: it holds U\+2126, which Unicode writes as U\+03A9/),
      },
      { path: 'users[2].email', line: 5, column: 12, message: 'is invalid: it holds the invisible character U+3164' },
    ]);
  });

  it('rule fields with white space around them are refused, each at its own line and column', async () => {
    ws.write(
      'padded.yaml',
      [
        'version: 1',
        'rules:',
        '  - { action: drop, destination: "10.0.0.0/8\\n" }',
        '  - { action: accept, destination: 10.1.0.0/16, port_type: tcp, port_range: "\\n80" }',
        '  - { action: drop, destination: " 10.3.0.0/16", port_type: udp, port_range: "53 " }',
        '  - { action: drop, destination: 10.4.0.0/16, port_type: udp, port_range: "53" }',
        '',
      ].join('\n'),
    );
    const message = 'has white space before or after its value: write the value alone';
    expect(await diagnostics('padded.yaml')).toEqual([
      { path: 'rules[0].destination', line: 3, column: 34, message },
      { path: 'rules[1].port_range', line: 4, column: 77, message },
      { path: 'rules[2].destination', line: 5, column: 34, message },
      { path: 'rules[2].port_range', line: 5, column: 78, message },
    ]);
  });

  it('rules that all overlap one another: each named once, at most 1,000, then how many more (bench/RESULTS.md)', async () => {
    const lines = ['version: 1', 'users:', '  - email: overlap@example.com', '    rules:'];
    for (let i = 1; i <= 1200; i++)
      lines.push(`      - { action: drop, destination: 10.0.0.0/8, port_type: tcp, port_range: "${i}-60000" }`);
    ws.write('overlaps.yaml', `${lines.join('\n')}\n`);
    const found = await diagnostics('overlaps.yaml');
    expect(found).toHaveLength(1001);
    expect(found[0]).toMatchObject({ path: 'users[0].rules[1].destination', line: 6 });
    expect(found[1000]).toEqual({
      path: 'users[0].rules[1001].destination',
      line: 1006,
      column: 38,
      message:
        'destination overlaps with an existing rule, and so do 198 more rules after the first 1,000 named (validate names at most 1,000 overlapping rules)',
    });
  });
});
