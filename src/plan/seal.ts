/**
 * The seal of a saved plan: HMAC-SHA-256 over the canonical JSON (canonical.ts) of every member of
 * the document but `seal` itself, so a member added by a later version of netform is covered
 * without being listed here. The key comes from NETFORM_PLAN_KEY when it is set, otherwise from the
 * API token (with --embedded, the embedded server's token): whoever can apply can seal, and an
 * edited plan cannot be sealed again without that key.
 *
 * For each secret it will send, a saved plan holds HMAC(key, value), never the value: apply reads
 * the secret again and compares, so the secret sent is the one the plan was made with.
 *
 * Three keys are derived from the one given, with HKDF-SHA-256 and fixed labels: one for the seal,
 * one for secrets (so that no secret's HMAC can ever serve as a seal), and a key id, written in
 * the plan, that tells "sealed under another key" apart from "modified".
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { inspect } from 'node:util';
import { canonicalJson } from './canonical.js';
import type { Plan, PlanSecret, SealKeyInfo } from './types.js';
import { planSecretValue } from './secrets.js';

/** The environment variable holding a key shared by plan and apply. */
export const PLAN_KEY_ENV = 'NETFORM_PLAN_KEY';
/** The fewest characters NETFORM_PLAN_KEY may have (`openssl rand -base64 32` gives 44). */
export const PLAN_KEY_MIN_CHARS = 32;

/** Where the key came from: NETFORM_PLAN_KEY, the API token, or the embedded server's token. */
export type PlanKeySource = SealKeyInfo['source'];

const SALT = 'netform.plan';
const SEAL_INFO = 'netform saved-plan seal v1';
const SECRET_INFO = 'netform saved-plan secret v1';
const KEY_ID_INFO = 'netform saved-plan key id v1';
const HMAC_PREFIX = 'hmac-sha256:';

/** Why NETFORM_PLAN_KEY cannot be used (src/views/plan-key.ts words it); never its value. */
export type PlanKeyProblem = { code: 'too_short'; variable: typeof PLAN_KEY_ENV; minChars: number };

/** NETFORM_PLAN_KEY cannot be used; the message (its code) never holds its value. */
export class PlanKeyError extends Error {
  override readonly name = 'PlanKeyError';
  constructor(readonly problem: PlanKeyProblem) {
    super(`${problem.code} ${JSON.stringify(problem)}`);
  }
}

function derive(material: string, info: string, bytes = 32): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(material, 'utf8'), SALT, info, bytes));
}

/** A saved-plan key. Prints as its source and id, never as key material. */
export class PlanKey {
  readonly #seal: Buffer;
  readonly #secret: Buffer;
  /** 16 hex digits naming the key (not secret: it only tells keys apart). */
  readonly id: string;

  private constructor(
    material: string,
    readonly source: PlanKeySource,
  ) {
    this.#seal = derive(material, SEAL_INFO);
    this.#secret = derive(material, SECRET_INFO);
    this.id = derive(material, KEY_ID_INFO, 8).toString('hex');
  }

  /**
   * The key for this environment: NETFORM_PLAN_KEY when set (surrounding whitespace ignored; at
   * least PLAN_KEY_MIN_CHARS characters), otherwise derived from `token` (`tokenSource` says
   * which token it is). `token` is called only when needed.
   */
  static from(
    env: Record<string, string | undefined>,
    token: () => string,
    tokenSource: Exclude<PlanKeySource, 'NETFORM_PLAN_KEY'> = 'token',
  ): PlanKey {
    const shared = env[PLAN_KEY_ENV]?.trim();
    if (shared) {
      if ([...shared].length < PLAN_KEY_MIN_CHARS)
        throw new PlanKeyError({ code: 'too_short', variable: PLAN_KEY_ENV, minChars: PLAN_KEY_MIN_CHARS });
      return new PlanKey(shared, 'NETFORM_PLAN_KEY');
    }
    return new PlanKey(token(), tokenSource);
  }

  /** What a saved plan records of the key it was sealed with. */
  info(): SealKeyInfo {
    return { source: this.source, id: this.id };
  }

