/**
 * The saved-plan file (src/plan/planfile.ts) on real files: what it writes validates against
 * schemas/plan.schema.json, and what it reads is refused in order: JSON, format, version (an
 * earlier or a newer netform's), __proto__, the seal, then the schema.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readSavedPlanSecrets } from '../../../src/apply/saved-plan.js';
import { SENT_SECRET_FIELDS } from '../../../src/model/secret.js';
import { CANONICAL_MAX_DEPTH, canonicalJson } from '../../../src/plan/canonical.js';
import { planChanges } from '../../../src/plan/index.js';
import type { WordedPlan } from '../../../src/plan/types.js';
import { PLAN_SCHEMA, planSchemaProblem } from '../../../src/plan/plan-schema.js';
import { parseSavedPlan, readSavedPlan, SavedPlanError, savedPlanJson } from '../../../src/plan/planfile.js';
import { PlanKey, sealedDocument } from '../../../src/plan/seal.js';
import { wordedPlan } from '../../../src/views/notes.js';
import { savedPlanRefusalText } from '../../../src/views/saved-plan.js';

/** Why parseSavedPlan refuses a text, as apply prints it. */
function parsed(text: string, path: string, key: PlanKey): string {
  try {
    parseSavedPlan(text, path, key);
  } catch (error) {
    expect(error).toBeInstanceOf(SavedPlanError);
    return savedPlanRefusalText((error as SavedPlanError).refusal);
  }
  throw new Error('the saved plan was accepted');
}
import { desired, device, liveState, liveUser, OPTIONS, secret, user } from '../../helpers/plan-fixtures.js';

const SHARED = 'a-plan-key-of-at-least-32-characters-0001';
const PSK = 'c2VjcmV0LXByZXNoYXJlZC1rZXktb2YtMzItYnl0ZXM=';

function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

function plan(): WordedPlan {
  const alice = liveUser('alice@example.com');
  return wordedPlan(
    planChanges(
      desired({
        users: [
          user('alice@example.com', { devices: [device('laptop', {}, { preshared_key: secret(PSK, 'PSK') })] }),
          user('new@example.com', { password: secret('new-password-1', 'PW') }),
        ],
      }),
      liveState({ users: [liveUser('admin@example.com', { role: 'admin' }), alice] }),
      OPTIONS,
    ),
  );
}

/** The v2 fixture, made by netform before format version 3 (test/fixtures/saved-plan-v2/README.md). */
const V2_PLAN = new URL('../../fixtures/saved-plan-v2/plan-v2.json', import.meta.url);
const V2_KEY = PlanKey.from({ NETFORM_PLAN_KEY: 'v2-fixture-key-0123456789abcdefghijklmnop' }, () => 'unused');

describe('the plan schema', () => {
  it('lists the secret fields the model lists, and no other', () => {
    const secret = PLAN_SCHEMA.$defs.secret.properties.field;
    expect(secret.enum).toEqual([...SENT_SECRET_FIELDS]);
  });

  it('takes what savedPlanJson writes, and the version 2 plan an earlier netform wrote', () => {
    const text = savedPlanJson(
      plan(),
      PlanKey.from({}, () => 'token-1'),
    );
    expect(JSON.parse(text)).toMatchObject({ format: 'netform.plan', format_version: 3 });
    expect(planSchemaProblem(JSON.parse(text), true)).toBeNull();
    const v2 = JSON.parse(readFileSync(V2_PLAN, 'utf8'));
    expect(v2.format_version).toBe(2);
    expect(planSchemaProblem(v2, true)).toBeNull();
    expect(parseSavedPlan(JSON.stringify(v2), 'plan-v2.json', V2_KEY).format_version).toBe(2);
  });

  it("takes version 3's reserved members: an unpinned secret (no HMAC) and a change's required owners", () => {
    const key = PlanKey.from({}, () => 'token-1');
    const doc = JSON.parse(savedPlanJson(plan(), key));
    const withSecret = doc.changes.find((c: any) => c.kind === 'user' && c.secrets);
    withSecret.secrets[0] = { field: 'password', ref: { env: 'PW' }, pinned: false };
    withSecret.required_owners = ['@netops', 'alice'];
    const { seal: _s, ...rest } = doc;
    const resealed = { ...rest, seal: key.sealOf(canonicalJson(rest)) };
    const read = parseSavedPlan(JSON.stringify(resealed), 'v3.json', key);
    expect(read.changes.find((c) => c.id === withSecret.id)!.required_owners).toEqual(['@netops', 'alice']);
    // Unpinned: read at apply and sent as read, with no HMAC to compare.
    const secrets = readSavedPlanSecrets(read, key, (ref) => ({
      value: 'env' in ref && ref.env === 'PW' ? 'any-value-now' : PSK,
    }));
    expect(secrets.changed).toEqual([]);
    expect([...secrets.values.values()]).toContain('any-value-now');
    // Pinned (or silent about it) without an HMAC, or unpinned with one: not a saved plan netform writes.
    for (const bad of [
      { field: 'password', ref: { env: 'PW' } },
      { field: 'password', ref: { env: 'PW' }, pinned: true },
      { field: 'password', ref: { env: 'PW' }, pinned: false, hmac: `hmac-sha256:${'0'.repeat(64)}` },
    ]) {
      withSecret.secrets[0] = bad;
      expect(planSchemaProblem(doc, true)).not.toBeNull();
    }
  });
});

