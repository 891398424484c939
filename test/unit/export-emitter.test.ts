/**
 * The export's fast YAML writer (emitDocument) against the yaml package's rendering of the same
 * document (renderWithYamlPackage, the reference): byte for byte whenever the fast path takes a
 * document, and a fallback (null) for anything it does not handle.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { emitDocument, renderWithYamlPackage } from '../../src/desired/export.js';

const TRICKY = [
  'plain',
  'with space',
  'a  b',
  ' lead',
  'trail ',
  'a: b',
  'a:b',
  'end:',
  'x #y',
  'x#y',
  '#c',
  '-',
  '- x',
  '-x',
  '?',
  '? x',
  'yes',
  'no',
  'on',
  'off',
  'true',
  'True',
  'FALSE',
  'null',
  'Null',
  '~',
  '',
  '1',
  '-1',
  '1.5',
  '0x1F',
  '0o7',
  '.inf',
  '-.Inf',
  '.nan',
  '-.5',
  '1e3',
  '1_000',
  '0b101',
  '2024-01-01',
  "it's",
  "'q'",
  '"dq"',
  'a,b',
  '[x]',
  '{y}',
  'line\nbreak',
  'tab\there',
  '@at',
  '`tick',
  '%pct',
  '&amp',
  '*star',
  '!bang',
  '|pipe',
  '>gt',
  'ünïcödé',
  'emoji 😀',
  'ctrl\x01',
  'del\x7f',
  '---x',
  '...y',
  'fd00::2',
  '::/0',
  '0.0.0.0/0',
  'a\\b',
  'x\u0085y',
  'k=v+/',
  'GoZRwixpr2epl3OjQ7y16LjyG/crHfPJU9w46bkQ/n4=',
  '1001-1101',
];

/** Documents of the shapes an export writes, with `v` in every place a string can stand. */
const SHAPES: ((v: string) => Record<string, unknown>)[] = [
  (v) => ({
    version: 1,
    settings: { prune: true },
    users: [
      { email: 'admin@example.com', role: 'admin' },
      {
        email: v,
        devices: [
          {
            name: v,
            description: v,
            public_key: 'k',
            allowed_ips: [v, '10.0.0.0/8'],
            mtu: 1280,
            use_default_dns: false,
          },
          { name: 'phone', dns: [], ipv4: '10.3.2.2', ipv6: 'fd00::3:2:2' },
        ],
        rules: [{ action: 'accept', destination: v, port_type: 'tcp', port_range: v }],
      },
    ],
    rules: [{ action: 'drop', destination: '10.0.0.0/8' }],
  }),
  (v) => ({
    version: 1,
    settings: { prune: false },
    configuration: {
      default_client_dns: [v],
      default_client_endpoint: v,
      default_client_mtu: 1280,
      allow_unprivileged_device_management: true,
    },
    users: [],
    rules: [{ action: 'drop', destination: v }],
  }),
  (v) => ({
    version: 1,
    users: [{ email: 'solo@example.com', rules: [] }],
    rules: [{ action: v, destination: '10.1.0.0/16' }],
  }),
];

describe('export: the fast YAML writer', () => {
  it('writes exactly what the yaml package writes, or leaves the document to it', () => {
    let fast = 0;
    for (const value of TRICKY) {
      for (const shape of SHAPES) {
        const body = shape(value);
        const written = emitDocument(body);
        if (written === null) continue;
        fast++;
        expect(written, JSON.stringify(value)).toBe(renderWithYamlPackage(body));
        expect(parse(written)).toEqual(JSON.parse(JSON.stringify(body)));
      }
    }
    // Most values take the fast path; the others are quoted by the yaml package.
    expect(fast).toBeGreaterThan(TRICKY.length / 2);
    expect(fast).toBeLessThan(TRICKY.length * SHAPES.length);
  });

  it('takes everyday exports and leaves what needs quoting to the yaml package', () => {
    const body = SHAPES[0]!('laptop of Zoë');
    expect(emitDocument(body)).toBe(renderWithYamlPackage(body));
    for (const quoted of ['yes please: no', '', '0x1F', 'line\nbreak', ' lead', '#c', 'a,b'])
      expect(emitDocument(SHAPES[0]!(quoted)), JSON.stringify(quoted)).toBeNull();
  });

  it('keeps a blank line between users and puts rules and address lists on one line', () => {
    const written = emitDocument(SHAPES[0]!('x'))!;
    expect(written).toContain('    role: admin\n\n  - email: x\n');
    expect(written).toContain('      - { action: accept, destination: x, port_type: tcp, port_range: x }\n');
    expect(written).toContain('        allowed_ips: [ x, 10.0.0.0/8 ]\n');
    expect(written).toContain('        dns: []\n');
  });
});
