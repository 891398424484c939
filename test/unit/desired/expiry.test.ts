/**
 * The files' expiries (src/desired/expiry.ts): read as the text written (an unquoted date is not a
 * YAML timestamp), refused at their line when unreadable, and judged at an instant: which objects
 * expired and when, and the state in effect then.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { effectiveAt, expiredAt, expiriesOf } from '../../../src/desired/expiry.js';
import { loadDesiredState } from '../../../src/desired/index.js';

const dir = mkdtempSync(join(tmpdir(), 'netform-expiry-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const KEY = Buffer.alloc(32, 7).toString('base64');

async function load(text: string) {
  const file = join(dir, `f${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, text);
  return loadDesiredState(file);
}

const DOC = `version: 2
users:
  - email: ann@example.com
    role: admin
    role_expires: 2026-12-31
    expires: 2027-06-30
    devices:
      - { name: laptop, public_key: "${KEY}", expires: 2026-12-20T18:00:00+01:00 }
    rules:
      - { action: accept, destination: 10.1.0.0/16, expires: 2026-12-25 }
rules:
  - { action: accept, destination: 10.9.0.0/16, expires: 2026-12-22 }
`;

describe('expiries of the files', () => {
  it('reads an unquoted date as the string written, never a Date', async () => {
    const loaded = await load(DOC);
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.diagnostics));
    const [ann] = loaded.state.users;
    expect(ann!.expires).toBe('2027-06-30');
    expect(ann!.role_expires).toBe('2026-12-31');
    expect(ann!.devices[0]!.expires).toBe('2026-12-20T18:00:00+01:00');
    expect(typeof loaded.state.rules[0]!.expires).toBe('string');
  });

  it('refuses an expiry it cannot read, and role_expires without role admin, at their lines', async () => {
    const bad = await load(
      DOC.replace('expires: 2027-06-30', 'expires: 2027-02-30').replace('role: admin', 'role: unprivileged'),
    );
    expect(bad.ok).toBe(false);
    const messages = bad.ok ? [] : bad.diagnostics.map((d) => `${d.line}: ${d.message}`);
    expect(messages).toContain('6: expires: no such day: 2027-02-30');
    expect(messages).toContain('5: role_expires: only beside role: admin (it says when the role ends)');
    const noOffset = await load(DOC.replace('2026-12-20T18:00:00+01:00', '2026-12-20T18:00:00'));
    expect(noOffset.ok ? [] : noOffset.diagnostics.map((d) => d.line)).toEqual([8]);
  });

  it('tells which objects expired and when; the effective state treats them as absent', async () => {
    const loaded = await load(DOC);
    if (!loaded.ok) throw new Error('files');
    expect(expiriesOf(loaded.state, new Date('2026-01-01T00:00:00Z')).map((e) => [e.kind, e.expired])).toEqual([
      ['user', false],
      ['role', false],
      ['device', false],
      ['rule', false],
      ['rule', false],
    ]);
    // 2026-12-20T18:00+01:00 is 17:00 UTC.
    expect(expiredAt(loaded.state, new Date('2026-12-20T16:59:59Z'))).toEqual([]);
    expect(expiredAt(loaded.state, new Date('2026-12-20T17:00:00Z'))).toMatchObject([
      {
        kind: 'device',
        key: 'ann@example.com/laptop',
        expires: '2026-12-20T18:00:00+01:00',
        instant: '2026-12-20T17:00:00.000Z',
      },
    ]);
    const at = effectiveAt(loaded.state, new Date('2027-01-01T00:00:00Z'));
    expect(at.users[0]).toMatchObject({ role: 'unprivileged', role_expired: '2026-12-31', devices: [], rules: [] });
    expect(at.absent.devices).toMatchObject([
      { user: 'ann@example.com', name: 'laptop', expired: '2026-12-20T18:00:00+01:00' },
    ]);
    expect(at.expiredRules?.map((r) => [r.user, r.rule.destination])).toEqual([
      ['ann@example.com', '10.1.0.0/16'],
      [null, '10.9.0.0/16'],
    ]);
    // The loaded state is not changed.
    expect(loaded.state.users[0]!.devices).toHaveLength(1);
    const gone = effectiveAt(loaded.state, new Date('2027-06-30T00:00:00Z'));
    expect(gone.users).toEqual([]);
    expect(gone.absent.users).toMatchObject([{ email: 'ann@example.com', expired: '2027-06-30' }]);
  });
});
