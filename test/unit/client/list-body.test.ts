/**
 * ListBody reads `{"data":[...]}` item by item as it arrives. Whatever the body and wherever it is
 * cut into pieces, the outcome must be what JSON.parse of the whole body gives: the same items,
 * or the same fallback (not a compact list: read whole; not JSON: invalid).
 */
import { describe, expect, it } from 'vitest';
import { ListBody, type ListBodyEnd } from '../../../src/client/list-body.js';

/** Reads `body` cut at the given offsets; what `read` saw, in order, and the end. */
function readIn(body: string, cuts: number[]): { seen: unknown[]; end: ListBodyEnd<unknown> } {
  const seen: unknown[] = [];
  const list = new ListBody((item) => {
    seen.push(item);
    return { read: item };
  });
  let from = 0;
  for (const cut of [...cuts, body.length]) {
    list.push(body.slice(from, cut));
    from = cut;
  }
  return { seen, end: list.end() };
}

/** What reading the whole body at once gives: its `data`, or that it is not JSON. */
function expected(body: string): { data?: unknown; invalid?: true } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { invalid: true };
  }
  return { data: (parsed as { data?: unknown } | null)?.data };
}

/** Checks `body` cut everywhere into two pieces, and into pieces of every size up to 7. */
function checkEveryCut(body: string): void {
  const want = expected(body);
  const cuttings: number[][] = [[]];
  for (let i = 1; i < body.length; i++) cuttings.push([i]);
  for (let size = 1; size <= 7; size++) {
    const cuts = [];
    for (let i = size; i < body.length; i += size) cuts.push(i);
    cuttings.push(cuts);
  }
  for (const cuts of cuttings) {
    const { seen, end } = readIn(body, cuts);
    const where = `cut at ${cuts.join(',') || 'nothing'}`;
    if ('items' in end) {
      expect(Array.isArray(want.data), where).toBe(true);
      expect(seen, where).toEqual(want.data);
      expect(end.items, where).toEqual((want.data as unknown[]).map((item) => ({ read: item })));
    } else if ('whole' in end) {
      // Read whole: the text handed back is the body itself, and nothing was read on the way.
      expect(end.whole, where).toBe(body);
      expect(seen, where).toEqual([]);
    } else if ('invalid' in end) {
      expect(want.invalid, where).toBe(true);
    } else {
      expect(end.data, where).toEqual(want.data);
    }
  }
}

const device = (i: number, extra: Record<string, unknown> = {}) => ({
  id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  name: `device-${i}`,
  allowed_ips: ['10.0.0.0/8', '::/0'],
  mtu: 1280,
  use_default_dns: true,
  remote_ip: null,
  ...extra,
});

describe('ListBody', () => {
  it('reads a compact list item by item, wherever the pieces are cut', () => {
    const body = JSON.stringify({ data: [device(1), device(2), device(3)] });
    checkEveryCut(body);
    const { seen, end } = readIn(body, [40, 41, 200]);
    expect('items' in end).toBe(true);
    expect(seen).toHaveLength(3);
  });

  it('reads the empty list and a list of one', () => {
    checkEveryCut('{"data":[]}');
    checkEveryCut(JSON.stringify({ data: [device(1)] }));
    expect(readIn('{"data":[]}', [3]).end).toEqual({ items: [] });
  });

  it('finds the true end of items whose strings hold braces, commas, quotes and escapes', () => {
    const tricky = [
      device(1, { description: '}' }),
      device(2, { description: '},{"id":"not an item"}' }),
      device(3, { description: 'a "quoted" }} \\ back\\slash }' }),
      device(4, { description: '\\"}', name: '{' }),
      device(5, { description: 'ünïcødé ✓ 𝄞 }' }),
    ];
    const body = JSON.stringify({ data: tricky });
    checkEveryCut(body);
    expect(readIn(body, []).seen).toEqual(tricky);
  });

  it('reads items with nested objects and arrays', () => {
    const body = JSON.stringify({ data: [{ a: { b: { c: '}' } }, d: [{}, { e: [] }] }, { f: {} }] });
    checkEveryCut(body);
    expect(readIn(body, [5]).seen).toHaveLength(2);
  });

  it('accepts whitespace between items and around the end, and keys after `data`', () => {
    for (const body of [
      '{"data":[ {"a":1} , {"b":2}\n]\n}',
      '{"data":[\t{"a":1},\r\n{"b":2}] , "meta": {"next": null}}  ',
      '{"data":[{"a":1}],"data2":[1]}',
    ])
      checkEveryCut(body);
  });

  it('reads a body that does not start with the compact prefix whole, as before', () => {
    for (const body of [
      ' {"data":[{"a":1}]}',
      '{ "data": [{"a":1}] }',
      '{"meta":{},"data":[{"a":1}]}',
      '[{"a":1}]',
      '<html>not json</html>',
      '',
      '{"dat',
    ]) {
      const { seen, end } = readIn(body, body.length > 2 ? [2] : []);
      expect(end, body).toEqual({ whole: body });
      expect(seen).toEqual([]);
    }
  });

  it('says a body that is not valid JSON is invalid, whatever was read before the mistake', () => {
    for (const body of [
      '{"data":[{"a":1},]}',
      '{"data":[{"a":1}',
      '{"data":[{"a":1}]',
      '{"data":[{"a":1}]}}',
      '{"data":[{"a":1}{"b":2}]}',
      '{"data":[{"a":1},,{"b":2}]}',
      '{"data":[{"a":"unterminated}]}',
      '{"data":[',
    ]) {
      checkEveryCut(body);
      expect(readIn(body, []).end, body).toEqual({ invalid: true });
    }
  });

  it('gives the `data` of a later `data` key, as JSON.parse of the whole would', () => {
    const body = '{"data":[{"a":1}],"data":null}';
    checkEveryCut(body);
    expect(readIn(body, []).end).toEqual({ data: null });
    // A later list wins too: the items read first were not the answer's.
    const twice = '{"data":[{"a":1},{"a":2}],"data":[{"b":3}]}';
    checkEveryCut(twice);
    expect(readIn(twice, [20]).end).toEqual({ data: [{ b: 3 }] });
  });

  it('hands items that are not objects to the reader, after the objects before them', () => {
    const body = '{"data":[{"a":1},2,"three",{"b":4}]}';
    checkEveryCut(body);
    expect(readIn(body, [12]).seen).toEqual([{ a: 1 }, 2, 'three', { b: 4 }]);
  });

  it('stops looking for ends after many failed candidates, and parses the rest at the end', () => {
    // Each item holds 300 braces inside a string: 3,000 candidates fail, far past the limit.
    const items = Array.from({ length: 10 }, (_, i) => ({ i, text: '}'.repeat(300) }));
    const body = JSON.stringify({ data: items });
    const { seen, end } = readIn(body, [1000, 2000]);
    expect(seen).toEqual(items);
    expect('items' in end && end.items).toHaveLength(10);
  });

  it('passes on what the reader throws', () => {
    const list = new ListBody(() => {
      throw new Error('unreadable item');
    });
    expect(() => list.push('{"data":[{"a":1},')).toThrow('unreadable item');
  });
});
