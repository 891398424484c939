/**
 * A list item parsed alone (item-parse.ts) is the node the whole file's parse gives: the same
 * ranges, values, quoting, styles and anchors, for every declaration the loader reports, in files
 * written in every layout the editor meets; what is not certain to be so is parsed whole instead.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isMap, isPair, isScalar, isSeq, parseAllDocuments, type YAMLMap } from 'yaml';
import { parseListItemMap } from '../../../src/desired/adopt/item-parse.js';
import { loadDesiredTexts } from '../../../src/desired/adopt/load.js';
import { YamlFileEditor } from '../../../src/desired/adopt/text-edit.js';
import type { SourceLocation } from '../../../src/model/state.js';

const KEY = (c: string) => `"${c.repeat(42)}A="`;

const TEXTS: Record<string, string> = {
  'comments and blank lines everywhere': `version: 1
users:
  - email: a@x.test   # c
    role: admin
    # trailing indented comment

# between users
  # indented between
  - email: b@x.test
    devices:
      - name: l1
        public_key: ${KEY('A')}
        # comment inside

      - name: l2
        public_key: ${KEY('B')}
# a comment at column 0 inside the item
        mtu: 1300
    rules:
      - { action: accept,
          destination: 10.0.0.1/32 }
      - action: drop
        destination: "10.0.0.2/32"


  - email: 'c@x.test'
    role: "unprivileged"
    devices: [ { name: z, public_key: ${KEY('C')} } ]
rules:
  - { action: accept, destination: 10.1.0.0/16 }
  -   action: drop
      destination: >-
        10.2.0.0/16
  - action: accept
    destination: "10.3.0.0/16"   
`,
  'CRLF line ends': `version: 1\r\nusers:\r\n  - email: a@x.test\r\n    role: admin\r\n\r\n  - email: b@x.test\r\n    devices:\r\n      - name: l1\r\n        public_key: ${KEY('A')}\r\n`,
  "lists at their key's indentation": `version: 1
users:
- email: a@x.test
  devices:
  - name: l1
    public_key: ${KEY('A')}
  - name: l2
    public_key: ${KEY('B')}
- email: b@x.test
  role: admin
`,
  'document markers and an alias': `---
version: 1
users:
  - email: a@x.test
    # a comment
    role: admin
  - email: b@x.test
    role: &r unprivileged
  - email: c@x.test
    role: *r
...
`,
  'multi-line plain scalars and flow lists': `version: 1
users:
  - email: a@x.test
    devices:
      - name: a plain
          multi line name
        public_key: ${KEY('A')}

        mtu: 1280
      - name: "q"
        public_key: ${KEY('B')}
        dns: [
          1.1.1.1,
          8.8.8.8
          ]
  - email: b@x.test
`,
  'no line end at the end': `version: 1\nusers:\n  - email: a@x.test\n    role: admin`,
};

/** Every file of examples/ the loader reads without errors. */
function exampleTexts(): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.ya?ml$/.test(name)) out[path] = readFileSync(path, 'utf8');
    }
  };
  walk('examples');
  return out;
}

/** What the editor may read of a node: ranges, values, styles, anchors, tags, blank lines before items. */
function shape(node: unknown): unknown {
  if (node === null || typeof node !== 'object') return node;
  if (isPair(node)) return { key: shape(node.key), value: shape(node.value) };
  const n = node as {
    range?: number[];
    anchor?: string;
    tag?: string;
    spaceBefore?: boolean;
    flow?: boolean;
    type?: string;
    constructor: { name: string };
  };
  const base = {
    kind: n.constructor.name,
    range: n.range?.slice(0, 2),
    anchor: n.anchor,
    tag: n.tag,
    spaceBefore: n.spaceBefore,
    flow: n.flow,
    type: n.type,
  };
  if (isScalar(node)) return { ...base, value: node.value, source: node.source };
  if (isMap(node) || isSeq(node)) return { ...base, items: (node.items as unknown[]).map(shape) };
  return base;
}