  /** The seal of a canonical JSON text. */
  sealOf(canonical: string): string {
    return HMAC_PREFIX + createHmac('sha256', this.#seal).update(canonical, 'utf8').digest('hex');
  }

  /** The HMAC a saved plan holds for one secret of one change, in place of its value. */
  secretHmac(changeId: string, field: string, value: string): string {
    return (
      HMAC_PREFIX +
      createHmac('sha256', this.#secret)
        .update(canonicalJson([changeId, field, value]), 'utf8')
        .digest('hex')
    );
  }

  toJSON(): SealKeyInfo {
    return this.info();
  }

  toString(): string {
    return `PlanKey(${this.source} ${this.id})`;
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

/** Whether two `hmac-sha256:` texts are equal, in time independent of where they differ. */
export function sameHmac(a: unknown, b: string): boolean {
  if (typeof a !== 'string') return false;
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * The saved-plan document of a plan, sealed: every secret as its reference and its HMAC, the key's
 * source and id in `seal_key`, then `seal` over everything else. It is built from its own JSON
 * text, so what is sealed is exactly what apply will read back. Every secret of the plan must
 * carry the value it was planned with (secrets.ts), or this throws.
 */
export function sealedDocument(plan: Plan, key: PlanKey): Record<string, unknown> {
  const { seal: _seal, seal_key: _sealKey, ...rest } = plan;
  const changes = plan.changes.map((change) =>
    change.secrets?.length
      ? { ...change, secrets: change.secrets.map((secret) => sealedSecret(change.id, secret, key)) }
      : change,
  );
  const doc = JSON.parse(JSON.stringify({ ...rest, changes, seal_key: key.info() })) as Record<string, unknown>;
  doc.seal = key.sealOf(canonicalJson(doc));
  return doc;
}

/**
 * A plan made now, its secrets with their HMAC under `key`, as a saved plan sealed with that key
 * holds them: a reviewed plan's changes can then be compared with it by reference and HMAC
 * (compare.ts). A secret whose value cannot be read here gets no HMAC, so it matches no reviewed
 * one. The secrets keep their references (the same objects), so their values stay reachable
 * through the original plan's secrets (secrets.ts).
 */
export function withSecretHmacs(plan: Plan, key: PlanKey): Plan {
  const changes = plan.changes.map((change) =>
    change.secrets?.length
      ? {
          ...change,
          secrets: change.secrets.map((secret): PlanSecret => {
            const read = planSecretValue(secret)?.read();
            const hmac = read && 'value' in read ? key.secretHmac(change.id, secret.field, read.value) : undefined;
            return { ...secret, ...(hmac ? { hmac } : {}) };
          }),
        }
      : change,
  );
  return { ...plan, changes };
}

/** A secret as a saved plan holds it: pinned by its HMAC, or (not read when planned) `pinned: false`. */
function sealedSecret(changeId: string, secret: PlanSecret, key: PlanKey): PlanSecret {
  const { field, ref } = secret;
  const at = secret.at ? { at: secret.at } : {};
  if (secret.pinned === false) return { field, ref, ...at, pinned: false };
  const value = planSecretValue(secret);
  // A plan made here always keeps the planned value aside (planSecret): a bug if it did not.
  if (value === undefined) throw new Error(`${changeId}: ${field}: unsealable_secret`);
  return { field, ref, ...at, hmac: key.secretHmac(changeId, field, value.reveal()) };
}

/** How a document's seal compares with `key`. */
export type SealCheck = 'sealed' | 'unsealed' | 'other-key' | 'modified';

/**
 * Checks the seal of a parsed saved-plan document: over every member but `seal`, whatever they
 * are. `other-key` when the document names a key id other than `key`'s (it was made with another
 * token or NETFORM_PLAN_KEY, or someone wants it to look so: either way it is refused).
 */
export function checkSeal(doc: Record<string, unknown>, key: PlanKey): SealCheck {
  if (typeof doc.seal !== 'string') return 'unsealed';
  const sealKey = doc.seal_key as Partial<SealKeyInfo> | undefined;
  if (typeof sealKey !== 'object' || sealKey === null || typeof sealKey.id !== 'string') return 'modified';
  if (sealKey.id !== key.id) return 'other-key';
  const { seal, ...rest } = doc;
  return sameHmac(seal, key.sealOf(canonicalJson(rest))) ? 'sealed' : 'modified';
}
