/** The YAML front end's parser: js-yaml with the YAML 1.2 core schema, and where each value is written. */
import { describe, expect, it } from 'vitest';
import { locateKey, locateValue } from '../../../src/desired/positions.js';
import { parseYamlFile } from '../../../src/desired/yaml.js';

async function parsed(text: string) {
  const result = await parseYamlFile(text, 'f.yaml');
  expect(result.diagnostics).toEqual([]);
  return result.documents[0]!;
}

describe('parseYamlFile', () => {
  it('reads scalars by the YAML 1.2 core schema: no dates, no YAML 1.1 booleans, binary or sexagesimal numbers', async () => {
    const doc = await parsed(
      'a: 2024-01-01\nb: yes\nc: on\nd: 0b101\ne: 1:30\nf: 0o17\ng: 0x1F\nh: -.5\ni: .inf\nj: ~\nk: True\nl: 1e3\nm: "1400"\nn: 0755\n',
    );
    expect(doc.value).toEqual({
      a: '2024-01-01',
      b: 'yes',
      c: 'on',
      d: '0b101',
      e: '1:30',
      f: 15,
      g: 31,
      h: -0.5,
      i: Infinity,
      j: null,
      k: true,
      l: 1000,
      m: '1400',
      n: 755,
    });
  });

  it('places values after their anchors and tags, aliases at the node they name, and an empty value after its key', async () => {
    const text =
      'users:\n  - email: &e  a@example.com\n    role: !!str admin\n    password:\n  - email: b@example.com\n    devices: &d\n      - name: x\n  - email: c@example.com\n    devices: *d\n';
    const doc = await parsed(text);
    expect(locateValue(doc, ['users', 0, 'email'])).toEqual({ line: 2, column: 16 });
    expect(locateValue(doc, ['users', 0, 'role'])).toEqual({ line: 3, column: 17 });
    expect(locateValue(doc, ['users', 0, 'password'])).toEqual({ line: 4, column: 14 });
    expect(locateKey(doc, ['users', 0, 'password'])).toEqual({ line: 4, column: 5 });
    expect(locateValue(doc, ['users', 1, 'devices', 0, 'name'])).toEqual({ line: 7, column: 15 });
    // The alias stands for the list it names: its items are where that list's items are.
    expect(locateValue(doc, ['users', 2, 'devices'])).toEqual({ line: 7, column: 7 });
    expect(locateValue(doc, ['users', 2, 'devices', 0, 'name'])).toEqual({ line: 7, column: 15 });
  });

  it('places flow collections, comments and CRLF line ends', async () => {
    const doc = await parsed(
      '# top\r\nrules: # r\r\n  - { action: drop, destination: "10.0.0.0/8" }\r\n  - [a,  b]\r\n',
    );
    expect(locateValue(doc, ['rules', 0, 'destination'])).toEqual({ line: 3, column: 34 });
    expect(locateValue(doc, ['rules', 1, 1])).toEqual({ line: 4, column: 10 });
  });

  it('refuses aliases that expand without bound, without expanding them', async () => {
    const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 0; i < 8; i++)
      lines.push(
        `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10)
          .fill(`*${String.fromCharCode(97 + i)}`)
          .join(', ')}]`,
      );
    const result = await parseYamlFile(`${lines.join('\n')}\n`, 'bomb.yaml');
    expect(result.documents).toEqual([]);
    expect(result.diagnostics).toEqual([
      {
        file: 'bomb.yaml',
        line: 1,
        column: 1,
        message: expect.stringMatching(/^YAML: aliases expand the document beyond 100,000 values/),
      },
    ]);
  });

  it('reports syntax errors in the words of the yaml package, without the source, and reads no document of the file', async () => {
    const result = await parseYamlFile('version: 1\n---\nusers:\n  - email: a\n    email: b\n', 'dup.yaml');
    expect(result.documents).toEqual([]);
    expect(result.diagnostics).toEqual([
      { file: 'dup.yaml', line: 5, column: 5, message: 'YAML syntax: Map keys must be unique' },
    ]);
  });
});