async function declarations(text: string): Promise<SourceLocation[] | null> {
  const loaded = await loadDesiredTexts([{ display: 'x.yaml', text }], {});
  if (!loaded.ok) return null;
  const out: SourceLocation[] = [];
  for (const user of loaded.state.users) {
    out.push(user.source!);
    for (const device of user.devices) out.push(device.source!);
    for (const rule of user.rules) out.push(rule.source!);
  }
  for (const rule of loaded.state.rules) out.push(rule.source!);
  return out;
}

function offsetOf(text: string, line: number, column: number): number {
  let at = 0;
  for (let n = 1; n < line; n++) at = text.indexOf('\n', at) + 1;
  return at + column - 1;
}

describe('parseListItemMap', () => {
  const cases = { ...TEXTS, ...exampleTexts() };
  it.each(Object.keys(cases))("gives the whole parse's node for every declaration: %s", async (name) => {
    const text = cases[name]!;
    const sources = await declarations(text);
    if (sources === null) return; // not a desired-state file the loader reads (a fragment, a policy)
    const documents = parseAllDocuments(text);
    const editor = new YamlFileEditor(text);
    let alone = 0;
    for (const source of sources) {
      const map = parseListItemMap(text, offsetOf(text, source.line, source.column));
      const whole = editor.locate(editor.documentAt(source.line), source.path!)!.node as YAMLMap;
      expect(documents.length).toBeGreaterThan(0);
      if (map === null) continue;
      alone++;
      // What stands before the item (a blank line) is not part of it: its own spaceBefore is not read.
      expect({ ...(shape(map) as object), spaceBefore: undefined }).toEqual({
        ...(shape(whole) as object),
        spaceBefore: undefined,
      });
    }
    if (name in TEXTS) expect(alone).toBeGreaterThan(0);
  });

  it('leaves to the whole parse what may parse otherwise alone', () => {
    const cases: [string, string][] = [
      ['a block scalar', 'users:\n  - email: a@x.test\n    description: |\n      text\n\n  - email: b@x.test\n'],
      ['an alias', 'users:\n  - email: a@x.test\n    role: *r\n'],
      ['a tab at a line start', 'users:\n  - email: a@x.test\n\t# tab\n    role: admin\n'],
      ['not a list item', 'configuration:\n  default_mtu: 1280\n'],
      ['a duplicate key', 'users:\n  - email: a@x.test\n    email: b@x.test\n'],
    ];
    for (const [what, text] of cases) {
      const offset = text.indexOf(what === 'not a list item' ? 'default_mtu' : 'email');
      expect(parseListItemMap(text, offset), what).toBeNull();
    }
  });
});

describe('YamlFileEditor.mapAt', () => {
  const TEXT = `version: 1
users:
  - email: a@x.test
    role: unprivileged
  - email: b@x.test
`;

  it('gives one node per mapping, and a list it started stays one list after the whole parse', () => {
    const editor = new YamlFileEditor(TEXT);
    const alone = editor.mapAt(3, 5, 'users[0]')!;
    expect(editor.mapAt(3, 5, 'users[0]')).toBe(alone);
    editor.appendItem(alone, 'devices', { name: 'one', public_key: 'k1' });
    // The whole file parsed now (as a new top-level object would need): the same mapping, another node.
    const whole = editor.locate(editor.documents[0]!, 'users[0]')!.node as YAMLMap;
    expect(whole).not.toBe(alone);
    editor.appendItem(whole, 'devices', { name: 'two', public_key: 'k2' });
    expect(editor.result()).toBe(`version: 1
users:
  - email: a@x.test
    role: unprivileged
    devices:
      - name: one
        public_key: k1
      - name: two
        public_key: k2
  - email: b@x.test
`);
  });

  it('finds through the whole parse what is not parsed alone (a file with a directive)', () => {
    const editor = new YamlFileEditor(`%YAML 1.2\n---\n${TEXT}`);
    const map = editor.mapAt(5, 5, 'users[0]')!;
    expect(map.get('email')).toBe('a@x.test');
    expect(map).toBe(editor.locate(editor.documents[0]!, 'users[0]')!.node);
  });
});
