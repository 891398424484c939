/**
 * The client's retry policy as pure functions: which failures are worth another attempt, how long
 * to wait before it (src/views/api-error.ts words each retry). No clock, no I/O.
 */
import type { ApiError } from './errors.js';

export const RETRY_STATUS_CODES = new Set([408, 429, 500, 502, 503, 504, 521, 522, 524]);

export interface RetryPolicy {
  /** Retries after the first attempt. */
  retries: number;
  /** First backoff delay; doubles on each retry, with jitter. */
  baseMs: number;
  /** Longest backoff delay. */
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the call fails. */
  maxRetryAfterMs: number;
}

/** Whether another attempt could help: network trouble other than a bad host or TLS, 429, 5xx. */
export function isRetryable(error: ApiError): boolean {
  if (error.problem === 'host_not_found' || error.problem === 'tls' || error.problem === 'not_v0') return false;
  if (error.status === null) return true;
  return RETRY_STATUS_CODES.has(error.status);
}

/**
 * Milliseconds to wait before retry number `retry` (1-based): the server's Retry-After when it
 * gave one, else exponential backoff with jitter (`random` in [0, 1)). Null: do not retry.
 */
export function retryDelay(
  retry: number,
  policy: RetryPolicy,
  retryAfterMs: number | null,
  random: number,
): number | null {
  if (retry > policy.retries) return null;
  if (retryAfterMs !== null) return retryAfterMs > policy.maxRetryAfterMs ? null : retryAfterMs;
  const backoff = Math.min(policy.baseMs * 2 ** (retry - 1), policy.maxDelayMs);
  return Math.round(backoff / 2 + random * (backoff / 2));
}

/** `Retry-After` as milliseconds: seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(header: string | undefined, now: number): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

export interface RetryEvent {
  method: string;
  path: string;
  delayMs: number;
  /** This retry's number (1-based) and the most there can be. */
  retry: number;
  retries: number;
  error: ApiError;
}
