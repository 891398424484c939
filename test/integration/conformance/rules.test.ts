/**
 * Conformance of /v0/rules (seed "Rule", docs/rule-semantics.md §6), checked black-box against a real
 * `netform serve` process.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type RuleRow } from '../../../server/store/index.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { JSON_TYPE, TIMESTAMP } from '../../helpers/api-shapes.js';

const RULE_KEYS = [
  'id',
  'action',
  'destination',
  'port_type',
  'port_range',
  'user_id',
  'inserted_at',
  'updated_at',
].sort();
const OVERLAP = { errors: { destination: ['destination overlaps with an existing rule'] } };

let server: TestServer;
let counter = 0;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

/** An IPv4 /16 of its own for every call, so that the rules of different tests never meet. */
let block = 0;
const freshBlock = () => {
  block++;
  return {
    a: `${10 + Math.floor(block / 250)}.${block % 250}`,
    cidr: `${10 + Math.floor(block / 250)}.${block % 250}.0.0/16`,
  };
};

async function createUser(): Promise<any> {
  const res = await server.api('POST', '/v0/users', {
    user: { email: `rules-${++counter}-${randomBytes(3).toString('hex')}@example.com` },
  });
  expect(res.status).toBe(201);
  return res.body.data;
}

async function createRule(rule: Record<string, unknown>): Promise<any> {
  const res = await server.api('POST', '/v0/rules', { rule });
  expect(res.status, `${JSON.stringify(rule)} -> ${JSON.stringify(res.body)}`).toBe(201);
  return res.body.data;
}

async function expectCreate422(rule: Record<string, unknown>, body: unknown): Promise<void> {
  const before = (await server.api('GET', '/v0/rules')).body.data.length;
  const res = await server.api('POST', '/v0/rules', { rule });
  expect(res.status, `${JSON.stringify(rule)} -> ${JSON.stringify(res.body)}`).toBe(422);
  expect(res.headers['content-type']).toBe(JSON_TYPE);
  expect(res.body).toEqual(body);
  expect((await server.api('GET', '/v0/rules')).body.data.length).toBe(before);
}

async function expectUpdate422(
  id: string,
  rule: Record<string, unknown>,
  body: unknown,
  method = 'PATCH',
): Promise<void> {
  const before = (await server.api('GET', `/v0/rules/${id}`)).body.data;
  const res = await server.api(method, `/v0/rules/${id}`, { rule });
  expect(res.status, `${JSON.stringify(rule)} -> ${JSON.stringify(res.body)}`).toBe(422);
  expect(res.headers['content-type']).toBe(JSON_TYPE);
  expect(res.body).toEqual(body);
  expect((await server.api('GET', `/v0/rules/${id}`)).body.data).toEqual(before);
}

