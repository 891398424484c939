/**
 * IP address and CIDR parsing for every rule that involves addresses. Parsing is done by
 * ipaddr.js; this module adds the strictness the contract needs (dotted-quad IPv4 only, no zone
 * ids, prefix lengths within the family) and the integer ranges that overlap and allocation use.
 */
import { createRequire } from 'node:module';
import { flatText } from './flat-text.js';

/**
 * ipaddr.js, loaded on first use (most addresses take the common paths below, which need it not)
 * and by `require`: it is CommonJS, and an `import` of it makes Node scan its source for exports,
 * which cost every process about as much CPU as a dozen of our modules.
 */
let ipaddrLib: typeof import('ipaddr.js') | undefined;
function ipaddr(): typeof import('ipaddr.js') {
  return (ipaddrLib ??= createRequire(import.meta.url)('ipaddr.js') as typeof import('ipaddr.js'));
}

export type IpFamily = 4 | 6;

export interface ParsedAddress {
  readonly family: IpFamily;
  /** The address as an unsigned integer. */
  readonly value: bigint;
  /** Canonical text: dotted quad, or RFC 5952 compressed IPv6. */
  readonly text: string;
}

export interface ParsedCidr {
  readonly family: IpFamily;
  /** The address as written (host bits kept, as the server echoes destinations as given). */
  readonly address: bigint;
  readonly prefix: number;
  /** First and last address of the block the prefix describes. */
  readonly start: bigint;
  readonly end: bigint;
  /** Whether the text carried an explicit `/prefix`. */
  readonly hadPrefix: boolean;
  /** Canonical text `address/prefix` (address canonical, host bits kept). */
  readonly canonical: string;
  /** Canonical text of the block: network address `/prefix`. */
  readonly network: string;
}

const FAMILY_BITS: Record<IpFamily, number> = { 4: 32, 6: 128 };

function bytesToBigint(bytes: number[]): bigint {
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return value;
}

function bigintToBytes(value: bigint, length: number): number[] {
  const bytes = new Array<number>(length);
  for (let i = length - 1; i >= 0; i--) {
    bytes[i] = Number(value & 0xffn);
    value >>= 8n;
  }
  return bytes;
}

/**
 * Parsed values by text, so that an address or block read many times in one run (declared, checked,
 * compared with the live one) is parsed once. The values are shared: treat them as read-only.
 * Bounded: a run over more distinct texts than this starts the cache afresh.
 */
class ParseCache<T> {
  readonly #entries = new Map<string, T>();
  constructor(readonly limit: number) {}
  get(key: string): T | undefined {
    return this.#entries.get(key);
  }
  set(key: string, value: T): T {
    if (this.#entries.size >= this.limit) this.#entries.clear();
    this.#entries.set(key, value);
    return value;
  }
}

const CACHE_LIMIT = 1 << 16;
const addressCache = new ParseCache<ParsedAddress | null>(CACHE_LIMIT);
const cidrCache = new ParseCache<ParsedCidr | null>(CACHE_LIMIT);

/** A dotted quad as ipaddr.js writes it (no leading zeros): its text is already canonical. */
const CANONICAL_IPV4 = /^(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})$/;

/**
 * The common case without ipaddr.js: a canonical dotted quad, whose parse is its four numbers.
 * Anything else (leading zeros, octets over 255) is undefined here and gets ipaddr.js's verdict.
 */
function parseCanonicalIpv4(s: string): ParsedAddress | undefined {
  const m = CANONICAL_IPV4.exec(s);
  if (!m) return undefined;
  const a = Number(m[1]);
  const b = Number(m[2]);
  const c = Number(m[3]);
  const d = Number(m[4]);
  if (a > 255 || b > 255 || c > 255 || d > 255) return undefined;
  return { family: 4, value: BigInt(((a * 256 + b) * 256 + c) * 256 + d), text: s };
}

/** Lower-case hexadecimal digits and colons, as an address in RFC 5952 form is written. */
const IPV6_CHARACTERS = /^[0-9a-f:]{2,39}$/;

/** The eight groups of an address written with lower-case groups and at most one `::`, or undefined. */
function ipv6Groups(s: string): number[] | undefined {
  const gap = s.indexOf('::');
  if (gap !== s.lastIndexOf('::')) return undefined;
  const head = gap === -1 ? s : s.slice(0, gap);
  const tail = gap === -1 ? '' : s.slice(gap + 2);
  const before = head === '' ? [] : head.split(':');
  const after = tail === '' ? [] : tail.split(':');
  const missing = 8 - before.length - after.length;
  if (gap === -1 ? missing !== 0 : missing < 1) return undefined;
  const groups: number[] = [];
  for (const part of [...before, ...Array<string>(gap === -1 ? 0 : missing).fill('0'), ...after]) {
    if (part.length === 0 || part.length > 4) return undefined;
    groups.push(Number.parseInt(part, 16));
  }
  return groups;
}

