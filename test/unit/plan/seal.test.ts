/**
 * Canonical JSON, the saved-plan key and seal (src/plan/canonical.ts, src/plan/seal.ts), and the
 * secrets apply reads again (src/apply/saved-plan.ts). The reader is test/unit/plan/planfile.test.ts's.
 */
import { createHmac } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { readSavedPlanSecrets } from '../../../src/apply/saved-plan.js';
import { Secret } from '../../../src/model/secret.js';
import {
  CANONICAL_MAX_DEPTH,
  canonicalJson,
  CanonicalJsonError,
  findProtoMember,
} from '../../../src/plan/canonical.js';
import { planChanges, type Plan } from '../../../src/plan/index.js';
import { checkSeal, PlanKey, PlanKeyError, sealedDocument } from '../../../src/plan/seal.js';
import { planSecret } from '../../../src/plan/secrets.js';
import { desired, device, liveState, liveUser, OPTIONS, secret, user } from '../../helpers/plan-fixtures.js';
import { planKeyProblemText } from '../../../src/views/plan-key.js';

const SHARED = 'a-plan-key-of-at-least-32-characters-0001';
const PSK = 'c2VjcmV0LXByZXNoYXJlZC1rZXktb2YtMzItYnl0ZXM=';

/** HKDF-SHA-256 (RFC 5869) written out, to pin how netform derives its keys. */
function hkdf(material: string, info: string, bytes: number): Buffer {
  const prk = createHmac('sha256', 'netform.plan').update(material).digest();
  return createHmac('sha256', prk)
    .update(Buffer.concat([Buffer.from(info), Buffer.from([1])]))
    .digest()
    .subarray(0, bytes);
}

function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

function plan(): Plan {
  const alice = liveUser('alice@example.com');
  return planChanges(
    desired({
      users: [
        user('alice@example.com', { devices: [device('laptop', {}, { preshared_key: secret(PSK, 'PSK') })] }),
        user('new@example.com', { password: secret('new-password-1', 'PW') }),
      ],
    }),
    liveState({ users: [liveUser('admin@example.com', { role: 'admin' }), alice] }),
    OPTIONS,
  );
}

