/**
 * API tokens (docs/api-v0.md section 3): issued and revoked on the server machine only, stored as a
 * SHA-256 hash, accepted only while their owner is an admin that is not disabled.
 */
import { randomUUID } from 'node:crypto';
import { Messages, checkEmail } from '../../src/model/index.js';
import { formatTimestamp, nowTimestamp, parseTimestamp, type Clock } from '../clock.js';
import { digestsEqual, generateApiToken, hashApiToken, isApiTokenShape } from '../crypto.js';
import { AdminError } from '../errors.js';
import type { Store, StoreReader, TokenListing, TokenWithOwner, UserRow } from '../store/index.js';

export const TOKEN_DAYS = { min: 1, max: 90, default: 30 } as const;
export const MAX_LIVE_TOKENS_PER_USER = 25;
const MICROS_PER_DAY = 86_400n * 1_000_000n;

export type Authentication =
  { ok: true; actor: UserRow; tokenId: string; tokenHash: string } | { ok: false; body: Record<string, unknown> };

const UNAUTHENTICATED = { errors: { auth: 'unauthenticated' } };
const INVALID_TOKEN = { errors: { auth: 'invalid_token' } };
const NO_RESOURCE = { errors: { auth: 'no_resource_found' } };
const UNAUTHORIZED = { error: 'Unauthorized' };

/**
 * Checks an Authorization header value. Every failure is a 401 with the body of docs/api-v0.md
 * section 2. Not an async function: it runs on every request, and it hands on the store lookup's
 * own promise instead of wrapping it in another.
 */
export function authenticate(store: StoreReader, clock: Clock, header: string | undefined): Promise<Authentication> {
  const hash = bearerTokenHash(header);
  return typeof hash === 'string' ? authenticateHash(store, clock, hash) : Promise.resolve(hash);
}

/** The digest of the header's bearer token, or the refusal of a header without a well-formed one. */
export function bearerTokenHash(header: string | undefined): string | Authentication {
  const match = header === undefined ? null : /^\s*bearer(?:\s+(.*?))?\s*$/i.exec(header);
  if (!match) return REFUSED_UNAUTHENTICATED;
  const token = match[1] ?? '';
  if (!isApiTokenShape(token)) return REFUSED_INVALID;
  return hashApiToken(token);
}

/**
 * The checks of a token after its header parsed, by the token's digest. Also what a write
 * transaction runs again, on its own connection, before it writes anything (see
 * services/context.ts): permission is decided by what that transaction reads.
 */
export async function authenticateHash(store: StoreReader, clock: Clock, hash: string): Promise<Authentication> {
  const found = await store.findTokenByHash(hash);
  if (!found) return { ok: false, body: NO_RESOURCE };
  if (Object.isFrozen(found)) return keptAuthentication(found, clock, hash);
  // Read afresh (a write transaction's own read): judged once, as it is used once.
  const verdict = judge(found, hash, false);
  if (verdict.expires === null) return verdict.live;
  return verdict.expires <= nowTimestamp(clock) ? REFUSED : verdict.live;
}

/**
 * The answer for a token and owner the store keeps (frozen, until anything commits: see
 * findTokenByHash), found by `hash`: judged once per kept pair; only the expiry is compared again
 * on each request, with the clock's micros.
 */
export function keptAuthentication(found: TokenWithOwner, clock: Clock, hash: string): Authentication {
  let verdict = verdicts.get(found);
  if (!verdict || verdict.hash !== hash) verdicts.set(found, (verdict = judge(found, hash, true)));
  if (verdict.expires === null) return verdict.live;
  const expired =
    typeof verdict.expires === 'bigint' ? clock.nowMicros() >= verdict.expires : verdict.expires <= nowTimestamp(clock);
  return expired ? REFUSED : verdict.live;
}

const REFUSED_UNAUTHENTICATED: Authentication = Object.freeze({ ok: false, body: UNAUTHENTICATED });
const REFUSED_INVALID: Authentication = Object.freeze({ ok: false, body: INVALID_TOKEN });

/** An unknown, revoked or expired token. */
const REFUSED: Authentication = Object.freeze({ ok: false, body: NO_RESOURCE });

/**
 * What a token and its owner, as read, decide: `live` is the answer while the token has not
 * expired; `expires` its expiry (micros when the stored text is the contract's own format, which
 * then compares as the text does), or null when `live` stands whatever the time (a refusal).
 */
interface Verdict {
  hash: string;
  live: Authentication;
  expires: bigint | string | null;
}

/** The verdicts on the tokens the store keeps, forgotten with them (see authenticateHash). */
const verdicts = new WeakMap<TokenWithOwner, Verdict>();

