/**
 * `renamed_from` entries that contradict the rest are refused by validate (W3.5: whatever
 * validate accepts, plan can plan). Before, each passed validate and then, once the old object
 * was live, failed plan or planned two things to one live object: renamed twice, renamed and
 * deleted, renamed from outside settings.manage.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadDesiredState } from '../../../src/desired/index.js';
import { formatDiagnostic } from '../../../src/views/diagnostics.js';

const KEY_A = 'a6AiqHg3kQ3fepsVVJCJayNNPq3C2wiQU1pLxXGos1A=';
const KEY_B = 'czTQMxaFqFgu1WLW8vVpN8eaaNkb4fCB491C7dz4iks=';
const dir = mkdtempSync(join(tmpdir(), 'netform-renames-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function problems(name: string, text: string): Promise<string[]> {
  const file = join(dir, name);
  writeFileSync(file, text);
  const result = await loadDesiredState(file);
  return result.ok ? [] : result.diagnostics.map(formatDiagnostic).map((d) => d.replace(`${dir}/`, ''));
}

describe('renamed_from that contradicts the rest', () => {
  it('a user renamed from a user the files declare', async () => {
    const found = await problems(
      'declared.yaml',
      'version: 1\nusers:\n  - email: new@x.example\n    renamed_from: old@x.example\n  - email: old@x.example\n',
    );
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(
      /declared\.yaml:4:19: users\[0\]\.renamed_from: old@x\.example is declared at .*declared\.yaml:5:12: a user the files keep cannot be renamed; remove renamed_from or that user$/,
    );
  });

  it('two users renamed from one email', async () => {
    const found = await problems(
      'twice.yaml',
      'version: 1\nusers:\n  - email: a@x.example\n    renamed_from: old@x.example\n  - email: b@x.example\n    renamed_from: Old@x.example\n',
    );
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(
      /twice\.yaml:6:19: users\[1\]\.renamed_from: old@x\.example is also the renamed_from of a@x\.example at .*twice\.yaml:4:19: one user can be renamed into one user only$/,
    );
  });

  it('a user renamed from one listed as absent', async () => {
    const found = await problems(
      'absent.yaml',
      'version: 1\nusers:\n  - email: new@x.example\n    renamed_from: old@x.example\nabsent:\n  users: [old@x.example]\n',
    );
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(
      /absent\.yaml:4:19: users\[0\]\.renamed_from: old@x\.example is listed as absent at .*absent\.yaml:6:\d+: the user would be renamed and deleted; keep one of the two$/,
    );
  });

  it('a user renamed from outside settings.manage.users', async () => {
    const found = await problems(
      'scope.yaml',
      'version: 1\nsettings:\n  manage: { users: ["*@new.example"] }\nusers:\n  - email: a@new.example\n    renamed_from: a@old.example\n',
    );
    expect(found).toEqual([
      expect.stringMatching(
        /scope\.yaml:6:19: users\[0\]\.renamed_from: a@old\.example is outside settings\.manage\.users \(\*@new\.example\): this repository cannot rename it; widen the scope to take the user over$/,
      ),
    ]);
  });

  it('devices: renamed from a declared device, from one name twice, from one listed as absent', async () => {
    const found = await problems(
      'devices.yaml',
      `version: 1
users:
  - email: a@x.example
    devices:
      - { name: kept, public_key: "${KEY_A}" }
      - { name: new, renamed_from: kept, public_key: "${KEY_B}" }
  - email: b@x.example
    devices:
      - { name: one, renamed_from: old, public_key: "${KEY_A.replace('a6', 'b6')}" }
      - { name: two, renamed_from: old, public_key: "${KEY_B.replace('cz', 'dz')}" }
  - email: c@x.example
    renamed_from: c-old@x.example
    devices:
      - { name: new, renamed_from: gone, public_key: "${KEY_A.replace('a6', 'c6')}" }
absent:
  devices: [{ user: c-old@x.example, name: gone }]
`,
    );
    expect(found).toEqual([
      expect.stringMatching(
        /devices\.yaml:6:36: users\[0\]\.devices\[1\]\.renamed_from: device "kept" is declared at .*devices\.yaml:5:17: a device the files keep cannot be renamed; remove renamed_from or that device$/,
      ),
      expect.stringMatching(
        /devices\.yaml:10:36: users\[1\]\.devices\[1\]\.renamed_from: device "old" is also the renamed_from of b@x\.example\/one at .*devices\.yaml:9:36: one device can be renamed into one device only$/,
      ),
      expect.stringMatching(
        /devices\.yaml:14:36: users\[2\]\.devices\[0\]\.renamed_from: device "gone" is listed as absent at .*devices\.yaml:16:\d+: the device would be renamed and deleted; keep one of the two$/,
      ),
    ]);
  });

  it('accepts renames that contradict nothing: to itself, in another case, chained to nothing declared', async () => {
    expect(
      await problems(
        'fine.yaml',
        `version: 1
settings:
  manage: { users: ["*@x.example"] }
users:
  - email: new@x.example
    renamed_from: old@x.example
    devices:
      - { name: laptop, renamed_from: laptop, public_key: "${KEY_A}" }
      - { name: phone, renamed_from: old-phone, public_key: "${KEY_B}" }
  - email: Same@x.example
    renamed_from: same@x.example
`,
      ),
    ).toEqual([]);
  });
});
