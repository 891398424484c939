/**
 * The export's direct YAML writer against the `yaml` package it replaces: for every value and
 * shape, renderExportDocument must give the bytes renderWithYamlPackage gives (a Document with
 * lineWidth 0, flow rules and lists, a blank line between users), whether a value is written
 * directly or handed to the `yaml` package.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderExportDocument, renderWithYamlPackage } from '../../../src/desired/export/yaml.js';
import { exportDesiredState } from '../../../src/desired/export/index.js';
import type { ApiUser, LiveState } from '../../../src/model/index.js';
import { liveDevice, liveRule, liveUser } from '../../helpers/plan-fixtures.js';
import { seeded } from '../../helpers/seeded.js';
import { rounds } from '../../helpers/rounds.js';

type Plain = Record<string, unknown>;

const HEADER = '# yaml-language-server: $schema=s\n# Exported by `netform export`.\n';

/** Strings YAML could read as something else, or that need quotes, escapes or a block scalar. */
const TRICKY: string[] = [
  '',
  ' ',
  'a b',
  ' leading',
  'trailing ',
  'yes',
  'no',
  'on',
  'off',
  'y',
  'n',
  'Yes',
  'NO',
  'true',
  'True',
  'TRUE',
  'false',
  'null',
  'Null',
  'NULL',
  '~',
  '-',
  '?',
  '- x',
  '? x',
  '-x',
  '?x',
  ':',
  'a:',
  'a: b',
  'a:b',
  '::1',
  '::/0',
  '#',
  'a #b',
  'a#b',
  '#x',
  "o'neil@example.com",
  'say "hi"',
  `both ' and "`,
  '"',
  "'",
  '\\',
  'back\\slash',
  'back\\nslash',
  ' \\n',
  '%x',
  '@x',
  '`x`',
  '&anchor',
  '*alias',
  '!tag',
  '!!str',
  '|',
  '>',
  '[x]',
  '{x}',
  'a,b',
  'a[b',
  'a]b',
  'a{b}',
  '1',
  '01',
  '0.5',
  '.5',
  '5.',
  '1e3',
  '1E-3',
  '+1',
  '-1',
  '0x1F',
  '0o17',
  '0b101',
  '.inf',
  '-.Inf',
  '.nan',
  '.NaN',
  '2024-01-01',
  '2024-01-01T10:00:00Z',
  '12:30',
  '1_000',
  '0777',
  'ünïcode',
  '日本語',
  'emoji 🔑',
  'lone \ud800 surrogate',
  'tab\there',
  '\ttab',
  'tab\t',
  'cr\rhere',
  'nul\0',
  'bell\x07',
  'esc\x1b',
  'vt\x0b',
  'del\x7f',
  'nel\x85',
  'nbsp\u00a0',
  'ls\u2028ps\u2029',
  'line\nbreak',
  'line\n',
  'two\n\n',
  'keep\n\n\n',
  '\n',
  '\n\n',
  ' \n x',
  'a\n b',
  'a \nb',
  'a\n\nb',
  'x\n#y',
  'dquote " and \n newline',
  "squote ' and \n newline",
  'long '.repeat(30),
  'y'.repeat(2000),
  '---',
  '--- x',
  '...',
  '... x',
  'a\n---\nb',
  'x\n%y',
  '=',
  '<<',
  'user@example.com',
  'User.Name+vpn@Example.COM',
  'vpn.example.com:51820',
  '[2001:db8::1]:51820',
  'x8mEqUv3cGt1Xq6h3mJx0o8nOqCq2cW1oZt3JYfJfGs=',
  '+abc/def=',
  '/',
  '//x',
  'a/b',
  '10.0.0.0/8',
  'fd00::3:2:2',
  '1001-1101',
  '443',
  '65535',
];

/** A body of export's shape with `value` in every place a string can be. */
function exportBody(value: string, position: 'first' | 'middle' | 'last'): Plain {
  const tricky = {
    email: value,
    role: 'admin',
    devices: [
      {
        name: value,
        description: value,
        public_key: 'x8mEqUv3cGt1Xq6h3mJx0o8nOqCq2cW1oZt3JYfJfGs=',
        ipv4: '10.3.2.2',
        allowed_ips: [value, '10.0.0.0/8'],
        dns: [value],
        endpoint: value,
        mtu: 1380,
        use_default_persistent_keepalive: false,
      },
      { name: 'plain', public_key: 'AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=', description: value },
    ],
    rules: [
      { action: 'accept', destination: value, port_type: 'tcp', port_range: value },
      { action: 'drop', destination: '10.0.0.0/8' },
    ],
  };
  const plain = (n: number) => ({
    email: `user${n}@example.com`,
    devices: [{ name: `device-${n}`, public_key: 'k', ipv4: `10.0.0.${n}`, ipv6: `fd00::${n}` }],
    rules: [{ action: 'accept', destination: `10.${n}.0.0/16`, port_type: 'udp', port_range: '53' }],
  });
  const users =
    position === 'first'
      ? [tricky, plain(1), plain(2)]
      : position === 'middle'
        ? [plain(1), tricky, plain(2)]
        : [plain(1), plain(2), tricky];
  return {
    version: 1,
    settings: { prune: true },
    configuration: {
      default_client_allowed_ips: [value],
      default_client_dns: [value, '1.1.1.1'],
      default_client_endpoint: value,
      default_client_mtu: 1280,
      allow_unprivileged_device_management: true,
    },
    users,
    rules: [
      { action: 'drop', destination: value },
      { action: 'accept', destination: '10.0.0.0/8' },
    ],
  };
}

function same(body: Plain, header = HEADER): void {
  const reference = renderWithYamlPackage(header, body);
  expect(renderExportDocument(header, body), JSON.stringify(body).slice(0, 300)).toBe(reference);
}

