/**
 * Errors of the /v0 client. They carry what a person needs (method, path, status, the server's
 * field messages) and nothing else: never the request body, headers or token.
 */
import type { FieldErrors } from '../model/errors.js';

export class ApiError extends Error {
  override readonly name = 'ApiError';

  constructor(
    readonly method: string,
    readonly path: string,
    /** HTTP status, or null when no answer came (network error, timeout). */
    readonly status: number | null,
    /** The server's 422 map (`errors`), normalised to field -> messages; empty otherwise. */
    readonly errors: FieldErrors,
    /** A short reason: the server's `error` text, an auth reason, or the network error code. */
    readonly reason: string,
  ) {
    super(describe(method, path, status, errors, reason));
  }

  get isNotFound(): boolean {
    return this.status === 404;
  }

  get isUnauthorized(): boolean {
    return this.status === 401 || this.status === 403;
  }
}

function describe(method: string, path: string, status: number | null, errors: FieldErrors, reason: string): string {
  const where = `${method} ${path}`;
  if (status === null) return `${where}: no answer from the server (${reason})`;
  const fields = Object.entries(errors).flatMap(([field, messages]) => messages.map((m) => (field === 'base' ? m : `${field} ${m}`)));
  if (status === 401) return `${where}: 401 the server refused the token (${fields.join('; ') || reason}); check --token / NETFORM_TOKEN`;
  const detail = fields.length > 0 ? fields.join('; ') : reason;
  return `${where}: ${status}${detail ? ` ${detail}` : ''}`;
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
        errors[field] = list.filter((m) => m !== null && m !== undefined).map((m) => (typeof m === 'string' ? m : JSON.stringify(m)));
      }
    } else if (typeof raw === 'string') {
      reason = raw;
    }
    const error = (body as Record<string, unknown>).error;
    if (typeof error === 'string') reason = error;
  }
  return { errors, reason };
}
