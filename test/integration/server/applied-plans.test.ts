/**
 * `POST /netform/applied-plans`: netform's own server records the seal of each saved plan applied
 * through it, outside the /v0 contract and behind the same admin token. Run on SQLite and on
 * PostgreSQL (the store's findAppliedPlan and insertAppliedPlan, migration included).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessServer } from '../../helpers/in-process-server.js';
import type { TestServer } from '../../helpers/server-api.js';

const PATH = '/netform/applied-plans';
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

let server: TestServer;
beforeAll(async () => {
  server = await startInProcessServer();
});
afterAll(async () => {
  await server?.stop();
});

const aSeal = () => `hmac-sha256:${randomBytes(32).toString('hex')}`;

describe('POST /netform/applied-plans', () => {
  it('records a seal once (201); another claim of it gets 409 with the date; the same claim again gets 200', async () => {
    const seal = aSeal();
    const claim = randomUUID();
    const first = await server.api('POST', PATH, { seal, claim });
    expect(first.status).toBe(201);
    expect(first.body.data.seal).toBe(seal);
    expect(first.body.data.applied_at).toMatch(TIMESTAMP);

    const replay = await server.api('POST', PATH, { seal, claim: randomUUID() });
    expect(replay.status).toBe(409);
    expect(replay.body).toEqual({ error: 'already_applied', errors: { applied_at: [first.body.data.applied_at] } });

    const retried = await server.api('POST', PATH, { seal, claim });
    expect(retried.status).toBe(200);
    expect(retried.body.data).toEqual(first.body.data);

    expect((await server.api('POST', PATH, { seal: aSeal(), claim: randomUUID() })).status).toBe(201);
  });

  it('two applies of one plan at once: exactly one is recorded', async () => {
    const seal = aSeal();
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => server.api('POST', PATH, { seal, claim: randomUUID() })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
  });

  it('needs the admin token: none or a wrong one gets 401 and records nothing', async () => {
    const seal = aSeal();
    expect((await server.api('POST', PATH, { seal, claim: randomUUID() }, { token: null })).status).toBe(401);
    expect((await server.api('POST', PATH, { seal, claim: randomUUID() }, { token: 'x'.repeat(43) })).status).toBe(401);
    expect((await server.api('POST', PATH, { seal, claim: randomUUID() })).status).toBe(201);
  });

  it('refuses a body without a printable seal and claim (400), recording nothing', async () => {
    const seal = aSeal();
    for (const body of [
      {},
      { seal },
      { claim: randomUUID() },
      { seal: 42, claim: randomUUID() },
      { seal: 'short', claim: randomUUID() },
      { seal: `${seal}\n`, claim: randomUUID() },
      { seal: 'x'.repeat(201), claim: randomUUID() },
      [seal],
      '',
    ]) {
      const res = await server.api('POST', PATH, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toEqual({ error: 'Bad Request' });
    }
    expect((await server.api('POST', PATH, { seal, claim: randomUUID() })).status).toBe(201);
  });

  it('keeps its records across a restart', async () => {
    const seal = aSeal();
    expect((await server.api('POST', PATH, { seal, claim: randomUUID() })).status).toBe(201);
    await server.restart();
    expect((await server.api('POST', PATH, { seal, claim: randomUUID() })).status).toBe(409);
  });

  it('is no part of the /v0 API description', async () => {
    const doc = await server.api('GET', '/v0/openapi.json', undefined, { token: null });
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.body.paths)).toContain('/v0/users');
    expect(Object.keys(doc.body.paths).filter((p) => p.startsWith('/netform'))).toEqual([]);
  });
});
