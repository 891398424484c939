/**
 * IP address and CIDR parsing for every rule that involves addresses. Parsing is done by
 * ipaddr.js; this module adds the strictness the contract needs (dotted-quad IPv4 only, no zone
 * ids, prefix lengths within the family) and the integer ranges that overlap and allocation use.
 */
import ipaddr from 'ipaddr.js';

export type IpFamily = 4 | 6;

export interface ParsedAddress {
  family: IpFamily;
  /** The address as an unsigned integer. */
  value: bigint;
  /** Canonical text: dotted quad, or RFC 5952 compressed IPv6. */
  text: string;
}

export interface ParsedCidr {
  family: IpFamily;
  /** The address as written (host bits kept, as the server echoes destinations as given). */
  address: bigint;
  prefix: number;
  /** First and last address of the block the prefix describes. */
  start: bigint;
  end: bigint;
  /** Whether the text carried an explicit `/prefix`. */
  hadPrefix: boolean;
  /** Canonical text `address/prefix` (address canonical, host bits kept). */
  canonical: string;
  /** Canonical text of the block: network address `/prefix`. */
  network: string;
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

export function parseIpAddress(text: unknown): ParsedAddress | null {
  if (typeof text !== 'string') return null;
  const s = text.trim();
  if (s === '' || s.includes('%')) return null;
  try {
    if (s.includes(':')) {
      if (!ipaddr.IPv6.isValid(s)) return null;
      const addr = ipaddr.IPv6.parse(s);
      return { family: 6, value: bytesToBigint(addr.toByteArray()), text: addr.toString() };
    }
    if (!ipaddr.IPv4.isValidFourPartDecimal(s)) return null;
    const addr = ipaddr.IPv4.parse(s);
    return { family: 4, value: bytesToBigint(addr.toByteArray()), text: addr.toString() };
  } catch {
    return null;
  }
}

export function formatAddress(family: IpFamily, value: bigint): string {
  if (family === 4) return ipaddr.fromByteArray(bigintToBytes(value, 4)).toString();
  return ipaddr.fromByteArray(bigintToBytes(value, 16)).toString();
}

/** Parses `address` or `address/prefix`. A bare address is a block of one (/32 or /128). */
export function parseCidrOrAddress(text: unknown): ParsedCidr | null {
  if (typeof text !== 'string') return null;
  const s = text.trim();
  const slash = s.indexOf('/');
  const addressText = slash === -1 ? s : s.slice(0, slash);
  const address = parseIpAddress(addressText);
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
  return {
    family: address.family,
    address: address.value,
    prefix,
    start,
    end,
    hadPrefix: slash !== -1,
    canonical: `${address.text}/${prefix}`,
    network: `${formatAddress(address.family, start)}/${prefix}`,
  };
}

const DOTTED_CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?$/;

/**
 * Only the block of `address` or `address/prefix` (family, first and last address), for code that
 * parses many destinations and needs no canonical text. Same acceptance as parseCidrOrAddress.
 */
export function cidrRange(text: string): { family: IpFamily; start: bigint; end: bigint } | null {
  const m = DOTTED_CIDR.exec(text);
  if (m) {
    const octets = [m[1]!, m[2]!, m[3]!, m[4]!];
    const prefix = m[5] === undefined ? 32 : Number(m[5]);
    // Leading zeros and out-of-range values take the full parser's path (and its verdict).
    if (
      prefix <= 32 &&
      octets.every((o) => (o.length === 1 || o[0] !== '0') && Number(o) <= 255) &&
      (m[5] === undefined || m[5].length === 1 || m[5][0] !== '0')
    ) {
      const value = octets.reduce((v, o) => v * 256 + Number(o), 0);
      const size = 2 ** (32 - prefix);
      const start = value - (value % size);
      return { family: 4, start: BigInt(start), end: BigInt(start + size - 1) };
    }
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
