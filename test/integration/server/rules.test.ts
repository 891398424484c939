import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessServer } from '../../helpers/in-process-server.js';
import type { TestServer } from '../../helpers/server-api.js';

const RULE_KEYS = ['id', 'action', 'destination', 'port_type', 'port_range', 'user_id', 'inserted_at', 'updated_at'];
const OVERLAP = { errors: { destination: ['destination overlaps with an existing rule'] } };

let server: TestServer;
let alice: { id: string };
let bob: { id: string };
let net = 0;

/** A fresh /16 per test so tests do not overlap each other: 10.N.0.0/16. */
function freshNet(): string {
  return `10.${++net}`;
}

function createRule(rule: Record<string, unknown>, s: TestServer = server) {
  return s.api('POST', '/v0/rules', { rule });
}

beforeAll(async () => {
  server = await startInProcessServer();
  alice = (await server.api('POST', '/v0/users', { user: { email: 'alice@example.com' } })).body.data;
  bob = (await server.api('POST', '/v0/users', { user: { email: 'bob@example.com' } })).body.data;
});
afterAll(async () => {
  await server?.stop();
});

describe('rules: create and fields', () => {
  it('creates a rule with only a destination: drop, no ports, global', async () => {
    const res = await createRule({ destination: `${freshNet()}.0.0/16` });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body.data)).toEqual(RULE_KEYS);
    expect(res.body.data).toMatchObject({ action: 'drop', port_type: null, port_range: null, user_id: null });
    expect(res.headers.location).toBe(`/v0/rules/${res.body.data.id}`);
  });

  it('echoes the destination as given and answers ports as "lo - hi", a single port as one number', async () => {
    const n = freshNet();
    const cases: [string, string][] = [
      ['80', '80'],
      ['80-443', '80 - 443'],
      ['1000 - 2000', '1000 - 2000'],
    ];
    for (const [i, [given, stored]] of cases.entries()) {
      const res = await createRule({
        destination: `${n}.${i}.7/24`,
        action: 'accept',
        port_type: 'tcp',
        port_range: given,
        user_id: alice.id,
      });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({
        destination: `${n}.${i}.7/24`,
        action: 'accept',
        port_type: 'tcp',
        port_range: stored,
        user_id: alice.id,
      });
    }
    expect((await createRule({ destination: '2001:db8::1' })).body.data.destination).toBe('2001:db8::1');
  });

  it.each([
    ['destination missing', {}, { destination: ["can't be blank"] }],
    ['destination not an address', { destination: 'example.com' }, { destination: ['is invalid'] }],
    ['destination bad prefix', { destination: '10.0.0.0/33' }, { destination: ['is invalid'] }],
    ['action null', { destination: '192.0.2.1', action: null }, { action: ["can't be blank"] }],
    ['action unknown', { destination: '192.0.2.1', action: 'allow' }, { action: ['is invalid'] }],
    [
      'port_type unknown',
      { destination: '192.0.2.1', port_type: 'icmp', port_range: '1' },
      { port_type: ['is invalid'] },
    ],
    [
      'port_range bad format',
      { destination: '192.0.2.1', port_type: 'tcp', port_range: 'http' },
      { port_range: ['bad format'] },
    ],
    [
      'port_range reversed',
      { destination: '192.0.2.1', port_type: 'tcp', port_range: '443-80' },
      { port_range: ['lower value cannot be higher than upper value'] },
    ],
    [
      'port_range out of range',
      { destination: '192.0.2.1', port_type: 'udp', port_range: '0-70000' },
      { port_range: ['port is not within valid range'] },
    ],
    [
      'port_range above 65535',
      { destination: '192.0.2.1', port_type: 'udp', port_range: '65536' },
      { port_range: ['port is not within valid range'] },
    ],
    [
      'port_range reaching 65535',
      { destination: '192.0.2.1', port_type: 'udp', port_range: '1-65535' },
      { port_range: ['port is not within valid range'] },
    ],
    [
      'port_type without port_range',
      { destination: '192.0.2.1', port_type: 'tcp' },
      { port_range: ["can't be blank"] },
    ],
    ['port_range without port_type', { destination: '192.0.2.1', port_range: '80' }, { port_type: ["can't be blank"] }],
    [
      'user_id unknown',
      { destination: '192.0.2.1', user_id: '7d6a0a4e-8f5b-4c1e-9d2a-1b3c4d5e6f70' },
      { user_id: ['does not exist'] },
    ],
    ['user_id not a uuid', { destination: '192.0.2.1', user_id: 'alice@example.com' }, { user_id: ['does not exist'] }],
    [
      'several at once',
      { destination: 'nope', action: 'allow', port_range: 'x' },
      { destination: ['is invalid'], action: ['is invalid'], port_range: ['bad format'] },
    ],
  ])('rejects %s', async (_name, rule, errors) => {
    const res = await createRule(rule);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ errors });
  });

  it('an empty string counts as null', async () => {
    const res = await createRule({ destination: `${freshNet()}.0.0/16`, port_type: '', port_range: '', user_id: '' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ port_type: null, port_range: null, user_id: null });
  });

  it('lists rules by inserted_at then id; shows, updates and deletes by UUID only', async () => {
    const made = (await createRule({ destination: `${freshNet()}.0.0/16` })).body.data;
    const list = (await server.api('GET', '/v0/rules')).body.data as { id: string; inserted_at: string }[];
    expect(list[list.length - 1]).toEqual(made);
    expect(list.map((r) => r.inserted_at)).toEqual([...list.map((r) => r.inserted_at)].sort());
    expect((await server.api('GET', `/v0/rules/${made.id.toUpperCase()}`)).body.data).toEqual(made);
    for (const id of ['not-a-uuid', '7d6a0a4e-8f5b-4c1e-9d2a-1b3c4d5e6f70']) {
      expect((await server.api('GET', `/v0/rules/${id}`)).body).toEqual({ error: 'not_found' });
      expect((await server.api('PATCH', `/v0/rules/${id}`, { rule: {} })).status).toBe(404);
      expect((await server.api('DELETE', `/v0/rules/${id}`)).status).toBe(404);
    }
    const del = await server.api('DELETE', `/v0/rules/${made.id}`);
    expect(del.status).toBe(204);
    expect(del.body).toBeNull();
    expect((await server.api('GET', `/v0/rules/${made.id}`)).status).toBe(404);
  });
});