/** RFC 5952 text of eight groups: the leftmost longest run of two or more zero groups written `::`. */
function rfc5952(groups: readonly number[]): string {
  let bestAt = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) [bestAt, bestLength] = [i, j - i];
    i = j;
  }
  const hex = (from: number, to: number): string =>
    groups
      .slice(from, to)
      .map((g) => g.toString(16))
      .join(':');
  return bestAt === -1 ? hex(0, 8) : `${hex(0, bestAt)}::${hex(bestAt + bestLength, 8)}`;
}

/**
 * The common IPv6 case without ipaddr.js: an address already in RFC 5952 form (as servers list
 * device addresses), whose parse is its eight groups. Anything else is undefined here and gets
 * ipaddr.js's verdict (the same value and text either way).
 */
function parseCanonicalIpv6(s: string): ParsedAddress | undefined {
  if (!IPV6_CHARACTERS.test(s)) return undefined;
  const groups = ipv6Groups(s);
  if (!groups || rfc5952(groups) !== s) return undefined;
  let value = 0n;
  for (let i = 0; i < 8; i += 2) value = (value << 32n) | BigInt(groups[i]! * 0x10000 + groups[i + 1]!);
  return { family: 6, value, text: s };
}

export function parseIpAddress(text: unknown): ParsedAddress | null {
  if (typeof text !== 'string') return null;
  const cached = addressCache.get(text);
  return cached !== undefined ? cached : addressCache.set(text, parseAddressText(text));
}