describe('canonicalJson', () => {
  it('is one text whatever the order of members and the indentation', () => {
    const a = JSON.parse('{"b": [3, {"y": 1, "x": null}], "a": "text", "c": true}');
    const b = JSON.parse('{"c":true,"a":"text","b":[3,{"x":null,"y":1}]}');
    expect(canonicalJson(a)).toBe('{"a":"text","b":[3,{"x":null,"y":1}],"c":true}');
    expect(canonicalJson(b)).toBe(canonicalJson(a));
  });

  it('sorts members by UTF-16 code units and writes strings and numbers as RFC 8785 does', () => {
    // The key-sorting example of RFC 8785, section 3.2.3.
    const doc = JSON.parse(
      '{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control","\\u00f6":"Latin Small Letter O With Diaeresis"}',
    );
    const keysInText = [...canonicalJson(doc).matchAll(/(?:^\{|,)("(?:[^"\\]|\\.)*"):/g)].map((m) => JSON.parse(m[1]!));
    expect(keysInText).toEqual(['\r', '1', '\u0080', 'ö', '€', '😀', '\ufb33']);
    expect(canonicalJson(JSON.parse('{"n":[1e21, 0.1, -0, 1E-7, 100]}'))).toBe('{"n":[1e+21,0.1,0,1e-7,100]}');
    expect(canonicalJson(['\ud800', 'a\u2028b', '\u001b'])).toBe('["\\ud800","a\u2028b","\\u001b"]');
  });

  it('writes a __proto__ member like any other, so it cannot hide from a seal', () => {
    const withProto = JSON.parse('{"a":1,"__proto__":{"role":"admin"}}');
    expect(canonicalJson(withProto)).toBe('{"__proto__":{"role":"admin"},"a":1}');
    expect(canonicalJson(withProto)).not.toBe(canonicalJson({ a: 1 }));
    expect(findProtoMember(withProto)).toBe('');
    expect(findProtoMember(JSON.parse('{"changes":[{"body":{"__proto__":{}}}]}'))).toBe('changes[0].body');
    // A member name is shown only when it is plain.
    expect(findProtoMember(JSON.parse('{"\\u001b[2J":{"__proto__":1}}'))).toBe('…');
    expect(findProtoMember(JSON.parse('{"a":{"constructor":{}}}'))).toBeNull();
  });

  it('refuses what JSON would not read back the same, and nesting deeper than the bound', () => {
    for (const value of [undefined, () => 1, NaN, Infinity, 1n, new Date(0), { a: undefined }, [undefined]])
      expect(() => canonicalJson(value), String(value)).toThrow(CanonicalJsonError);
    expect(canonicalJson(nested(CANONICAL_MAX_DEPTH))).toContain('"leaf"');
    expect(() => canonicalJson(nested(CANONICAL_MAX_DEPTH + 1))).toThrow(/^nested /);
    expect(() => canonicalJson(JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`))).toThrow(CanonicalJsonError);
  });
});

describe('PlanKey', () => {
  it('is derived from the token with HKDF-SHA-256 and fixed labels (pinned: plan and apply may be two netforms)', () => {
    const key = PlanKey.from({}, () => 'token-1');
    expect(key.source).toBe('token');
    expect(key.id).toBe(hkdf('token-1', 'netform saved-plan key id v1', 8).toString('hex'));
    expect(key.id).toBe('887029ca80eca36d');
    const sealKey = hkdf('token-1', 'netform saved-plan seal v1', 32);
    expect(key.sealOf('{}')).toBe(`hmac-sha256:${createHmac('sha256', sealKey).update('{}').digest('hex')}`);
    const secretKey = hkdf('token-1', 'netform saved-plan secret v1', 32);
    expect(key.secretHmac('user:a@x.test', 'password', 'pw')).toBe(
      `hmac-sha256:${createHmac('sha256', secretKey).update('["user:a@x.test","password","pw"]').digest('hex')}`,
    );
  });

  it('is NETFORM_PLAN_KEY when set, whatever the token; a blank one is not set; a short one is refused', () => {
    const token = () => {
      throw new Error('the token is not needed');
    };
    const a = PlanKey.from({ NETFORM_PLAN_KEY: SHARED }, token);
    const b = PlanKey.from({ NETFORM_PLAN_KEY: ` ${SHARED}\n` }, () => 'another-token');
    expect(a.source).toBe('NETFORM_PLAN_KEY');
    expect(b.id).toBe(a.id);
    expect(PlanKey.from({ NETFORM_PLAN_KEY: '  ' }, () => 'token-1').id).toBe('887029ca80eca36d');
    expect(PlanKey.from({}, () => 'token-2').id).not.toBe('887029ca80eca36d');
    expect(PlanKey.from({}, () => 'token-1', 'embedded-token').source).toBe('embedded-token');
    const short = 'short-key-31-characters-long-00';
    expect(() => PlanKey.from({ NETFORM_PLAN_KEY: short }, token)).toThrow(PlanKeyError);
    try {
      PlanKey.from({ NETFORM_PLAN_KEY: short }, token);
    } catch (error) {
      expect(planKeyProblemText((error as PlanKeyError).problem)).toBe(
        'NETFORM_PLAN_KEY is too short to seal saved plans: it must have at least 32 characters (make one with: openssl rand -base64 32)',
      );
    }
  });

  it('never shows its material, and keeps secret HMACs apart from seals', () => {
    const key = PlanKey.from({}, () => 'nf_material_token');
    for (const shown of [String(key), inspect(key), JSON.stringify(key), JSON.stringify({ key })])
      expect(shown).not.toContain('nf_material_token');
    expect(JSON.parse(JSON.stringify(key))).toEqual({ source: 'token', id: key.id });
    // One secret's HMAC depends on its change and field too (equal secrets do not look equal)...
    const h = key.secretHmac('device:a@x.test/laptop', 'preshared_key', PSK);
    expect(key.secretHmac('device:a@x.test/phone', 'preshared_key', PSK)).not.toBe(h);
    expect(key.secretHmac('device:a@x.test/laptop', 'preshared_key', `${PSK}x`)).not.toBe(h);
    // ...and is never a seal, even of the text it was taken over.
    expect(key.sealOf(canonicalJson(['device:a@x.test/laptop', 'preshared_key', PSK]))).not.toBe(h);
  });
});

describe('sealedDocument and checkSeal', () => {
  const key = PlanKey.from({}, () => 'token-1');

  it('seal every member, one added later included; any edit, or another key, breaks it', () => {
    const doc = sealedDocument(plan(), key);
    expect(checkSeal(doc, key)).toBe('sealed');
    expect(checkSeal(JSON.parse(JSON.stringify(doc, null, 4)), key)).toBe('sealed');
    expect(
      checkSeal(
        doc,
        PlanKey.from({}, () => 'token-2'),
      ),
    ).toBe('other-key');

    const edited = JSON.parse(JSON.stringify(doc));
    edited.changes[0].body.role = 'admin';
    expect(checkSeal(edited, key)).toBe('modified');
    const proto = JSON.parse(JSON.stringify(doc).replace('"body":{', '"body":{"__proto__":{"role":"admin"},'));
    expect(Object.keys(proto.changes.find((c: any) => c.body?.__proto__).body)).toContain('__proto__');
    expect(checkSeal(proto, key)).toBe('modified');
    const { seal: _seal, ...unsealed } = doc;
    expect(checkSeal(unsealed, key)).toBe('unsealed');
    const { seal_key: _k, ...noKey } = doc;
    expect(checkSeal(noKey, key)).toBe('modified');

    // A member this code does not know (a later issue's) is covered all the same.
    const later = sealedDocument({ ...plan(), reviewed: { base: 'abc' } } as Plan, key);
    expect(checkSeal(later, key)).toBe('sealed');
    expect(checkSeal({ ...later, reviewed: { base: 'abd' } }, key)).toBe('modified');
    const { reviewed: _r, ...dropped } = later as Record<string, unknown>;
    expect(checkSeal(dropped, key)).toBe('modified');
  });

  it('holds each secret as its reference and HMAC, never its value', () => {
    const doc = sealedDocument(plan(), key);
    const text = JSON.stringify(doc);
    for (const value of [PSK, 'new-password-1', 'token-1']) expect(text).not.toContain(value);
    const secrets = (doc.changes as any[]).flatMap((c) => (c.secrets ?? []).map((s: any) => [c.id, s]));
    expect(secrets).toEqual([
      ['user:new@example.com', { field: 'password', ref: { env: 'PW' }, hmac: expect.any(String) }],
      ['device:alice@example.com/laptop', { field: 'preshared_key', ref: { env: 'PSK' }, hmac: expect.any(String) }],
    ]);
  });

  it('refuses to seal a secret whose planned value is not known', () => {
    const p = plan();
    p.changes[0]!.secrets = [{ field: 'password', ref: { env: 'PW' } }];
    expect(() => sealedDocument(p, key)).toThrow('unsealable_secret');
    p.changes[0]!.secrets = [planSecret('password', new Secret('v', { env: 'PW' }))];
    expect(() => sealedDocument(p, key)).not.toThrow();
  });
});

describe('readSavedPlanSecrets', () => {
  const key = PlanKey.from({}, () => 'token-1');
  const saved = (): Plan => JSON.parse(JSON.stringify(sealedDocument(plan(), key))) as Plan;

  it('gives the values that match the plan, and names the secrets that changed or cannot be read', () => {
    const p = saved();
    const same = readSavedPlanSecrets(p, key, (ref) => ({
      value: 'env' in ref && ref.env === 'PW' ? 'new-password-1' : PSK,
    }));
    expect(same.changed).toEqual([]);
    expect(same.unreadable).toEqual([]);
    expect([...same.values.values()].sort()).toEqual([PSK, 'new-password-1'].sort());
    const pskRef = p.changes.find((c) => c.kind === 'device')!.secrets![0]!.ref;
    expect(same.values.get(pskRef)).toBe(PSK);

    const changed = readSavedPlanSecrets(p, key, (ref) =>
      'env' in ref && ref.env === 'PW' ? { problem: 'environment variable PW is not set' } : { value: `${PSK}x` },
    );
    expect(changed.changed).toEqual([
      'device alice@example.com/laptop: its preshared_key (env:PSK) changed since the plan was made',
    ]);
    expect(changed.unreadable).toEqual(['user new@example.com: its password: environment variable PW is not set']);
    expect(changed.values.size).toBe(0);
  });
});