describe('shape and defaults', () => {
  it('only a destination: exactly the eight keys, action drop, ports and user_id null (seed note 2)', async () => {
    const { cidr } = freshBlock();
    const res = await server.api('POST', '/v0/rules', { rule: { destination: cidr } });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/v0/rules/${res.body.data.id}`);
    expect(Object.keys(res.body.data).sort()).toEqual(RULE_KEYS);
    expect(res.body.data).toMatchObject({
      destination: cidr,
      action: 'drop',
      port_type: null,
      port_range: null,
      user_id: null,
    });
    expect(res.body.data.inserted_at).toMatch(TIMESTAMP);
  });

  it('read-only fields sent on create or update are ignored: id, inserted_at, updated_at', async () => {
    const readOnly = {
      id: randomUUID(),
      inserted_at: '2001-01-01T00:00:00.000000Z',
      updated_at: '2001-01-01T00:00:00.000000Z',
    };
    const rule = await createRule({ destination: freshBlock().cidr, ...readOnly });
    expect(rule.id).not.toBe(readOnly.id);
    expect(rule.inserted_at.startsWith('2001')).toBe(false);
    const res = await server.api('PATCH', `/v0/rules/${rule.id}`, { rule: readOnly });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(rule);
  });

  it('every field given is echoed', async () => {
    const user = await createUser();
    const { a } = freshBlock();
    const rule = {
      action: 'accept',
      destination: `${a}.1.0/24`,
      port_type: 'udp',
      port_range: '53 - 60',
      user_id: user.id,
    };
    expect(await createRule(rule)).toMatchObject(rule);
  });
});

describe('destination', () => {
  it('required: missing, null or "" is can\'t be blank', async () => {
    for (const rule of [{}, { destination: null }, { destination: '' }, { action: 'accept' }]) {
      await expectCreate422(rule, { errors: { destination: ["can't be blank"] } });
    }
  });

  it.each([
    ['banana'],
    ['10.0.0.0/33'],
    ['10.0.0.256'],
    ['fd00::/129'],
    ['10.0.0.0/'],
    ['10.0.0.0/8/8'],
    ['10.0.0.0-10.0.0.5'],
    ['example.com'],
  ])('%j is is invalid', async (destination) => {
    await expectCreate422({ destination }, { errors: { destination: ['is invalid'] } });
  });

  it.each([
    ['single IPv4 address', 'A.5.5'],
    ['IPv4 CIDR', 'A.6.0/24'],
    ['IPv4 /32', 'A.7.7/32'],
    ['IPv6 address', 'fd10:B::1'],
    ['IPv6 CIDR', 'fd10:B:1::/64'],
    ['IPv6 in upper case', 'FD10:B:2::/64'],
    ['IPv6 uncompressed', 'fd10:B:3:0:0:0:0:1'],
    ['a CIDR with host bits set', 'A.8.1/24'],
  ])('%s is accepted and echoed as given', async (_name, pattern) => {
    const { a } = freshBlock();
    const destination = pattern.replace('A', a).replace('B', String(block));
    expect((await createRule({ destination })).destination).toBe(destination);
  });
});

describe('action', () => {
  it('accept and drop; omitted is drop', async () => {
    const { a } = freshBlock();
    expect((await createRule({ destination: `${a}.1.0/24`, action: 'accept' })).action).toBe('accept');
    expect((await createRule({ destination: `${a}.2.0/24`, action: 'drop' })).action).toBe('drop');
    expect((await createRule({ destination: `${a}.3.0/24` })).action).toBe('drop');
  });

  it.each([['allow'], ['deny'], ['ACCEPT'], ['reject'], [1], [true]])('%j is is invalid', async (action) => {
    await expectCreate422({ destination: freshBlock().cidr, action }, { errors: { action: ['is invalid'] } });
  });

  it("null is can't be blank, on create and on update", async () => {
    await expectCreate422({ destination: freshBlock().cidr, action: null }, { errors: { action: ["can't be blank"] } });
    const rule = await createRule({ destination: freshBlock().cidr });
    await expectUpdate422(rule.id, { action: null }, { errors: { action: ["can't be blank"] } });
  });

  // 0.7.36's cast turns "" into the field's default, drop (Go's CreateRule always sends "action").
  it('"" is the default, drop: on create, and on update, where it turns an accept rule into drop', async () => {
    expect((await createRule({ destination: freshBlock().cidr, action: '' })).action).toBe('drop');
    const rule = await createRule({ destination: freshBlock().cidr, action: 'accept' });
    const res = await server.api('PATCH', `/v0/rules/${rule.id}`, { rule: { action: '' } });
    expect(res.status).toBe(200);
    expect(res.body.data.action).toBe('drop');
    expect(res.body.data.updated_at > rule.updated_at).toBe(true);
    expect((await server.api('GET', `/v0/rules/${rule.id}`)).body.data.action).toBe('drop');
    const again = await server.api('PUT', `/v0/rules/${rule.id}`, { rule: { action: '' } });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(res.body.data);
  });
});

describe('port_type and port_range', () => {
  // As 0.7.36 answers: a single port as one number, a range as "lo - hi".
  it.each([
    ['80', '80'],
    ['80-443', '80 - 443'],
    ['80 - 443', '80 - 443'],
    ['1-65534', '1 - 65534'],
    ['65534', '65534'],
    ['443-443', '443'],
    ['443 - 443', '443'],
    [' 22 ', '22'],
  ])('%j is returned as %j, on create, show and list', async (port_range, shown) => {
    const rule = await createRule({ destination: freshBlock().cidr, port_type: 'tcp', port_range });
    expect(rule.port_range).toBe(shown);
    expect((await server.api('GET', `/v0/rules/${rule.id}`)).body.data.port_range).toBe(shown);
    const listed = (await server.api('GET', '/v0/rules')).body.data.find((r: { id: string }) => r.id === rule.id);
    expect(listed.port_range).toBe(shown);
  });

  it('a single port sent again in another spelling is no change', async () => {
    const rule = await createRule({ destination: freshBlock().cidr, port_type: 'udp', port_range: '53' });
    for (const port_range of ['53', '53-53', '53 - 53']) {
      const res = await server.api('PATCH', `/v0/rules/${rule.id}`, { rule: { port_range } });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(rule);
    }
  });

  it('tcp and udp are the port types', async () => {
    const { a } = freshBlock();
    expect((await createRule({ destination: `${a}.1.0/24`, port_type: 'tcp', port_range: '22' })).port_type).toBe(
      'tcp',
    );
    expect((await createRule({ destination: `${a}.1.0/24`, port_type: 'udp', port_range: '22' })).port_type).toBe(
      'udp',
    );
  });

  it.each([['icmp'], ['TCP'], ['sctp'], ['any'], [6]])('port_type %j is is invalid', async (port_type) => {
    await expectCreate422(
      { destination: freshBlock().cidr, port_type, port_range: '80' },
      { errors: { port_type: ['is invalid'] } },
    );
  });

  it.each([['abc'], ['80-'], ['-80'], ['80--443'], ['80,443'], ['80 443'], ['80:443'], ['1.5'], ['80-443-500']])(
    'port_range %j is bad format',
    async (port_range) => {
      await expectCreate422(
        { destination: freshBlock().cidr, port_type: 'tcp', port_range },
        { errors: { port_range: ['bad format'] } },
      );
    },
  );

  it('lo > hi is "lower value cannot be higher than upper value"', async () => {
    await expectCreate422(
      { destination: freshBlock().cidr, port_type: 'tcp', port_range: '443-80' },
      { errors: { port_range: ['lower value cannot be higher than upper value'] } },
    );
    await expectCreate422(
      { destination: freshBlock().cidr, port_type: 'udp', port_range: '2 - 1' },
      { errors: { port_range: ['lower value cannot be higher than upper value'] } },
    );
  });

  // 0.7.36 checks port_range <@ int4range(1, 65535), whose upper bound is excluded: 65535 is refused.
  it.each([['0'], ['65536'], ['0-80'], ['80-65536'], ['70000'], ['65535'], ['1-65535'], ['1 - 65535'], ['8000-65535']])(
    'port_range %j is "port is not within valid range"',
    async (port_range) => {
      await expectCreate422(
        { destination: freshBlock().cidr, port_type: 'tcp', port_range },
        { errors: { port_range: ['port is not within valid range'] } },
      );
    },
  );

  it("port_type without port_range: port_range can't be blank; port_range without port_type: port_type can't be blank", async () => {
    await expectCreate422(
      { destination: freshBlock().cidr, port_type: 'tcp' },
      { errors: { port_range: ["can't be blank"] } },
    );
    await expectCreate422(
      { destination: freshBlock().cidr, port_type: 'udp', port_range: null },
      { errors: { port_range: ["can't be blank"] } },
    );
    await expectCreate422(
      { destination: freshBlock().cidr, port_type: 'udp', port_range: '' },
      { errors: { port_range: ["can't be blank"] } },
    );
    await expectCreate422(
      { destination: freshBlock().cidr, port_range: '80' },
      { errors: { port_type: ["can't be blank"] } },
    );
    await expectCreate422(
      { destination: freshBlock().cidr, port_range: '80', port_type: '' },
      { errors: { port_type: ["can't be blank"] } },
    );
  });

  it("an invalid port_type without a port_range reports is invalid on port_type (reading: whether port_range also gets can't be blank is open)", async () => {
    const res = await server.api('POST', '/v0/rules', { rule: { destination: freshBlock().cidr, port_type: 'icmp' } });
    expect(res.status).toBe(422);
    expect(res.body.errors.port_type).toEqual(['is invalid']);
    expect(Object.keys(res.body.errors).every((k) => k === 'port_type' || k === 'port_range')).toBe(true);
    if (res.body.errors.port_range !== undefined) expect(res.body.errors.port_range).toEqual(["can't be blank"]);
  });

  it('both null is a rule without ports', async () => {
    const rule = await createRule({ destination: freshBlock().cidr, port_type: null, port_range: null });
    expect(rule).toMatchObject({ port_type: null, port_range: null });
  });

  it('update: setting both to null clears the ports; setting them adds ports; pairing holds on the result', async () => {
    const rule = await createRule({ destination: freshBlock().cidr, port_type: 'tcp', port_range: '80' });
    const cleared = await server.api('PATCH', `/v0/rules/${rule.id}`, { rule: { port_type: null, port_range: null } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.data).toMatchObject({ port_type: null, port_range: null });
    const added = await server.api('PUT', `/v0/rules/${rule.id}`, {
      rule: { port_type: 'udp', port_range: '1000-2000' },
    });
    expect(added.status).toBe(200);
    expect(added.body.data).toMatchObject({ port_type: 'udp', port_range: '1000 - 2000' });
    const rangeOnly = await server.api('PATCH', `/v0/rules/${rule.id}`, { rule: { port_range: '3000' } });
    expect(rangeOnly.status).toBe(200);
    expect(rangeOnly.body.data).toMatchObject({ port_type: 'udp', port_range: '3000' });
  });

  it('update: a range reaching 65535 is refused there too', async () => {
    const rule = await createRule({ destination: freshBlock().cidr, port_type: 'tcp', port_range: '80' });
    for (const port_range of ['65535', '1-65535', '80-65535'])
      await expectUpdate422(rule.id, { port_range }, { errors: { port_range: ['port is not within valid range'] } });
  });

  it('update: removing one of the pair leaves the other alone, which is refused (reading: pairing holds on the merged rule)', async () => {
    const rule = await createRule({ destination: freshBlock().cidr, port_type: 'tcp', port_range: '80' });
    await expectUpdate422(rule.id, { port_range: null }, { errors: { port_range: ["can't be blank"] } });
    await expectUpdate422(rule.id, { port_type: null }, { errors: { port_type: ["can't be blank"] } });
  });
});

describe('user_id', () => {
  it('an existing user binds the rule; null or "" binds it to nobody', async () => {
    const user = await createUser();
    const { a } = freshBlock();
    expect((await createRule({ destination: `${a}.1.0/24`, user_id: user.id })).user_id).toBe(user.id);
    expect((await createRule({ destination: `${a}.2.0/24`, user_id: null })).user_id).toBeNull();
    expect((await createRule({ destination: `${a}.3.0/24`, user_id: '' })).user_id).toBeNull();
  });

  it('an unknown user is "does not exist" on user_id (not the upstream key "user")', async () => {
    await expectCreate422(
      { destination: freshBlock().cidr, user_id: randomUUID() },
      { errors: { user_id: ['does not exist'] } },
    );
  });

  it('a user_id that is not a UUID is refused on user_id (reading: "does not exist" or "is invalid")', async () => {
    const res = await server.api('POST', '/v0/rules', {
      rule: { destination: freshBlock().cidr, user_id: 'someone@example.com' },
    });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(['user_id']);
    expect([['does not exist'], ['is invalid']]).toContainEqual(res.body.errors.user_id);
  });

  it('update may change user_id (spec: all five fields), to a user, to null, and not to an unknown user', async () => {
    const user = await createUser();
    const rule = await createRule({ destination: freshBlock().cidr });
    const bound = await server.api('PATCH', `/v0/rules/${rule.id}`, { rule: { user_id: user.id } });
    expect(bound.status).toBe(200);
    expect(bound.body.data.user_id).toBe(user.id);
    await expectUpdate422(rule.id, { user_id: randomUUID() }, { errors: { user_id: ['does not exist'] } });
    const unbound = await server.api('PATCH', `/v0/rules/${rule.id}`, { rule: { user_id: null } });
    expect(unbound.status).toBe(200);
    expect(unbound.body.data.user_id).toBeNull();
  });
});

describe('every field error at once', () => {
  it('create', async () => {
    await expectCreate422(
      { destination: 'nowhere', action: 'maybe', port_type: 'tcp', port_range: '9-1', user_id: randomUUID() },
      {
        errors: {
          destination: ['is invalid'],
          action: ['is invalid'],
          port_range: ['lower value cannot be higher than upper value'],
          user_id: ['does not exist'],
        },
      },
    );
  });

  it('update', async () => {
    const rule = await createRule({ destination: freshBlock().cidr });
    await expectUpdate422(
      rule.id,
      { destination: '300.1.1.1', action: 'allow', port_type: 'udp', port_range: '99999' },
      {
        errors: {
          destination: ['is invalid'],
          action: ['is invalid'],
          port_range: ['port is not within valid range'],
        },
      },
    );
  });
});

describe('overlap', () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['the same destination, both global drop', { destination: 'A.0.0/16' }, { destination: 'A.0.0/16' }],
    ['a block and a block inside it', { destination: 'A.0.0/16' }, { destination: 'A.5.0/24' }],
    ['a block inside an existing block', { destination: 'A.5.0/24' }, { destination: 'A.0.0/16' }],
    ['a block and an address inside it', { destination: 'A.0.0/16' }, { destination: 'A.9.9' }],
    ['an address and the same address as /32', { destination: 'A.9.9' }, { destination: 'A.9.9/32' }],
    ['both accept', { destination: 'A.0.0/16', action: 'accept' }, { destination: 'A.1.0/24', action: 'accept' }],
    [
      'omitted action (drop) and explicit drop',
      { destination: 'A.0.0/16' },
      { destination: 'A.1.0/24', action: 'drop' },
    ],
    ['the same user', { destination: 'A.0.0/16', user_id: 'U1' }, { destination: 'A.1.0/24', user_id: 'U1' }],
    [
      'same port type, the same range',
      { destination: 'A.0.0/16', port_type: 'tcp', port_range: '80' },
      { destination: 'A.0.0/16', port_type: 'tcp', port_range: '80-80' },
    ],
    [
      'same port type, ranges sharing one port',
      { destination: 'A.0.0/16', port_type: 'tcp', port_range: '80-443' },
      { destination: 'A.1.0/24', port_type: 'tcp', port_range: '443-500' },
    ],
    [
      'same port type, one range inside the other',
      { destination: 'A.0.0/16', port_type: 'udp', port_range: '1000-2000' },
      { destination: 'A.0.0/16', port_type: 'udp', port_range: '1500' },
    ],
    ['IPv6 blocks', { destination: 'fd20:B::/48' }, { destination: 'fd20:B:0:1::/64' }],
    [
      'a block written with host bits set, then a block inside it',
      { destination: 'A.0.1/16' },
      { destination: 'A.3.0/24' },
    ],
    [
      'a block, then an enclosing block written with host bits set',
      { destination: 'A.3.0/24' },
      { destination: 'A.7.9/16' },
    ],
    [
      'an address, then an enclosing block written with host bits set',
      { destination: 'A.200.1' },
      { destination: 'A.200.77/24' },
    ],
    [
      'the whole IPv4 space and any block (bound to a user of its own)',
      { destination: '0.0.0.0/0', user_id: 'U1' },
      { destination: 'A.1.0/24', user_id: 'U1' },
    ],
    [
      'an IPv6 address and an uncompressed spelling of it',
      { destination: 'fd30:B::1' },
      { destination: 'FD30:B:0:0:0:0:0:1' },
    ],
  ])('conflict: %s', async (_name, first, second) => {
    const user = await createUser();
    const { a } = freshBlock();
    const fill = (rule: Record<string, unknown>) => {
      const filled: Record<string, unknown> = {
        ...rule,
        destination: String(rule.destination).replace('A', a).replace('B', String(block)),
      };
      if (rule.user_id === 'U1') filled.user_id = user.id;
      return filled;
    };
    await createRule(fill(first));
    await expectCreate422(fill(second), OVERLAP);
  });

  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    [
      'accept and drop on the same destination',
      { destination: 'A.0.0/16', action: 'accept' },
      { destination: 'A.0.0/16', action: 'drop' },
    ],
    ["a global rule and a user's rule", { destination: 'A.0.0/16' }, { destination: 'A.0.0/16', user_id: 'U1' }],
    ['two different users', { destination: 'A.0.0/16', user_id: 'U1' }, { destination: 'A.0.0/16', user_id: 'U2' }],
    [
      'tcp and udp with the same range',
      { destination: 'A.0.0/16', port_type: 'tcp', port_range: '80' },
      { destination: 'A.0.0/16', port_type: 'udp', port_range: '80' },
    ],
    [
      'disjoint port ranges',
      { destination: 'A.0.0/16', port_type: 'tcp', port_range: '80-100' },
      { destination: 'A.0.0/16', port_type: 'tcp', port_range: '101-200' },
    ],
    [
      'one with ports, one without',
      { destination: 'A.0.0/16' },
      { destination: 'A.0.0/16', port_type: 'tcp', port_range: '22' },
    ],
    [
      'one without ports after one with ports',
      { destination: 'A.0.0/16', port_type: 'udp', port_range: '53' },
      { destination: 'A.0.0/16' },
    ],
    ['adjacent disjoint blocks', { destination: 'A.0.0/17' }, { destination: 'A.128.0/17' }],
    ['IPv4 and IPv6 destinations', { destination: '0.0.0.0/0' }, { destination: '::/0' }],
  ])('no conflict: %s', async (_name, first, second) => {
    const [u1, u2] = [await createUser(), await createUser()];
    const { a } = freshBlock();
    const fill = (rule: Record<string, unknown>) => {
      const filled: Record<string, unknown> = { ...rule, destination: String(rule.destination).replace('A', a) };
      if (rule.user_id === 'U1') filled.user_id = u1.id;
      if (rule.user_id === 'U2') filled.user_id = u2.id;
      // The 0.0.0.0/0 and ::/0 pair must be bound to someone of its own to stay clear of every other test.
      if (String(rule.destination).endsWith('/0')) filled.user_id = u1.id;
      return filled;
    };
    await createRule(fill(first));
    await createRule(fill(second));
  });

  it('on update: a rule does not conflict with itself', async () => {
    const rule = await createRule({ destination: freshBlock().cidr, port_type: 'tcp', port_range: '80-90' });
    for (const change of [
      {},
      { destination: rule.destination },
      { port_range: '85' },
      { port_range: '80-90', port_type: 'tcp', action: 'drop' },
    ]) {
      const res = await server.api('PATCH', `/v0/rules/${rule.id}`, { rule: change });
      expect(res.status, JSON.stringify(change)).toBe(200);
    }
  });

  it("on update: moving into another rule's space conflicts (destination, action, binding, ports)", async () => {
    const user = await createUser();
    const { a } = freshBlock();
    await createRule({
      destination: `${a}.1.0/24`,
      action: 'accept',
      user_id: user.id,
      port_type: 'tcp',
      port_range: '443',
    });
    const other = await createRule({
      destination: `${a}.2.0/24`,
      action: 'accept',
      user_id: user.id,
      port_type: 'tcp',
      port_range: '443',
    });
    await expectUpdate422(other.id, { destination: `${a}.1.128/25` }, OVERLAP);
    const drop = await createRule({
      destination: `${a}.1.0/24`,
      action: 'drop',
      user_id: user.id,
      port_type: 'tcp',
      port_range: '443',
    });
    await expectUpdate422(drop.id, { action: 'accept' }, OVERLAP, 'PUT');
    const global = await createRule({
      destination: `${a}.1.0/24`,
      action: 'accept',
      port_type: 'tcp',
      port_range: '443',
    });
    await expectUpdate422(global.id, { user_id: user.id }, OVERLAP);
    const udp = await createRule({
      destination: `${a}.1.0/24`,
      action: 'accept',
      user_id: user.id,
      port_type: 'udp',
      port_range: '443',
    });
    await expectUpdate422(udp.id, { port_type: 'tcp' }, OVERLAP);
    const other80 = await createRule({
      destination: `${a}.1.0/24`,
      action: 'accept',
      user_id: user.id,
      port_type: 'tcp',
      port_range: '80',
    });
    await expectUpdate422(other80.id, { port_range: '80-443' }, OVERLAP);
  });

  it('a deleted rule no longer conflicts', async () => {
    const { cidr } = freshBlock();
    const rule = await createRule({ destination: cidr });
    expect((await server.api('DELETE', `/v0/rules/${rule.id}`)).status).toBe(204);
    await createRule({ destination: cidr });
  });

  it('concurrent identical creates: exactly one wins, the others get the overlap error', async () => {
    const { cidr } = freshBlock();
    const results = await Promise.all(
      Array.from({ length: 12 }, () =>
        server.api('POST', '/v0/rules', { rule: { destination: cidr, action: 'accept' } }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    for (const refused of results.filter((r) => r.status !== 201)) {
      expect(refused.status).toBe(422);
      expect(refused.body).toEqual(OVERLAP);
    }
    const stored = (await server.api('GET', '/v0/rules')).body.data.filter((r: any) => r.destination === cidr);
    expect(stored).toHaveLength(1);
  });

  it('concurrent overlapping creates with different destinations: exactly one wins', async () => {
    const { a } = freshBlock();
    const destinations = [`${a}.0.0/16`, `${a}.1.0/24`, `${a}.1.1`, `${a}.0.0/17`, `${a}.1.0/25`, `${a}.1.1/32`];
    const results = await Promise.all(
      destinations.map((destination) => server.api('POST', '/v0/rules', { rule: { destination } })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    for (const refused of results.filter((r) => r.status !== 201)) expect(refused.body).toEqual(OVERLAP);
  });
});

describe('list', () => {
  it('returns every row, well past any usual page size (150 rules), oldest first', async () => {
    const user = await createUser();
    const ids: string[] = [];
    for (let i = 0; i < 150; i++) {
      const res = await server.api('POST', '/v0/rules', {
        rule: { destination: `172.16.${Math.floor(i / 250)}.${i % 250}`, user_id: user.id },
      });
      expect(res.status).toBe(201);
      ids.push(res.body.data.id);
    }
    const listed = (await server.api('GET', '/v0/rules')).body.data
      .filter((r: any) => r.user_id === user.id)
      .map((r: any) => r.id);
    expect(listed).toEqual(ids);
  });
});

describe('delete', () => {
  it('204 with no body; then 404', async () => {
    const rule = await createRule({ destination: freshBlock().cidr });
    const res = await server.api('DELETE', `/v0/rules/${rule.id}`);
    expect(res.status).toBe(204);
    expect(res.body).toBeNull();
    expect((await server.api('GET', `/v0/rules/${rule.id}`)).status).toBe(404);
    expect((await server.api('DELETE', `/v0/rules/${rule.id}`)).status).toBe(404);
  });
});

/**
 * Rules stored by an earlier netform, which accepted ranges reaching 65535: no constraint is put
 * on stored data, so they stay listed, shown, updatable in their other fields and deletable.
 * Planted through the store itself (what an earlier netform wrote), on either store.
 */
describe('rules stored with a range reaching 65535', () => {
  async function plant(fields: Partial<RuleRow>): Promise<RuleRow> {
    const now = '2025-01-01T00:00:00.000000Z';
    const row: RuleRow = {
      id: randomUUID(),
      action: 'accept',
      destination: freshBlock().cidr,
      port_type: 'tcp',
      port_range: '1 - 65535',
      user_id: null,
      inserted_at: now,
      updated_at: now,
      ...fields,
    };
    const store = await openStore(server.dbPath);
    try {
      await store.transaction((tx) => tx.insertRule(row));
    } finally {
      await store.close();
    }
    return row;
  }

  it('are listed and shown as stored (a single 65535 as one number)', async () => {
    const range = await plant({});
    const single = await plant({ port_type: 'udp', port_range: '65535 - 65535' });
    const listed = (await server.api('GET', '/v0/rules')).body.data;
    expect(listed.find((r: RuleRow) => r.id === range.id)).toEqual(range);
    expect(listed.find((r: RuleRow) => r.id === single.id)).toEqual({ ...single, port_range: '65535' });
    expect((await server.api('GET', `/v0/rules/${range.id}`)).body.data).toEqual(range);
  });

  it('are updatable in their other fields, also when the body sends their range back as it is', async () => {
    const user = await createUser();
    const rule = await plant({});
    const { a } = freshBlock();
    const moved = await server.api('PATCH', `/v0/rules/${rule.id}`, {
      rule: { action: 'drop', destination: `${a}.0.0/16`, user_id: user.id },
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.data).toMatchObject({ action: 'drop', port_type: 'tcp', port_range: '1 - 65535' });
    // What a read-modify-write client sends: the whole rule as it read it, one field changed.
    const { id: _id, inserted_at: _i, updated_at: _u, ...whole } = moved.body.data;
    const back = await server.api('PUT', `/v0/rules/${rule.id}`, { rule: { ...whole, action: 'accept' } });
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    expect(back.body.data).toMatchObject({ action: 'accept', port_range: '1 - 65535' });
    for (const port_range of ['1-65535', '1 - 65535']) {
      const same = await server.api('PATCH', `/v0/rules/${rule.id}`, { rule: { port_range } });
      expect(same.status).toBe(200);
      expect(same.body.data).toEqual(back.body.data);
    }
    // Another range reaching 65535 is a new value, refused as on create.
    await expectUpdate422(
      rule.id,
      { port_range: '2-65535' },
      { errors: { port_range: ['port is not within valid range'] } },
    );
    const narrowed = await server.api('PATCH', `/v0/rules/${rule.id}`, { rule: { port_range: '1-65534' } });
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.data.port_range).toBe('1 - 65534');
  });

  it('still take part in the overlap rule', async () => {
    const rule = await plant({});
    await expectCreate422(
      { action: 'accept', destination: rule.destination, port_type: 'tcp', port_range: '65534' },
      OVERLAP,
    );
  });

  it('are deletable', async () => {
    const rule = await plant({ port_range: '65535 - 65535' });
    expect((await server.api('DELETE', `/v0/rules/${rule.id}`)).status).toBe(204);
    expect((await server.api('GET', `/v0/rules/${rule.id}`)).status).toBe(404);
  });
});