function judge(found: TokenWithOwner, hash: string, kept: boolean): Verdict {
  // The lookup is by digest, which tells an attacker nothing; the final comparison is constant-time.
  if (!digestsEqual(found.token.token_hash, hash) || found.token.revoked_at !== null)
    return { hash, live: REFUSED, expires: null };
  const live: Authentication =
    found.owner.role !== 'admin' || found.owner.disabled_at !== null
      ? { ok: false, body: UNAUTHORIZED }
      : { ok: true, actor: found.owner, tokenId: found.token.id, tokenHash: hash };
  const text = found.token.expires_at;
  if (!kept) return { hash, live, expires: text };
  const micros = CONTRACT_TIMESTAMP.test(text) ? parseTimestamp(text) : null;
  const exact = micros !== null && formatTimestamp(micros) === text;
  return { hash, live: Object.freeze(live), expires: exact ? micros : text };
}

const CONTRACT_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

export interface IssuedToken {
  token: string;
  id: string;
  expiresAt: string;
  userCreated: boolean;
  email: string;
}

export function checkTokenDays(days: unknown): number {
  const n = typeof days === 'string' && /^\d+$/.test(days.trim()) ? Number(days) : days;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < TOKEN_DAYS.min || n > TOKEN_DAYS.max) {
    throw new AdminError(`--days must be a whole number from ${TOKEN_DAYS.min} to ${TOKEN_DAYS.max}`);
  }
  return n;
}

/** The checks of a token request that need no database (so a refused request creates none). */
export function checkTokenRequest(email: string, days: unknown): { email: string; days: number } {
  const checked = checkEmail(email);
  if (!checked.ok) throw new AdminError(`--email ${JSON.stringify(email)} ${checked.message}`);
  return { email: checked.email, days: checkTokenDays(days) };
}

/**
 * Issues a token for the admin with this email, creating the admin when no user has the email
 * (so the first admin can be made on an empty database). An existing user must be an admin and
 * not disabled.
 */
export async function issueApiToken(
  store: Store,
  clock: Clock,
  email: string,
  days: number = TOKEN_DAYS.default,
): Promise<IssuedToken> {
  const { email: validEmail, days: validDays } = checkTokenRequest(email, days);
  const token = generateApiToken();
  return store.transaction(async (tx) => {
    let owner = await tx.findUserByEmail(validEmail);
    let userCreated = false;
    const now = clock.nowMicros();
    const nowText = formatTimestamp(now);
    if (!owner) {
      owner = {
        id: randomUUID(),
        email: validEmail,
        role: 'admin',
        password_hash: null,
        last_signed_in_at: null,
        last_signed_in_method: null,
        disabled_at: null,
        inserted_at: nowText,
        updated_at: nowText,
      };
      await tx.insertUser(owner);
      userCreated = true;
    } else if (owner.role !== 'admin') {
      throw new AdminError(
        `${owner.email} is an unprivileged user; only admins get API tokens (make them an admin through /v0 first)`,
      );
    } else if (owner.disabled_at !== null) {
      throw new AdminError(`${owner.email} is disabled; a disabled admin cannot get API tokens`);
    }
    if ((await tx.countLiveTokens(owner.id, nowText)) >= MAX_LIVE_TOKENS_PER_USER) {
      throw new AdminError(
        `${owner.email}: ${Messages.tokenLimit(MAX_LIVE_TOKENS_PER_USER)}; revoke one first (netform server token list / revoke)`,
      );
    }
    const id = randomUUID();
    const expiresAt = formatTimestamp(now + BigInt(validDays) * MICROS_PER_DAY);
    await tx.insertToken({
      id,
      user_id: owner.id,
      token_hash: hashApiToken(token),
      inserted_at: nowText,
      expires_at: expiresAt,
      revoked_at: null,
    });
    return { token, id, expiresAt, userCreated, email: owner.email };
  });
}

export type TokenStatus = 'live' | 'revoked' | 'expired';

export interface TokenSummary {
  id: string;
  email: string;
  created: string;
  expires: string;
  status: TokenStatus;
}

export async function listApiTokens(store: StoreReader, clock: Clock): Promise<TokenSummary[]> {
  const now = nowTimestamp(clock);
  return (await store.listTokens()).map((t: TokenListing) => ({
    id: t.id,
    email: t.email,
    created: t.inserted_at,
    expires: t.expires_at,
    status: t.revoked_at !== null ? 'revoked' : t.expires_at <= now ? 'expired' : 'live',
  }));
}

export async function revokeApiToken(store: Store, clock: Clock, id: string): Promise<{ alreadyRevoked: boolean }> {
  return store.transaction(async (tx) => {
    const token = await tx.getToken(id.trim());
    if (!token) throw new AdminError(`no token with id ${JSON.stringify(id)} (see netform server token list)`);
    if (token.revoked_at !== null) return { alreadyRevoked: true };
    await tx.revokeToken(token.id, nowTimestamp(clock));
    return { alreadyRevoked: false };
  });
}
