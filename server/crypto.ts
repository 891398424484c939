/** Key material and hashes of the server, all from node:crypto. */
import { generateKeyPairSync, hash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** A WireGuard (Curve25519 / X25519) key pair as standard base64 of the 32 raw bytes each. */
export function generateWireguardKeyPair(): { privateKey: string; publicKey: string } {
  const { publicKey, privateKey } = generateKeyPairSync('x25519');
  const pub = publicKey.export({ format: 'jwk' });
  const priv = privateKey.export({ format: 'jwk' });
  if (typeof pub.x !== 'string' || typeof priv.d !== 'string') throw new Error('x25519 key export failed');
  return {
    publicKey: Buffer.from(pub.x, 'base64url').toString('base64'),
    privateKey: Buffer.from(priv.d, 'base64url').toString('base64'),
  };
}

export function generatePresharedKey(): string {
  return randomBytes(32).toString('base64');
}

/** API tokens: `nf_` and 32 random bytes in base64url (43 characters). */
export const API_TOKEN_PREFIX = 'nf_';
const API_TOKEN_SHAPE = /^nf_[A-Za-z0-9_-]{43}$/;

export function generateApiToken(): string {
  return `${API_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

export function isApiTokenShape(text: string): boolean {
  return API_TOKEN_SHAPE.test(text);
}

/** Runs on every request: the one-shot hash, a quarter of createHash's cost (bench/RESULTS.md, "GET of one object"). */
export function hashApiToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** Compares two hex digests in constant time. */
export function digestsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 } as const;

function scryptAsync(password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, keylen, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** `scrypt$N$r$p$salt$hash` (base64). Passwords are only ever stored like this. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, SCRYPT.keylen, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p });
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64'), key.toString('base64')].join('$');
}
