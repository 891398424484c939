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

/**
 * What was wrong with an answer that came, as a code and its values (src/views/api-error.ts words
 * it): not a /v0 API (`no_collection` … `content_type`), an object the client cannot read
 * (`missing_field`, `not_an_object`), or a server without `/v0/configuration`.
 */
export type AnswerProblem =
  | { code: 'no_collection'; collection: string }
  | { code: 'not_a_list'; collection: string }
  | { code: 'invalid_json' }
  | { code: 'no_data' }
  | { code: 'redirect' }
  | { code: 'html' }
  | { code: 'content_type'; type: string | null }
  | { code: 'missing_field'; object: string; field: string }
  | { code: 'not_an_object'; object: string }
  | { code: 'no_configuration' };

export interface ApiErrorDetails {
  /** The server's base URL (no credentials), named in messages about the network. */
  server?: string;
  problem?: NetworkProblem;
  /** What was wrong with the answer, when one came. */
  answer?: AnswerProblem;
  /** Per-request timeout in ms, for the timeout message. */
  timeoutMs?: number;
  /** The server's Retry-After, in ms. */
  retryAfterMs?: number | null;
}

/** Everything an ApiError's message is made of: what a view words. */
export interface ApiErrorFacts {
  method: string;
  path: string;
  status: number | null;
  errors: FieldErrors;
  reason: string;
  server: string | undefined;
  problem: NetworkProblem | undefined;
  answer: AnswerProblem | undefined;
  timeoutMs: number | undefined;
}

/**
 * Words an ApiError's facts as its message. The command line passes its view (src/views/api-error.ts,
 * which names its flags); a program using the client gets `plainDescription`.
 */
export type DescribeApiError = (facts: ApiErrorFacts) => string;

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly server: string | undefined;
  readonly problem: NetworkProblem | undefined;
  readonly answer: AnswerProblem | undefined;
  readonly retryAfterMs: number | null;
  readonly timeoutMs: number | undefined;

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
    /** How the message is worded (the client's `describeError`). */
    readonly describe: DescribeApiError = plainDescription,
  ) {
    super();
    this.server = details.server;
    this.problem = details.problem;
    this.answer = details.answer;
    this.retryAfterMs = details.retryAfterMs ?? null;
    this.timeoutMs = details.timeoutMs;
    this.message = describe(this.facts);
  }

  /** What the message is made of. */
  get facts(): ApiErrorFacts {
    const { method, path, status, errors, reason, server, problem, answer, timeoutMs } = this;
    return { method, path, status, errors, reason, server, problem, answer, timeoutMs };
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

/**
 * An ApiError's message for programs, from its codes and values: `GET /v0/users: refused
 * (ECONNREFUSED) at https://vpn.example.com`, `POST /v0/devices: 422 name has already been taken`.
 */
export function plainDescription(facts: ApiErrorFacts): string {
  const fields = Object.entries(facts.errors).flatMap(([field, messages]) =>
    messages.map((m) => (field === 'base' || m.startsWith(`${field} `) ? m : `${field} ${m}`)),
  );
  const what = [
    facts.status,
    facts.problem,
    facts.answer?.code,
    fields.length > 0 ? fields.join('; ') : undefined,
    facts.reason ? `(${facts.reason})` : undefined,
    facts.server && facts.status === null ? `at ${facts.server}` : undefined,
  ].filter((p) => p !== undefined && p !== null);
  return `${facts.method} ${facts.path}: ${what.join(' ')}`;
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