const ALPHABET = [
  ...'abcXYZ019._@/+=-:#?,[]{}&*!|>\'"%`~<',
  ' ',
  '  ',
  '\t',
  '\n',
  '\r',
  '\0',
  '\x85',
  'é',
  '🔑',
  '\ud800',
  '---',
  '...',
  'e',
  'x',
  'o',
  '0',
];

describe('renderExportDocument writes the bytes of the yaml package', () => {
  it('for every tricky string, in every place export writes one', () => {
    for (const value of TRICKY)
      for (const position of ['first', 'middle', 'last'] as const) same(exportBody(value, position));
  });

  it('for the one-user documents of --split and the global rules file', () => {
    for (const value of TRICKY) {
      const body = exportBody(value, 'first');
      same({ version: 1, users: [(body.users as Plain[])[0]] });
      same({ version: 1, settings: { prune: true }, rules: body.rules });
      same({ version: 1, configuration: body.configuration });
    }
  });

  it('for random strings of indicator, quote, space, break and control characters', () => {
    const g = seeded(13);
    for (let i = 0; i < rounds(3000); i++) {
      let value = '';
      const length = g.int(0, 8);
      for (let c = 0; c < length; c++) value += g.pick(ALPHABET);
      same(exportBody(value, g.pick(['first', 'middle', 'last'] as const)));
    }
  });

  it('for numbers, booleans and nulls, also those it leaves to the yaml package', () => {
    for (const value of [
      0,
      1,
      -1,
      1280,
      2 ** 53 - 1,
      2 ** 53,
      -0,
      1.5,
      1e21,
      1e-7,
      NaN,
      Infinity,
      -Infinity,
      true,
      false,
      null,
    ])
      same({
        version: 1,
        configuration: { default_client_mtu: value, list: [value, 1] },
        users: [{ email: 'a@example.com', devices: [{ name: 'n', mtu: value, dns: [value] }] }, { email: 'b@x' }],
        rules: [{ action: 'accept', destination: '10.0.0.0/8', port_range: value }],
      });
  });

  it('for shapes outside the usual ones (empty lists and maps, odd keys, lists in lists)', () => {
    const bodies: Plain[] = [
      { version: 1, users: [], rules: [] },
      { version: 1, configuration: {}, users: [{ email: 'a@x', devices: [] }], rules: [] },
      { version: 1, users: [{ email: 'a@x', devices: [{}] }, {}] },
      { version: 1, users: [{ email: 'a@x', 'odd key': 1, true: 2, '1': 3, '': 4, ['k'.repeat(200)]: 5 }] },
      { version: 1, users: [{ email: 'a@x', devices: [[1, 2]] }], rules: [[{ action: 'x', destination: 'y' }]] },
      { version: 1, users: [{ email: 'a@x', devices: [{ name: 'n', nested: { deep: { deeper: [{ a: 1 }] } } }] }] },
      { version: 1, users: ['scalar', { email: 'a@x' }, ['list'], { email: 'b@x' }] },
      { version: 1, users: [{ email: 'a@x', rules: [{ action: 'accept', destination: 'x', extra: [1] }] }] },
      { version: 1, users: [{ email: 'a@x', description: undefined, devices: [{ name: undefined }] }] },
      { version: 1, users: [{ email: 'a@x', rules: [{ action: 'accept', destination: { x: 1 } }] }] },
      { action: 'accept', destination: '10.0.0.0/8' },
      { version: 1, users: [{ email: 'a@x' }], rules: [{ action: 'drop', destination: 'a' }], after: 'x\n\n' },
      { version: 1, users: [{ email: 'keep\n\n' }, { email: 'b@x' }, { email: 'x\n\n\n' }] },
      {},
    ];
    for (const body of bodies) same(body);
  });
});

/** A live state with `value` as an email, device name, description, DNS entry, endpoint and destination. */
function liveWith(value: string): LiveState {
  const [a, tricky, z] = ['a@example.com', value, 'z@example.com'].map((email) => liveUser(email));
  const plain = { preshared_key: null, allowed_ips: ['0.0.0.0/0'], dns: ['1.1.1.1'] };
  const rule = (destination: string, owner: ApiUser | null) =>
    liveRule({ destination, user_id: owner?.id ?? null, port_type: 'tcp', port_range: '80 - 443' });
  return {
    users: [a!, tricky!, z!],
    devices: [
      liveDevice(tricky!, value, {
        ...plain,
        description: value,
        use_default_dns: false,
        dns: [value, '10.0.0.53'],
        use_default_endpoint: false,
        endpoint: value,
      }),
      liveDevice(a!, 'laptop', { ...plain, description: value }),
    ],
    rules: [rule(value, tricky!), rule(value, null), rule('10.0.0.0/8', null)],
  };
}

describe('exportDesiredState writes what the yaml package wrote for the same state', () => {
  // The document of each file, read back and written again by the yaml package, gives its bytes.
  function check(content: string): void {
    const header = /^(?:#.*\n)*/.exec(content)![0];
    expect(content).toBe(renderWithYamlPackage(header, parse(content) as Plain));
  }

  it('one file, split files and every option, with tricky values', () => {
    for (const value of TRICKY) {
      if (['', 'a@example.com', 'z@example.com', '10.0.0.0/8'].includes(value.trim().toLowerCase())) continue;
      const live = liveWith(value);
      for (const options of [
        {},
        { split: true },
        { explicitDefaults: true },
        { prune: false },
        { addresses: false },
        { split: true, explicitDefaults: true, prune: false },
      ]) {
        const { files } = exportDesiredState(live, { schemaRef: 's', ...options });
        for (const file of files) check(file.content);
      }
    }
  });
});