describe('readSavedPlan', () => {
  const dir = mkdtempSync(join(tmpdir(), 'netform-plan-seal-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const tokenKey = PlanKey.from({}, () => 'token-1');
  const sharedKey = PlanKey.from({ NETFORM_PLAN_KEY: SHARED }, () => 'token-1');
  let n = 0;
  const write = (doc: unknown): string => {
    const path = join(dir, `plan-${++n}.json`);
    writeFileSync(path, typeof doc === 'string' ? doc : JSON.stringify(doc, null, 2));
    return path;
  };
  const refusal = (path: string, key: PlanKey): string => {
    try {
      readSavedPlan(path, key);
    } catch (error) {
      expect(error).toBeInstanceOf(SavedPlanError);
      return savedPlanRefusalText((error as SavedPlanError).refusal);
    }
    throw new Error('the saved plan was accepted');
  };

  it('reads a plan sealed under the same key', () => {
    const doc = sealedDocument(plan(), tokenKey);
    expect(readSavedPlan(write(doc), tokenKey)).toEqual(doc);
  });

  it('refuses a plan of an earlier format version, whatever its digest', () => {
    const { seal: _s, seal_key: _k, ...old } = sealedDocument(plan(), tokenKey);
    const path = write({ ...old, format_version: 1, digest: 'sha256:0000' });
    expect(refusal(path, tokenKey)).toBe(
      `${path}: the saved plan was made by an earlier netform (plan format version 1; this netform reads versions 2 and 3, which are sealed): plan again, then apply the new plan. Nothing was changed`,
    );
    const half = write({ ...old, format_version: 2.5 });
    expect(refusal(half, tokenKey)).toBe(
      `${half}: plan format version (not a whole number) is not supported by this netform (it reads versions 2 and 3); make the plan again`,
    );
  });

  it('refuses a plan sealed under another key, saying plan and apply must share the token or NETFORM_PLAN_KEY', () => {
    const byToken = write(sealedDocument(plan(), tokenKey));
    const byShared = write(sealedDocument(plan(), sharedKey));
    const tail =
      'Plan and apply must share the API token or NETFORM_PLAN_KEY: give both the same token, or the same NETFORM_PLAN_KEY (for example, CI plan and apply jobs with different tokens). Nothing was changed';
    expect(
      refusal(
        byToken,
        PlanKey.from({}, () => 'token-2'),
      ),
    ).toBe(`${byToken}: the saved plan was sealed under another key (it was made with another API token). ${tail}`);
    expect(refusal(byToken, sharedKey)).toBe(
      `${byToken}: the saved plan was sealed under another key (it was made with the API token, and this run has NETFORM_PLAN_KEY set). ${tail}`,
    );
    expect(refusal(byShared, tokenKey)).toContain(
      '(it was made with NETFORM_PLAN_KEY, and this run has the API token (NETFORM_PLAN_KEY is not set))',
    );
    expect(
      refusal(
        byShared,
        PlanKey.from({ NETFORM_PLAN_KEY: `${SHARED}2` }, () => 'x'),
      ),
    ).toContain('(it was made with another NETFORM_PLAN_KEY)');
    // What the file says of its key is never printed as it is.
    const doc = sealedDocument(plan(), sharedKey) as any;
    doc.seal_key.source = '\u001b]52;c;aGk=\u0007';
    expect(refusal(write(doc), tokenKey)).toContain('(it was made with another key)');
  });

  it('refuses edits, a __proto__ member, a missing seal, malformed secrets and deep nesting', () => {
    const doc = (): any => sealedDocument(plan(), tokenKey);
    const edited = doc();
    edited.changes.find((c: any) => c.kind === 'user').body.role = 'admin';
    const editedPath = write(edited);
    expect(refusal(editedPath, tokenKey)).toBe(
      `${editedPath}: the saved plan was modified after netform plan wrote it (its seal does not match). Nothing was changed; make it again with netform plan -f PATH -o PLANFILE`,
    );
    const protoPath = write(JSON.stringify(doc()).replace('"body":{', '"body":{"__proto__":{"role":"admin"},'));
    expect(refusal(protoPath, tokenKey)).toMatch(
      /has a member named __proto__ \(in changes\[\d\]\.body\), which netform never writes/,
    );

    const { seal: _s, ...unsealed } = doc();
    expect(refusal(write(unsealed), tokenKey)).toContain('the saved plan has no seal');

    // A secret without its HMAC, sealed by someone holding the key, is still refused.
    const bare = doc();
    delete bare.changes.find((c: any) => c.secrets).secrets[0].hmac;
    const { seal: _s2, ...rest } = bare;
    const bareAt = bare.changes.findIndex((c: any) => c.secrets);
    expect(refusal(write({ ...rest, seal: tokenKey.sealOf(canonicalJson(rest)) }), tokenKey)).toContain(
      `: the saved plan does not have the shape of plan format version 3 (changes[${bareAt}].secrets[0]: must have required property 'hmac'). Nothing was changed; make it again with netform plan -f PATH -o PLANFILE`,
    );

    const deep = doc();
    deep.warnings = [nested(200)];
    expect(refusal(write(deep), tokenKey)).toContain(`it is nested deeper than ${CANONICAL_MAX_DEPTH} levels`);
  });
});

describe('reading a saved plan: the version, then the seal, then the schema', () => {
  const key = PlanKey.from({}, () => 'token-1');

  it('refuses a plan of a later version (a newer netform), naming it and saying to upgrade', () => {
    const doc: any = sealedDocument(plan(), key);
    doc.format_version = 4;
    const { seal: _s, ...rest } = doc;
    const text = JSON.stringify({ ...rest, seal: key.sealOf(canonicalJson(rest)) });
    expect(parsed(text, 'next.json', key)).toBe(
      'next.json: the saved plan was made by a newer netform (plan format version 4; this netform reads versions 2 and 3): upgrade netform to apply it, or make the plan with this netform. Nothing was changed',
    );
  });

  it('refuses a tampered plan on its seal, before the schema would', () => {
    const doc: any = sealedDocument(plan(), key);
    // Both tampered and of no shape netform writes: the seal speaks first.
    doc.changes[0].action = 'obliterate';
    delete doc.summary;
    expect(planSchemaProblem(doc, true)).not.toBeNull();
    expect(parsed(JSON.stringify(doc), 'tampered.json', key)).toContain(
      'tampered.json: the saved plan was modified after netform plan wrote it (its seal does not match)',
    );
    // Sealed again by the key's holder: the seal holds, and the schema refuses it, naming where.
    const { seal: _s, ...rest } = doc;
    const resealed = JSON.stringify({ ...rest, seal: key.sealOf(canonicalJson(rest)) });
    expect(parsed(resealed, 'resealed.json', key)).toMatch(
      /^resealed\.json: the saved plan does not have the shape of plan format version 3 \((the document|changes\[0\]\.action): /,
    );
  });
});
