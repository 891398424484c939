/**
 * Errors of the /v0 client. They carry what a person needs (method, path, the server's URL,
 * status, the server's field messages, what kind of network trouble) and nothing else: never the
 * request body, headers or token.
 */
import type { FieldErrors } from '../model/errors.js';

/**
 * Why no usable answer came, when it was not an HTTP status: each has its own message and advice.
 * `not_v0`: an answer came, but not from a /v0 API (an HTML page, a 404 on a collection, no JSON).
 */
export type NetworkProblem = 'refused' | 'host_not_found' | 'tls' | 'timeout' | 'reset' | 'not_v0' | 'other';

export interface ApiErrorDetails {
  /** The server's base URL (no credentials), named in messages about the network. */
  server?: string;
  problem?: NetworkProblem;
  /** Per-request timeout in ms, for the timeout message. */
  timeoutMs?: number;
  /** The server's Retry-After, in ms. */
  retryAfterMs?: number | null;
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly server: string | undefined;
  readonly problem: NetworkProblem | undefined;
  readonly retryAfterMs: number | null;

  constructor(
    readonly method: string,
    readonly path: string,
    /** HTTP status, or null when no answer came (network error, timeout). */
    readonly status: number | null,
    /** The server's 422 map (`errors`), normalised to field -> messages; empty otherwise. */
    readonly errors: FieldErrors,
    /** A short reason: the server's `error` text, an auth reason, or the network error code. */
    readonly reason: string,
    details: ApiErrorDetails = {},
  ) {
    super(describe(method, path, status, errors, reason, details));
    this.server = details.server;
    this.problem = details.problem;
    this.retryAfterMs = details.retryAfterMs ?? null;
  }

  get isNotFound(): boolean {
    return this.status === 404 && this.problem !== 'not_v0';
  }

  get isUnauthorized(): boolean {
    return this.status === 401 || this.status === 403;
  }

  /** The server did not answer at all (refused, timed out, dropped): it may be down. */
  get serverUnreachable(): boolean {
    return (
      this.problem === 'refused' ||
      this.problem === 'timeout' ||
      this.problem === 'reset' ||
      this.problem === 'host_not_found'
    );
  }
}

/** A short phrase for a network problem, as retry lines show it (`connection refused`). */
export function problemPhrase(problem: NetworkProblem, reason: string): string {
  switch (problem) {
    case 'refused':
      return 'connection refused';
    case 'host_not_found':
      return 'host not found';
    case 'tls':
      return `TLS failure (${reason})`;
    case 'timeout':
      return 'no answer in time';
    case 'reset':
      return `connection dropped (${reason})`;
    case 'not_v0':
      return 'not a /v0 API';
    default:
      return reason;
  }
}

function seconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

function describe(
  method: string,
  path: string,
  status: number | null,
  errors: FieldErrors,
  reason: string,
  details: ApiErrorDetails,
): string {
  const where = `${method} ${path}`;
  const server = details.server ?? 'the server';
  switch (details.problem) {
    case 'refused':
      return `${where}: connection refused by ${server}: nothing is listening there. Is the server running, and is --url (NETFORM_URL) right?`;
    case 'host_not_found':
      return `${where}: host not found: ${hostOf(server)} does not resolve (${reason}). Check the host name in --url (NETFORM_URL)`;
    case 'tls':
      if (PLAIN_HTTP.test(reason))
        return `${where}: the server speaks plain HTTP: use http:// in --url (NETFORM_URL) (${reason}: the answer to the TLS handshake was not TLS)`;
      return `${where}: TLS failure talking to ${server} (${reason}). If the server uses a private or self-signed certificate, pass --ca-file CA.pem; --insecure skips verification`;
    case 'timeout':
      return `${where}: no answer from ${server} within ${details.timeoutMs !== undefined ? seconds(details.timeoutMs) : 'the timeout'}. The server or a proxy in front of it is not answering; --timeout SECONDS waits longer`;
    case 'reset':
      return `${where}: ${server} dropped the connection (${reason})`;
    case 'not_v0':
      return `${where}: ${server} answered${status !== null ? ` ${status}` : ''}, but this does not look like a /v0 API (${reason}). --url must be the server's base URL, such as https://vpn.example.com`;
    case 'other':
      return `${where}: no answer from ${server} (${reason})`;
    default:
      break;
  }
  if (status === null) return `${where}: no answer from ${server} (${reason})`;
  const fields = Object.entries(errors).flatMap(([field, messages]) =>
    messages.map((m) => (field === 'base' || m.startsWith(`${field} `) ? m : `${field} ${m}`)),
  );
  if (status === 401)
    return `${where}: 401 the token is unknown, revoked or expired (or its owner is no longer an admin) (${fields.join('; ') || reason}); check --token / NETFORM_TOKEN`;
  const detail = fields.length > 0 ? fields.join('; ') : reason;
  return `${where}: ${status}${detail ? ` ${detail}` : ''}`;
}

/** OpenSSL's words for a TLS handshake answered by a plain-HTTP server. */
const PLAIN_HTTP = /^EPROTO$|wrong version number|packet length too long|http request/i;

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}

/**
 * Reads an error body of either shape the servers use: `{"errors": {"field": ["msg"]}}` (ours and
 * upstream 422s), `{"errors": {"auth": "unauthenticated"}}` (upstream 401: strings, not lists),
 * `{"error": "not_found"}`, or a body that is not JSON at all (a proxy's HTML page).
 */
export function parseErrorBody(text: string): { errors: FieldErrors; reason: string } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { errors: {}, reason: '' };
  }
  const errors: FieldErrors = {};
  let reason = '';
  if (typeof body === 'object' && body !== null) {
    const raw = (body as Record<string, unknown>).errors;
    if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
      for (const [field, value] of Object.entries(raw)) {
        const list = Array.isArray(value) ? value : [value];
        errors[field] = list
          .filter((m) => m !== null && m !== undefined)
          .map((m) => (typeof m === 'string' ? m : JSON.stringify(m)));
      }
    } else if (typeof raw === 'string') {
      reason = raw;
    }
    const error = (body as Record<string, unknown>).error;
    if (typeof error === 'string') reason = error;
  }
  return { errors, reason };
}

/**
 * An error body as the client keeps it: every occurrence of `secret` (the API token) cut out of
 * its reason, field names and messages, since a server or proxy may echo the request's
 * Authorization header in its answer; and each line break written as `\u000a`, so that a value
 * from the server stays on the line of the message that quotes it.
 */
export function fromServer(
  body: { errors: FieldErrors; reason: string },
  secret: string,
): { errors: FieldErrors; reason: string } {
  const cut = (text: string) =>
    (secret.length >= 4 ? text.split(secret).join('(secret)') : text).replace(
      /[\n\r\u2028\u2029]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
  const errors: FieldErrors = {};
  for (const [field, messages] of Object.entries(body.errors)) errors[cut(field)] = messages.map(cut);
  return { errors, reason: cut(body.reason) };
}
