/**
 * Adopt's text edits: only the bytes of the edited values move; comments, quoting, flow or block
 * style, anchors and blank lines stay. And the `acknowledged:` entries an adoption removes.
 */
import { describe, expect, it } from 'vitest';
import { isMap, type YAMLMap } from 'yaml';
import { acknowledgementsOf, matchesAcknowledgement } from '../../../src/desired/adopt/acknowledged.js';
import { expiredGrant } from '../../../src/desired/adopt/expiry.js';
import { YamlFileEditor } from '../../../src/desired/adopt/text-edit.js';

const TEXT = `version: 2
users:
  - email: a@x.test # lead
    devices:
      - name: laptop   # the old one
        public_key: 'k1'
        dns: &dns [1.1.1.1, 8.8.8.8]
        allowed_ips:
          - 10.0.0.0/8
      - { name: phone, public_key: "k2", dns: *dns }
acknowledged:
  # The mtu of the laptop is set by hand for a week.
  - { key: "device:a@x.test/laptop", field: mtu, reason: hotel wifi, until: 2030-01-01 }
  - key: user:a@x.test
    field: role
    reason: on call
`;

function mapAt(editor: YamlFileEditor, path: string): YAMLMap {
  const at = editor.locate(editor.documents[0]!, path);
  if (!at || !isMap(at.node)) throw new Error(`no mapping at ${path}`);
  return at.node;
}

describe('YamlFileEditor', () => {
  it('replaces a value in place, keeping its quoting, its comment and the style of a list', () => {
    const editor = new YamlFileEditor(TEXT);
    const laptop = mapAt(editor, 'users[0].devices[0]');
    editor.setField(laptop, 'public_key', 'k9');
    editor.setField(laptop, 'allowed_ips', ['10.1.0.0/16', '10.2.0.0/16']);
    editor.setField(mapAt(editor, 'users[0].devices[1]'), 'public_key', 'k8');
    expect(editor.result()).toBe(
      TEXT.replace("public_key: 'k1'", "public_key: 'k9'")
        .replace('          - 10.0.0.0/8\n', '          - 10.1.0.0/16\n          - 10.2.0.0/16\n')
        .replace('public_key: "k2"', 'public_key: "k8"'),
    );
  });

  it('replaces an alias with a value of its own and leaves the anchor alone', () => {
    const editor = new YamlFileEditor(TEXT);
    editor.setField(mapAt(editor, 'users[0].devices[1]'), 'dns', ['9.9.9.9']);
    expect(editor.result()).toBe(TEXT.replace('dns: *dns }', 'dns: [9.9.9.9] }'));
  });

  it('adds a field on a line of its own after the fields before it, or inside a flow mapping', () => {
    const editor = new YamlFileEditor(TEXT);
    editor.setField(mapAt(editor, 'users[0]'), 'role', 'admin', ['email', 'renamed_from']);
    editor.setField(mapAt(editor, 'users[0].devices[1]'), 'mtu', 1280);
    expect(editor.result()).toBe(
      TEXT.replace('# lead\n', '# lead\n    role: admin\n').replace('dns: *dns }', 'dns: *dns, mtu: 1280 }'),
    );
  });

  it('removes a field with its line, and the first field of an item without its dash', () => {
    const editor = new YamlFileEditor(TEXT);
    editor.deleteField(mapAt(editor, 'users[0].devices[0]'), 'allowed_ips');
    editor.deleteField(mapAt(editor, 'users[0].devices[1]'), 'dns');
    expect(editor.result()).toBe(
      TEXT.replace('        allowed_ips:\n          - 10.0.0.0/8\n', '').replace(', dns: *dns }', ' }'),
    );
    const first = new YamlFileEditor(TEXT);
    first.deleteField(mapAt(first, 'users[0].devices[0]'), 'name');
    expect(first.result()).toBe(
      TEXT.replace("      - name: laptop   # the old one\n        public_key: 'k1'", "      - public_key: 'k1'"),
    );
  });

  it('appends a list item as its siblings are written, and a new list as export writes one', () => {
    const editor = new YamlFileEditor(TEXT);
    const user = mapAt(editor, 'users[0]');
    editor.appendItem(user, 'devices', { name: 'tablet', public_key: 'k3' });
    editor.appendItem(user, 'rules', { action: 'accept', destination: '10.0.0.0/8' });
    expect(editor.result()).toBe(
      TEXT.replace(
        'dns: *dns }\n',
        'dns: *dns }\n      - { name: tablet, public_key: k3 }\n    rules:\n      - { action: accept, destination: 10.0.0.0/8 }\n',
      ),
    );
  });

  it('appends several items to a list it starts, under one key', () => {
    const editor = new YamlFileEditor('version: 2\nusers:\n  - email: a@x.test\n  - email: b@x.test\n');
    const user = mapAt(editor, 'users[0]');
    editor.appendItem(user, 'devices', { name: 'one', public_key: 'k1' });
    editor.appendItem(user, 'devices', { name: 'two', public_key: 'k2' });
    expect(editor.result()).toBe(
      'version: 2\nusers:\n  - email: a@x.test\n    devices:\n      - name: one\n        public_key: k1\n      - name: two\n        public_key: k2\n  - email: b@x.test\n',
    );
  });

  it('removes a list item with the comment above it; the only item takes its field along', () => {
    const editor = new YamlFileEditor(TEXT);
    const root = editor.documents[0]!.contents as YAMLMap;
    const [mtu] = acknowledgementsOf(root);
    editor.removeItem(mtu!.located);
    expect(editor.result()).toBe(
      TEXT.replace(
        '  # The mtu of the laptop is set by hand for a week.\n  - { key: "device:a@x.test/laptop", field: mtu, reason: hotel wifi, until: 2030-01-01 }\n',
        '',
      ),
    );
    const one = new YamlFileEditor(
      'version: 2\nusers:\n  - email: a@x.test\n    devices:\n      - { name: x, public_key: k }\n',
    );
    one.removeItem(one.locate(one.documents[0]!, 'users[0].devices[0]')!);
    expect(one.result()).toBe('version: 2\nusers:\n  - email: a@x.test\n');
  });
});