function parseAddressText(text: string): ParsedAddress | null {
  const s = text.trim();
  if (s === '' || s.includes('%')) return null;
  try {
    if (s.includes(':')) {
      // `::a.b.c.d` is the IPv4-compatible address ::a.b.c.d (RFC 4291 §2.5.5.1), as PostgreSQL,
      // Erlang's :inet and nft read it; ipaddr.js reads it as the IPv4-mapped ::ffff:a.b.c.d.
      const compatible = /^::(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.exec(s);
      if (compatible) {
        if (!ipaddr().IPv4.isValidFourPartDecimal(compatible[1]!)) return null;
        const value = bytesToBigint(ipaddr().IPv4.parse(compatible[1]!).toByteArray());
        return { family: 6, value, text: formatAddress(6, value) };
      }
      const canonical = parseCanonicalIpv6(s);
      if (canonical) return canonical;
      // parse throws where isValid would say no (caught below): one parse, not two.
      const addr = ipaddr().IPv6.parse(s);
      let value = 0n;
      for (const part of addr.parts) value = (value << 16n) | BigInt(part);
      return { family: 6, value, text: addr.toString() };
    }
    const canonical = parseCanonicalIpv4(s);
    if (canonical) return canonical;
    if (!ipaddr().IPv4.isValidFourPartDecimal(s)) return null;
    const addr = ipaddr().IPv4.parse(s);
    return { family: 4, value: bytesToBigint(addr.toByteArray()), text: addr.toString() };
  } catch {
    return null;
  }
}

export function formatAddress(family: IpFamily, value: bigint): string {
  if (family === 4) {
    const n = Number(value);
    return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
  }
  const text = ipaddr().fromByteArray(bigintToBytes(value, 16)).toString();
  // The text is canonical, as a parse of it would say: an address just made (an allocation) is
  // not parsed again by ipaddr.js when the store keys it.
  if (addressCache.get(text) === undefined) addressCache.set(text, { family: 6, value, text });
  return text;
}

/** Parses `address` or `address/prefix`. A bare address is a block of one (/32 or /128). */
export function parseCidrOrAddress(text: unknown): ParsedCidr | null {
  if (typeof text !== 'string') return null;
  const cached = cidrCache.get(text);
  return cached !== undefined ? cached : cidrCache.set(text, parseCidrText(text));
}

function parseCidrText(text: string): ParsedCidr | null {
  const s = text.trim();
  const slash = s.indexOf('/');
  const addressText = slash === -1 ? s : s.slice(0, slash);
  // Not through the address cache: the block itself is cached.
  const address = parseAddressText(addressText);
  if (!address || addressText !== addressText.trim()) return null;
  const bits = FAMILY_BITS[address.family];
  let prefix = bits;
  if (slash !== -1) {
    const prefixText = s.slice(slash + 1);
    if (!/^\d{1,3}$/.test(prefixText)) return null;
    prefix = Number(prefixText);
    if (prefix > bits) return null;
  }
  const hostBits = BigInt(bits - prefix);
  const hostMask = (1n << hostBits) - 1n;
  const start = address.value & ~hostMask & ((1n << BigInt(bits)) - 1n);
  const end = start | hostMask;
  // Kept for the run (the parse cache): one string each, one for both when an IPv4 block is
  // written at its first address (a dotted quad has one spelling).
  const canonical = flatText(`${address.text}/${prefix}`);
  const network =
    address.family === 4 && start === address.value
      ? canonical
      : flatText(`${formatAddress(address.family, start)}/${prefix}`);
  return {
    family: address.family,
    address: address.value,
    prefix,
    start,
    end,
    hadPrefix: slash !== -1,
    canonical,
    network,
  };
}

const DOTTED_CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?$/;

/**
 * A canonical IPv4 `a.b.c.d[/n]` read as plain numbers (its address, prefix and first address),
 * for code that reads many destinations; null for anything else, whose verdict is
 * parseCidrOrAddress's (leading zeros and out-of-range values included). Same acceptance.
 */
export function dottedCidr(text: string): { address: number; prefix: number; start: number } | null {
  const m = DOTTED_CIDR.exec(text);
  if (!m) return null;
  let address = 0;
  for (let i = 1; i <= 4; i++) {
    const octet = m[i]!;
    if ((octet.length > 1 && octet[0] === '0') || Number(octet) > 255) return null;
    address = address * 256 + Number(octet);
  }
  const prefixText = m[5];
  if (prefixText !== undefined && prefixText.length > 1 && prefixText[0] === '0') return null;
  const prefix = prefixText === undefined ? 32 : Number(prefixText);
  if (prefix > 32) return null;
  return { address, prefix, start: address - (address % 2 ** (32 - prefix)) };
}

/**
 * Only the block of `address` or `address/prefix` (family, first and last address), for code that
 * parses many destinations and needs no canonical text. Same acceptance as parseCidrOrAddress.
 */
export function cidrRange(text: string): { family: IpFamily; start: bigint; end: bigint } | null {
  // A block parsed already (checked, or compared) is not parsed again.
  const cached = cidrCache.get(text);
  if (cached !== undefined) return cached;
  const dotted = dottedCidr(text);
  if (dotted) {
    const end = dotted.start + 2 ** (32 - dotted.prefix) - 1;
    return { family: 4, start: BigInt(dotted.start), end: BigInt(end) };
  }
  const parsed = parseCidrOrAddress(text);
  return parsed && { family: parsed.family, start: parsed.start, end: parsed.end };
}

export function rangesIntersect(a: ParsedCidr, b: ParsedCidr): boolean {
  return a.family === b.family && a.start <= b.end && b.start <= a.end;
}

export function cidrContains(outer: ParsedCidr, inner: ParsedCidr): boolean {
  return outer.family === inner.family && outer.start <= inner.start && inner.end <= outer.end;
}

/**
 * A fixed-width hex text of an address integer (8 digits for IPv4, 32 for IPv6), so that stores
 * without 128-bit integers can index and compare addresses as text in numeric order.
 */
export function addressSortKey(family: IpFamily, value: bigint): string {
  return value.toString(16).padStart(family === 4 ? 8 : 32, '0');
}

const HOSTNAME = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?$/;

/** A DNS host name: letters, digits, `.`, `_` and `-`, at most 253 characters, no empty labels. */
export function isHostname(text: string): boolean {
  return text.length > 0 && text.length <= 253 && HOSTNAME.test(text) && text.split('.').every((l) => l.length <= 63);
}

/**
 * An endpoint: `host`, `host:port`, `IPv4:port`, bare IPv6, or `[IPv6]:port`; port 1 to 65535.
 * Returns null when the text is none of those.
 */
export function parseEndpoint(text: string): { host: string; port: number | null } | null {
  const s = text.trim();
  if (s === '') return null;
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(s);
  if (bracketed) {
    const addr = parseIpAddress(bracketed[1]);
    if (!addr || addr.family !== 6) return null;
    return checkPort(addr.text, bracketed[2]);
  }
  if (s.includes(':') && s.indexOf(':') !== s.lastIndexOf(':')) {
    const addr = parseIpAddress(s);
    return addr && addr.family === 6 ? { host: addr.text, port: null } : null;
  }
  const [host = '', port] = s.split(':');
  if (parseIpAddress(host) === null && (!isHostname(host) || /^[\d.]+$/.test(host))) return null;
  if (port !== undefined && !/^\d{1,5}$/.test(port)) return null;
  return checkPort(host, port);
}

function checkPort(host: string, port: string | undefined): { host: string; port: number | null } | null {
  if (port === undefined) return { host, port: null };
  const n = Number(port);
  return n >= 1 && n <= 65535 ? { host, port: n } : null;
}