describe('rules: overlap', () => {
  it('refuses the same destination, a containing and a contained block, with the same action and binding', async () => {
    const n = freshNet();
    expect((await createRule({ destination: `${n}.1.0/24`, action: 'accept' })).status).toBe(201);
    for (const destination of [
      `${n}.1.0/24`,
      `${n}.0.0/16`,
      `${n}.1.128/25`,
      `${n}.1.5`,
      `${n}.1.99/24`,
      '0.0.0.0/0',
    ]) {
      const res = await createRule({ destination, action: 'accept' });
      expect(res.status, destination).toBe(422);
      expect(res.body).toEqual(OVERLAP);
    }
  });

  it('accepts what does not overlap: other action, other binding, disjoint blocks, other family', async () => {
    const n = freshNet();
    expect((await createRule({ destination: `${n}.1.0/24`, action: 'accept' })).status).toBe(201);
    const fine = [
      { destination: `${n}.1.0/24`, action: 'drop' },
      { destination: `${n}.1.0/24`, action: 'accept', user_id: alice.id },
      { destination: `${n}.1.0/24`, action: 'accept', user_id: bob.id },
      { destination: `${n}.2.0/24`, action: 'accept' },
      { destination: `${n}.0.255`, action: 'accept' },
      { destination: '::ffff:0:0/96', action: 'accept' },
    ];
    for (const rule of fine) expect((await createRule(rule)).status, JSON.stringify(rule)).toBe(201);
    // The user-bound one now conflicts within its own binding.
    expect((await createRule({ destination: `${n}.1.1`, action: 'accept', user_id: alice.id })).body).toEqual(OVERLAP);
  });

  it('ports: tcp vs udp never conflict; same type conflicts only on intersecting ranges; no ports vs ports never', async () => {
    const n = freshNet();
    const dest = `${n}.0.0/16`;
    expect((await createRule({ destination: dest, port_type: 'tcp', port_range: '80-90' })).status).toBe(201);
    expect((await createRule({ destination: dest, port_type: 'udp', port_range: '80-90' })).status).toBe(201);
    expect((await createRule({ destination: dest, port_type: 'tcp', port_range: '91-100' })).status).toBe(201);
    expect((await createRule({ destination: dest, port_type: 'tcp', port_range: '79' })).status).toBe(201);
    expect((await createRule({ destination: dest })).status).toBe(201);
    expect((await createRule({ destination: `${n}.3.0/24`, port_type: 'tcp', port_range: '85' })).body).toEqual(
      OVERLAP,
    );
    expect((await createRule({ destination: dest, port_type: 'tcp', port_range: '100-200' })).body).toEqual(OVERLAP);
    expect((await createRule({ destination: dest, port_type: 'udp', port_range: '1-80' })).body).toEqual(OVERLAP);
    expect((await createRule({ destination: `${n}.9.9` })).body).toEqual(OVERLAP);
  });

  it('IPv6 destinations overlap by block too', async () => {
    expect((await createRule({ destination: '2001:db8:1::/48', action: 'accept' })).status).toBe(201);
    expect((await createRule({ destination: '2001:db8:1:2::1', action: 'accept' })).body).toEqual(OVERLAP);
    expect((await createRule({ destination: '2001:db8::/32', action: 'accept' })).body).toEqual(OVERLAP);
    expect((await createRule({ destination: '2001:db8:2::/48', action: 'accept' })).status).toBe(201);
  });

  it('update checks overlap against the other rules only, on the merged rule', async () => {
    const n = freshNet();
    const a = (await createRule({ destination: `${n}.1.0/24`, port_type: 'tcp', port_range: '80' })).body.data;
    const b = (await createRule({ destination: `${n}.2.0/24`, port_type: 'tcp', port_range: '80' })).body.data;
    // Itself is no conflict.
    const self = await server.api('PATCH', `/v0/rules/${a.id}`, {
      rule: { destination: `${n}.1.0/25`, port_range: '80-81' },
    });
    expect(self.status).toBe(200);
    expect(self.body.data).toMatchObject({ destination: `${n}.1.0/25`, port_range: '80 - 81' });
    // Moving b onto a conflicts; moving it with other ports does not.
    expect((await server.api('PATCH', `/v0/rules/${b.id}`, { rule: { destination: `${n}.1.0/24` } })).body).toEqual(
      OVERLAP,
    );
    expect(
      (await server.api('PUT', `/v0/rules/${b.id}`, { rule: { destination: `${n}.1.0/24`, port_range: '82' } })).status,
    ).toBe(200);
    // Changing only the action or the binding moves it out of a's group, and back in conflicts.
    expect(
      (await server.api('PATCH', `/v0/rules/${b.id}`, { rule: { action: 'accept', port_range: '80' } })).status,
    ).toBe(200);
    expect((await server.api('PATCH', `/v0/rules/${b.id}`, { rule: { action: 'drop' } })).body).toEqual(OVERLAP);
    const bound = await server.api('PATCH', `/v0/rules/${b.id}`, { rule: { action: 'drop', user_id: bob.id } });
    expect(bound.status).toBe(200);
    expect(bound.body.data.user_id).toBe(bob.id);
    expect((await server.api('PATCH', `/v0/rules/${b.id}`, { rule: { user_id: null } })).body).toEqual(OVERLAP);
  });

  it('update: port fields go together on the merged rule; user_id must exist; empty body unchanged', async () => {
    const n = freshNet();
    const r = (await createRule({ destination: `${n}.0.0/16` })).body.data;
    expect((await server.api('PATCH', `/v0/rules/${r.id}`, { rule: { port_type: 'udp' } })).body).toEqual({
      errors: { port_range: ["can't be blank"] },
    });
    const withPorts = await server.api('PATCH', `/v0/rules/${r.id}`, { rule: { port_type: 'udp', port_range: '53' } });
    expect(withPorts.body.data).toMatchObject({ port_type: 'udp', port_range: '53' });
    expect(withPorts.body.data.updated_at > r.updated_at).toBe(true);
    expect((await server.api('PATCH', `/v0/rules/${r.id}`, { rule: { port_type: null } })).body).toEqual({
      errors: { port_type: ["can't be blank"] },
    });
    const cleared = await server.api('PATCH', `/v0/rules/${r.id}`, { rule: { port_type: null, port_range: null } });
    expect(cleared.body.data).toMatchObject({ port_type: null, port_range: null });
    expect(
      (await server.api('PATCH', `/v0/rules/${r.id}`, { rule: { user_id: '7d6a0a4e-8f5b-4c1e-9d2a-1b3c4d5e6f70' } }))
        .body,
    ).toEqual({ errors: { user_id: ['does not exist'] } });
    const unchanged = await server.api('PATCH', `/v0/rules/${r.id}`, { rule: {} });
    expect(unchanged.status).toBe(200);
    expect(unchanged.body.data).toEqual(cleared.body.data);
  });

  it('holds under concurrent requests: of many identical creates exactly one wins', async () => {
    const destination = `${freshNet()}.0.0/16`;
    const results = await Promise.all(Array.from({ length: 12 }, () => createRule({ destination, action: 'accept' })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(
      results.filter((r) => r.status === 422).every((r) => JSON.stringify(r.body) === JSON.stringify(OVERLAP)),
    ).toBe(true);
    const list = (await server.api('GET', '/v0/rules')).body.data as { destination: string }[];
    expect(list.filter((r) => r.destination === destination)).toHaveLength(1);
  });
});
