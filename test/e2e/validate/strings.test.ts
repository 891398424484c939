/**
 * `netform validate` on strings no server should store (security review F9, F10, F15): emails
 * with control or invisible characters or a character whose lower case is an ASCII letter, and
 * any value with a NUL or a lone UTF-16 surrogate. Each is refused offline with a located
 * diagnostic naming the field, in YAML files and in CDKTF stacks alike. Build first.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';

const KEY = 'a6AiqHg3kQ3fepsVVJCJayNNPq3C2wiQU1pLxXGos1A=';
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'netform-validate-strings-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function diagnostics(file: string): Promise<{ path: string; line: number; column: number; message: string }[]> {
  const result = await runCli(['validate', '-f', file, '--format', 'json'], { cwd: dir });
  expect(result.code, result.stderr).toBe(1);
  return (JSON.parse(result.stdout) as { path: string; line: number; column: number; message: string }[]).map(
    ({ path, line, column, message }) => ({ path, line, column, message }),
  );
}

describe('validate refuses strings the server refuses', () => {
  it('in YAML: each bad email and each malformed value, at its own line and column', async () => {
    // Double-quoted YAML escapes make each character exact; the file itself is plain ASCII.
    writeFileSync(
      join(dir, 'netform.yaml'),
      [
        'version: 1',
        'settings:',
        '  protect:',
        '    users: ["root\\u200B@example.com"]',
        'users:',
        '  - email: "\\u212Aaren@example.com"',
        '  - email: "\\u202Emoc.elpmaxe@nimda"',
        '  - email: "lone\\uD800@example.com"',
        '  - email: "esc\\e[2J@example.com"',
        '  - email: "\\u0130nci@example.com"',
        '  - email: ok@example.com',
        '    devices:',
        '      - name: "lap\\0top"',
        `        public_key: "${KEY}"`,
        '        description: "work\\uDC00"',
        'absent:',
        '  users: ["gone\\u2066@example.com"]',
        '',
      ].join('\n'),
    );
    expect(await diagnostics('netform.yaml')).toEqual([
      {
        path: 'settings.protect.users[0]',
        line: 4,
        column: 13,
        message: 'is invalid: it holds the control or invisible character U+200B',
      },
      {
        path: 'users[0].email',
        line: 6,
        column: 12,
        message: expect.stringMatching(/^is invalid: it holds U\+212A, whose lower case "k" holds an ASCII letter/),
      },
      {
        path: 'users[1].email',
        line: 7,
        column: 12,
        message: 'is invalid: it holds the control or invisible character U+202E',
      },
      {
        path: 'users[2].email',
        line: 8,
        column: 12,
        message: 'is invalid: it holds a NUL or a lone UTF-16 surrogate',
      },
      {
        path: 'users[3].email',
        line: 9,
        column: 12,
        message: 'is invalid: it holds the control or invisible character U+001B',
      },
      {
        path: 'users[4].email',
        line: 10,
        column: 12,
        message: expect.stringMatching(
          /^is invalid: it holds U\+0130, whose lower case "i\u0307" holds an ASCII letter/,
        ),
      },
      {
        path: 'users[5].devices[0].name',
        line: 13,
        column: 15,
        message: 'is invalid: it holds a NUL or a lone UTF-16 surrogate',
      },
      {
        path: 'users[5].devices[0].description',
        line: 15,
        column: 22,
        message: 'is invalid: it holds a NUL or a lone UTF-16 surrogate',
      },
      {
        path: 'absent.users[0]',
        line: 17,
        column: 11,
        message: 'is invalid: it holds the control or invisible character U+2066',
      },
    ]);
  });

  it('compares emails by their Unicode lower case, as the server does', async () => {
    writeFileSync(
      join(dir, 'case.yaml'),
      'version: 1\nusers:\n  - email: "\\u00DCn\\u00EFc@B\\u00FCcher.example"\n  - email: "\\u00FCN\\u00CFC@b\\u00DCCHER.example"\n',
    );
    expect(await diagnostics('case.yaml')).toEqual([
      {
        path: 'users[1].email',
        line: 4,
        column: 12,
        message:
          'has already been taken: ünïc@bücher.example is also declared at case.yaml:3:12 (emails are compared case-insensitively)',
      },
    ]);
  });

  it('in a CDKTF stack: located at the attribute, named by its Terraform address', async () => {
    const stack = {
      '//': { metadata: { version: '0.21.0' } },
      resource: {
        firezone_user: {
          kelvin: { email: '\u212Aaren@example.com' },
          rlo: { email: '\u202Emoc.elpmaxe@nimda' },
          alice: { email: 'alice@example.com' },
        },
        firezone_device: {
          laptop: {
            user_id: '${firezone_user.alice.id}',
            name: 'lap\u0000top',
            public_key: KEY,
          },
        },
      },
    };
    writeFileSync(join(dir, 'cdk.tf.json'), JSON.stringify(stack, null, 2));
    const found = await diagnostics('cdk.tf.json');
    expect(found.map((d) => [d.path, d.message.replace(/(U\+[0-9A-F]+).*/, '$1')])).toEqual([
      ['firezone_user.kelvin.email', 'is invalid: it holds U+212A'],
      ['firezone_user.rlo.email', 'is invalid: it holds the control or invisible character U+202E'],
      ['firezone_device.laptop.name', 'is invalid: it holds a NUL or a lone UTF-16 surrogate'],
    ]);
    for (const d of found) expect(d.line).toBeGreaterThan(1);
  });
});
