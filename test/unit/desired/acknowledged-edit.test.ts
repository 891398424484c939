/** The minimal edit that writes one acknowledged: entry: every other byte of the file stays. */
import { describe, expect, it } from 'vitest';
import { withAcknowledgement, type AcknowledgementEntry } from '../../../src/desired/acknowledged-edit.js';

const ENTRY: AcknowledgementEntry = {
  key: 'user:bob@corp.test',
  field: 'role',
  value: 'admin',
  reason: 'on call',
  until: '2026-12-31',
};
const LINES = `  - key: "user:bob@corp.test"
    field: "role"
    value: "admin"
    reason: "on call"
    until: "2026-12-31"`;
const same = (written: string) => written === 'user:bob@corp.test';

describe('withAcknowledgement', () => {
  it('appends a list at the end of a file without one', () => {
    const text = 'version: 2 # v\nusers: [] # none yet\n';
    expect(withAcknowledgement(text, ENTRY, same)).toEqual({
      text: `${text}acknowledged:\n${LINES}\n`,
      replaced: false,
    });
    expect(withAcknowledgement('version: 2', ENTRY, same).text).toBe(`version: 2\nacknowledged:\n${LINES}\n`);
  });

  it('adds to an existing block list, keeping comments and what follows', () => {
    const text = `version: 2
acknowledged:
  # the incident
  - key: device:a@corp.test/x   # plain
    field: mtu
    value: 1280
    reason: r
    until: '2026-01-01'
# after the list
rules: []
`;
    const out = withAcknowledgement(text, ENTRY, same);
    expect(out.replaced).toBe(false);
    expect(out.text).toBe(text.replace("until: '2026-01-01'\n", `until: '2026-01-01'\n${LINES}\n`));
  });

  it('replaces the entry with the same key and field, and only it', () => {
    const text = `acknowledged:
  - key: USER:Bob@corp.test
    field: role
    value: unprivileged
    reason: old
    until: "2025-01-01"
  - key: user:carol@corp.test
    field: role
    value: admin
    reason: other # keep
    until: "2027-01-01"
`;
    const out = withAcknowledgement(text, ENTRY, (w) => w.toLowerCase() === 'user:bob@corp.test');
    expect(out.replaced).toBe(true);
    expect(out.text).toBe(`acknowledged:\n${LINES}\n${text.slice(text.indexOf('  - key: user:carol'))}`);
  });

  it('fills an empty list written as acknowledged: [] or with no value', () => {
    expect(withAcknowledgement('acknowledged: []\nrules: []\n', ENTRY, same).text).toBe(
      `acknowledged:\n${LINES}\nrules: []\n`,
    );
    expect(withAcknowledgement('acknowledged:\nrules: []\n', ENTRY, same).text).toBe(
      `acknowledged:\n${LINES}\nrules: []\n`,
    );
  });
});
