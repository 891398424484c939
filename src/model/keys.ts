/**
 * Natural keys (docs/netform.md section 2): how a live object is matched to a declared one
 * without a state file. Values are normalised first so that spellings the server treats as the
 * same never look like a change.
 */
import { parseCidrOrAddress } from './net.js';
import { normalizePortRange } from './ports.js';
import { allowedIpKey, dnsEntryKey } from './device.js';
import { flatText } from './flat-text.js';

export function userKey(email: string): string {
  return email.trim().toLowerCase();
}

export function deviceKey(ownerEmail: string, name: string): string {
  return deviceKeyOfOwnerKey(userKey(ownerEmail), name);
}

/** deviceKey with the owner's key already at hand (userKey of its email). */
export function deviceKeyOfOwnerKey(ownerKey: string, name: string): string {
  // Flat: keys are hashed and compared by every index, and the indexes keep them for the whole run.
  return flatText(`${ownerKey}/${name.trim()}`);
}

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
/** IPv4 text already in canonical form (no leading zeros, optional /0../32 without leading zeros). */
const CANONICAL_IPV4 = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}(?:/(?:3[0-2]|[12]?\\d))?$`);

/** Canonical destination: canonical address text, always with a prefix (`10.0.0.1` -> `10.0.0.1/32`). */
export function normalizeDestination(destination: string): string {
  // Fast path for text that is canonical already (the common case): a plan keys tens of
  // thousands of rules, and full parsing into integers costs microseconds each.
  if (CANONICAL_IPV4.test(destination)) return destination.includes('/') ? destination : `${destination}/32`;
  return parseCidrOrAddress(destination)?.canonical ?? destination.trim();
}

export interface RuleKeyParts {
  ownerEmail: string | null;
  action: string;
  destination: string;
  port_type: string | null;
  port_range: string | null;
}

export function ruleKey(rule: RuleKeyParts): string {
  return ruleKeyOfOwnerKey(rule.ownerEmail === null ? null : userKey(rule.ownerEmail), rule);
}

/** ruleKey with the owner's key already at hand (userKey of its email; null for a global rule). */
export function ruleKeyOfOwnerKey(ownerKey: string | null, rule: Omit<RuleKeyParts, 'ownerEmail'>): string {
  const owner = ownerKey === null ? '*' : ownerKey;
  const ports =
    rule.port_type === null && (rule.port_range === null || rule.port_range === '')
      ? 'any'
      : `${(rule.port_type ?? '').toLowerCase()}:${normalizePortRange(rule.port_range) ?? ''}`;
  return flatText(`${owner}|${rule.action}|${normalizeDestination(rule.destination)}|${ports}`);
}

/** A set-valued list (allowed_ips, dns) in a normal form that compares equal as a set. */
export function normalizeAllowedIps(list: readonly string[] | null | undefined): string[] {
  return [...new Set((list ?? []).map((s) => allowedIpKey(s.trim()) ?? s.trim()))].sort();
}

export function normalizeDns(list: readonly string[] | null | undefined): string[] {
  return [...new Set((list ?? []).map((s) => dnsEntryKey(s.trim()) ?? s.trim()))].sort();
}
