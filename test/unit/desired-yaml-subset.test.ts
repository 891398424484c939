/**
 * The fast reader of ./src/desired/yaml-subset.ts against the yaml package: on every text it
 * accepts, the same plain data (types and key order included), the same line starts and the same
 * offset of every key and value as the yaml path of parseYamlFile; and the yaml package must find
 * no error or warning in it. Anything else must be declined, so that the yaml package reads it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { columnAt, lineAt, parseWithYamlPackage, type ParsedDocument } from '../../src/desired/yaml.js';
import { readYamlSubset, type SubsetDocument } from '../../src/desired/yaml-subset.js';

/** Differences between the subset's offsets and the yaml path's, walking both data trees together. */
function offsetDifferences(subset: SubsetDocument, reference: ParsedDocument): string[] {
  const differences: string[] = [];
  if (subset.root !== reference.offsets.root) differences.push(`root ${subset.root} != ${reference.offsets.root}`);
  let subsetContainers = 0;
  const walk = (a: unknown, b: unknown, path: string): void => {
    if (typeof a !== 'object' || a === null) return;
    subsetContainers++;
    const mine = subset.containers.get(a);
    const theirs = reference.offsets.containers.get(b as object);
    if (!isDeepStrictEqual(mine, theirs)) differences.push(`${path || '(root)'}: ${JSON.stringify(mine)} != ${JSON.stringify(theirs)}`);
    for (const key of Object.keys(a)) walk((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${path}/${key}`);
  };
  walk(subset.value, reference.value, '');
  if (subsetContainers !== subset.containers.size) differences.push(`${subset.containers.size} tables for ${subsetContainers} containers`);
  return differences;
}

/** 'declined', or 'same' once every comparison with the yaml package passed (else the test fails with the text). */
function compare(text: string): 'declined' | 'same' {
  const subset = readYamlSubset(text);
  if (!subset) return 'declined';
  const documents = parseAllDocuments(text, { uniqueKeys: true });
  const list = Array.isArray(documents) ? documents : [documents];
  const problems = list.flatMap((d) => [...d.errors, ...d.warnings].map((p) => p.message));
  expect({ text, documents: list.length, problems }).toEqual({ text, documents: 1, problems: [] });
  const reference = parseWithYamlPackage(text, 'f.yaml');
  expect(reference.documents).toHaveLength(1);
  const expected = reference.documents[0]!;
  // isDeepStrictEqual tells 1 from "1" and -0 from 0; key order is compared through JSON.
  expect({ text, same: isDeepStrictEqual(subset.value, expected.value) }).toEqual({ text, same: true });
  expect({ text, order: JSON.stringify(subset.value) }).toEqual({ text, order: JSON.stringify(expected.value) });
  expect({ text, lineStarts: subset.lineCounter.lineStarts }).toEqual({ text, lineStarts: expected.lineCounter.lineStarts });
  expect({ text, differences: offsetDifferences(subset, expected) }).toEqual({ text, differences: [] });
  return 'same';
}

const KEY = 'a6AiqHg3kQ3fepsVVJCJayNNPq3C2wiQU1pLxXGos1A=';

describe('texts within the subset', () => {
  const accepted: Record<string, string> = {
    'block mappings and sequences, comments, blank lines': [
      '# header', 'version: 1', '', 'settings:', '  prune: true   # trailing', '  limits:', '    delete: 10', '    update: "25%"',
      'users:', '  - email: alice@example.com', '    role: admin', '    # a comment line', '    devices:', '      - name: laptop',
      `        public_key: ${KEY}`, '        mtu: 1380', '        allowed_ips: [10.0.0.0/8, "fd00::/8"]', '    rules:',
      '      - { action: accept, destination: 10.1.0.0/16, port_type: tcp, port_range: "80 - 443" }', '',
    ].join('\n'),
    'a sequence at the same indentation as its key': 'users:\n- email: a@b.c\n  devices:\n  - { name: x }\nrules: []\n',
    'a document start line': '---\nversion: 1\n',
    'a document start line with a comment, no final line break': '--- # x\nversion: 1',
    'every core-schema scalar type': 'a: 1\nb: -2\nc: 0x1F\nd: 0o17\ne: 1.5\nf: 1e3\ng: .inf\nh: .nan\ni: null\nj: ~\nk: true\nl: False\nm: "1"\nn: \'2\'\no: -0\np: +7\nq: 1.50\n',
    'quoted scalars': `a: "x: y # z"\nb: 'it''s'\nc: ""\nd: ''\ne: "ü ✓ 😀"\n`,
    'plain scalars with indicators inside': 'a: b#c\nb: fd00::1\nc: http://x/y?z=1\nd: x,y]z\ne: -x\nf: 10.0.0.0/8\ng: a - b\nh: "[x]"\n',
    'nested flow collections': 'a: { b: [1, 2, { c: d }], e: {} }\nf: [[], [ x ]]\n',
    'a root sequence': '- a\n- { b: 1 }\n- c: 2\n  d: 3\n',
    'a compact mapping with a block value below': '- devices:\n  - x\n  name: y\n- rules:\n    - z\n',
    'keys like those of the JavaScript object prototype': 'constructor: 1\ntoString: 2\nhasOwnProperty: 3\n',
    'escaped quotes and backslashes': String.raw`a: "Alice's \"work\" laptop \\ x"` + '\nb: { c: "\\\\" }\n',
    'IPv6 addresses that start with a colon': 'a: [ ::/0, "::1", ::1, ::ffff:10.0.0.1 ]\nb: ::/0\nc: :x\nd: { e: ::1 }\n',
    'CRLF line ends': '# c\r\nversion: 1\r\nusers:\r\n  - email: a@b.c   # x\r\n    devices: [ "d" ]\r\n\r\n    rules:\r\n      - { action: drop, destination: \'10.0.0.0/8\' }\r\n',
    'comments at any indentation, extra spaces after indicators': 'a:    1\nb:\n# margin\n      # deep\n  c:   [ x ,y ]\nd:\n  -   e: 1\n      f: 2\n  - # before\n    g: 3\n',
  };
  for (const [name, text] of Object.entries(accepted)) {
    it(name, () => expect(compare(text)).toBe('same'));
  }

  it('every desired-state file of the examples and fixtures read as one document', () => {
    const files: string[] = [];
    const collect = (dir: string): void => {
      for (const entry of readdirSync(dir)) {
        const path = join(dir, entry);
        if (statSync(path).isDirectory()) collect(path);
        else if (/\.ya?ml$/.test(entry)) files.push(path);
      }
    };
    collect('test/fixtures/desired');
    collect('examples/basic');
    collect('examples/multi-team');
    const results = files.map((file) => ({ file, result: compare(readFileSync(file, 'utf8')) }));
    // The examples and the fixtures of field and domain errors are plain YAML: they must take the fast path.
    expect(results.filter((r) => r.file.startsWith('examples/') && r.result !== 'same')).toEqual([]);
    expect(results.filter((r) => r.result === 'same').length).toBeGreaterThan(20);
  });
});

describe('texts outside the subset are left to the yaml package', () => {
  const declined: Record<string, string> = {
    'a tab': 'a:\t1\n',
    'a carriage return without a line feed': 'a: 1\rb: 2\n',
    'a carriage return inside a line': 'a: x\ry\r\n',
    'a byte-order mark': '\ufeffa: 1\n',
    'an anchor and an alias': 'a: &x 1\nb: *x\n',
    'a tag': 'a: !!str 1\n',
    'a block scalar': 'a: |\n  x\n',
    'a folded scalar': 'a: >\n  x\n',
    'a multi-line plain scalar': 'a: x\n  y\n',
    'a multi-line flow collection': 'a: [1,\n  2]\n',
    'an escape in a double-quoted scalar': 'a: "x\\ty"\n',
    'a multi-line quoted scalar': 'a: "x\n  y"\n',
    'an empty value': 'a:\nb: 1\n',
    'an empty value at the end': 'a: 1\nb:\n',
    'an empty sequence item': 'a:\n  -\n  - x\n',
    'an empty flow value': 'a: { b: , c: 1 }\n',
    'an explicit key': '? a\n: 1\n',
    'a duplicate key': 'a: 1\na: 2\n',
    'a duplicate flow key': 'a: { b: 1, b: 2 }\n',
    'a key the core schema reads as a boolean': 'true: 1\n',
    'a key the core schema reads as null': 'null: 1\n',
    'a quoted key': '"a": 1\n',
    'a __proto__ key': '__proto__: 1\n',
    'several documents': 'a: 1\n---\nb: 2\n',
    'a document end marker': 'a: 1\n...\n',
    'a directive': '%YAML 1.2\n---\na: 1\n',
    'a nested sequence on one line': '- - a\n',
    'a nested mapping on one line': 'a: b: c\n',
    'a comment not set off by a space': 'a: "b"#c\n',
    'a trailing comma': 'a: [1, 2, ]\n',
    'a flow pair without a space': 'a: {b:1}\n',
    'a flow pair in a sequence': 'a: [b: 1]\n',
    'a reserved first character': 'a: @b\n',
    'a value that starts a sequence': 'a: - b\n',
    'a misaligned key': 'a:\n  b: 1\n   c: 2\n',
    'a sequence item after a scalar value': 'a: 1\n- b\n',
    'an indented root': '  a: 1\n',
    'a scalar root': 'hello\n',
    'an empty file': '',
    'comments only': '# nothing\n',
    'an IPv6 address ending in a colon': 'a: fd00::\n',
    'a comment inside a flow collection': 'a: [1, # x\n  2]\n',
    'an unclosed flow collection': 'a: [1, 2\n',
    'a colon inside a flow key': 'a: { b:c: 1 }\n',
    'a lone dash in a flow sequence': 'a: [-, x]\n',
    'a lone colon as a value': 'a: :\n',
    'a lone colon in a flow sequence': 'a: [ :, x ]\n',
    'an IPv6 address ending in a colon in a flow sequence': 'a: [ fd00:: ]\n',
    'content on the document start line': '--- a: 1\n',
    'flow collections nested deeper than any desired state': `a: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`,
    'block collections nested deeper than any desired state': Array.from({ length: 5_000 }, (_, i) => `${' '.repeat(i)}k:`).join('\n') + ' 1\n',
    'a lone dash as a flow value': 'a: { b: -}\n',
  };
  for (const [name, text] of Object.entries(declined)) {
    it(name, () => expect(compare(text)).toBe('declined'));
  }
});

/** A small deterministic generator (mulberry32), so that a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KEYS = ['name', 'email', 'mtu', 'dns', 'a', 'b', 'use_default_dns', 'x-y', '_k', 'true', 'null', 'Yes', 'key2', 'k k', '1', '__proto__'];
const SCALARS = [
  'x', 'laptop', 'alice@example.com', '10.0.0.0/8', 'fd00::1', 'fd00::', '1', '-1', '0', '-0', '1.0', '1e3', '0x1F', '0o7', '.5', '.inf', '~', 'null',
  'true', 'TRUE', 'yes', 'off', '"q"', "'s'", "'it''s'", '"a: b"', '"# x"', '""', "''", '"\\n"', '"x\\"y"', 'a b', 'a  b', 'a #c', 'a#c', 'a:b', 'a: b',
  'http://x', '::/0', '::1', ':x', '::', ': ', '- x', '-x', '[a, b]', '[ ]', '[]', '{ a: 1 }', '{}', '{a: 1}', '{ a: [1, { b: c }] }', '[a, [b, c]]', '*x', '&x y', '!t y', '|', '>',
  '@x', '`x', '%x', ',x', 'x,y', 'x]', 'x}', '? x', ': x', 'ü', '✓', '😀', '80 - 443', '"80 - 443"', KEY, `"${KEY}"`, '', ' ', '\t', 'a\tb',
];

function pick<T>(next: () => number, list: readonly T[]): T {
  return list[Math.floor(next() * list.length)]!;
}

/** A YAML-looking text: mostly the plain subset, with near misses and corruptions mixed in. */
function generate(next: () => number): string {
  const lines: string[] = [];
  const step = next() < 0.8 ? 2 : 4;
  const block = (indent: number, depth: number): void => {
    const pad = ' '.repeat(indent);
    const count = 1 + Math.floor(next() * 4);
    const sequence = depth > 0 && next() < 0.35;
    for (let i = 0; i < count; i++) {
      if (next() < 0.08) lines.push(next() < 0.5 ? '' : `${pad}# comment ${i}`);
      const nested = depth < 3 && next() < 0.3;
      const key = next() < 0.85 ? pick(next, KEYS.slice(0, 9)) : pick(next, KEYS);
      if (sequence) {
        if (nested && next() < 0.5) {
          lines.push(`${pad}- ${key}: ${pick(next, SCALARS)}`);
          const inner = ' '.repeat(indent + 2);
          if (next() < 0.7) lines.push(`${inner}${pick(next, KEYS.slice(0, 9))}: ${pick(next, SCALARS)}`);
        } else if (nested) {
          lines.push(`${pad}-`);
          block(indent + step, depth + 1);
        } else {
          lines.push(`${pad}- ${pick(next, SCALARS)}${next() < 0.1 ? ' # c' : ''}`);
        }
      } else if (nested) {
        lines.push(`${pad}${key}:${next() < 0.1 ? ' # c' : ''}`);
        block(next() < 0.15 ? indent : indent + step, depth + 1);
      } else {
        lines.push(`${pad}${key}: ${pick(next, SCALARS)}${next() < 0.1 ? '   # c' : ''}`);
      }
    }
  };
  if (next() < 0.1) lines.push('---');
  block(0, 0);
  // Corruptions: a character dropped or doubled, a line indented by one, a line repeated.
  if (next() < 0.25 && lines.length > 0) {
    const i = Math.floor(next() * lines.length);
    const line = lines[i]!;
    const at = Math.floor(next() * (line.length + 1));
    const kind = Math.floor(next() * 4);
    lines[i] = kind === 0 ? line.slice(0, at) + line.slice(at + 1) : kind === 1 ? line.slice(0, at) + line[at - 1] + line.slice(at) : kind === 2 ? ` ${line}` : `${line}\n${line}`;
  }
  // Windows checkouts end lines with CRLF.
  const end = next() < 0.3 ? '\r\n' : '\n';
  return lines.join(end) + (next() < 0.9 ? end : '');
}

describe('generated texts', () => {
  it('are read exactly as the yaml package reads them, or declined', () => {
    const next = random(20261122);
    const counts = { same: 0, declined: 0 };
    for (let i = 0; i < 6000; i++) counts[compare(generate(next))]++;
    // Both sides must be exercised for the comparison to mean something.
    expect(counts.same).toBeGreaterThan(1000);
    expect(counts.declined).toBeGreaterThan(1000);
  });
});

describe('line and column of an offset', () => {
  it('are those of the yaml package\'s LineCounter, at every offset', () => {
    const texts = ['a: 1\n\nb:\n  - x\n', 'a: 1', '\n\n# c\na: [1, 2]\r\nb: "x\n  y"\n', ''];
    for (const text of texts) {
      const { documents } = parseWithYamlPackage(`${text}\nz: 0\n`, 'f.yaml');
      const parsed = documents[0]!;
      for (let offset = 0; offset <= text.length + 6; offset++) {
        const line = lineAt(parsed, offset);
        const { line: expectedLine, col } = parsed.lineCounter.linePos(offset);
        expect({ offset, line, column: columnAt(parsed, offset, line) }).toEqual({ offset, line: expectedLine, column: col });
      }
    }
  });
});