describe('acknowledged entries', () => {
  it('match the adopted object and field (or every field)', () => {
    const editor = new YamlFileEditor(TEXT);
    const [mtu, role] = acknowledgementsOf(editor.documents[0]!.contents as YAMLMap).map((e) => e.value);
    expect(matchesAcknowledgement(mtu!, 'device:a@x.test/laptop', ['mtu'])).toBe(true);
    expect(matchesAcknowledgement(mtu!, 'device:a@x.test/laptop', ['dns'])).toBe(false);
    expect(matchesAcknowledgement(mtu!, 'device:a@x.test/laptop', ['*'])).toBe(true);
    expect(matchesAcknowledgement(mtu!, 'device:a@x.test/phone', ['mtu'])).toBe(false);
    expect(matchesAcknowledgement(role!, 'user:a@x.test', ['role'])).toBe(true);
    expect(matchesAcknowledgement({ key: 'user:A@X.test', field: '*' }, 'user:a@x.test', ['role'])).toBe(true);
    expect(matchesAcknowledgement({ key: 'nonsense' }, 'user:a@x.test', ['role'])).toBe(false);
  });
});

describe('expiredGrant (the seam for expiring grants)', () => {
  it('names the expiry that has passed, of the object or (for a role) of the role', () => {
    const editor = new YamlFileEditor(
      'users:\n  - email: a@x.test\n    expires: 2026-12-31\n    role_expires: 2026-06-30\n',
    );
    const user = mapAt(editor, 'users[0]');
    expect(expiredGrant(user, ['role'], new Date('2026-07-01T00:00:00Z'))).toBe('2026-06-30');
    expect(expiredGrant(user, ['mtu'], new Date('2026-07-01T00:00:00Z'))).toBeNull();
    expect(expiredGrant(user, [], new Date('2027-01-01T00:00:00Z'))).toBe('2026-12-31');
  });
});
